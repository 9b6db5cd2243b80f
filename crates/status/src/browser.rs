//! Headless Chromium helpers for the browser tests of the status page
//! (here and in `mgz-crawl`): find the binary, run it with the flags this
//! closed network needs, and read back what the page shows.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian's Chromium (or another Chrome) if installed.
pub fn chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// A headless Chromium command with a fresh profile under `profile`, no
/// background networking (nothing reaches out of the machine) and five
/// seconds of virtual time so the page's script runs before the dump.
pub fn chromium_command(bin: &Path, profile: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=5000",
    ]);
    cmd.arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// `(data-field, text shown)` pairs from a dumped DOM, in page order.
pub fn shown_fields(dom: &str) -> Vec<(String, String)> {
    dom.split("data-field=\"")
        .skip(1)
        .filter_map(|part| {
            let (name, rest) = part.split_once('"')?;
            let value = &rest[rest.find('>')? + 1..];
            Some((
                name.to_string(),
                value[..value.find('<').unwrap_or(value.len())].to_string(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn fields_are_read_from_markup_and_junk_is_ignored() {
        let dom = r#"<b data-field="totals.fetched">42</b><i data-field="broken"#;
        assert_eq!(
            super::shown_fields(dom),
            vec![("totals.fetched".into(), "42".into())]
        );
    }
}
