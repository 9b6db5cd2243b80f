//! The status page in a real browser: headless Chromium loads `/`, runs its
//! script, and every number it shows must match `/status.json`.
//!
//! Skips (saying why) only when no Chromium binary is installed; `.ci/run`
//! installs Debian's `chromium`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use mgz_status::browser::{chromium, chromium_command, shown_fields};
use mgz_status::{SeenStatus, ServeOptions, StatusReport, StatusSource, Totals, serve};

struct Fixed;

impl StatusSource for Fixed {
    fn report(&self) -> StatusReport {
        StatusReport {
            totals: Totals {
                fetched: 31_337,
                queued: 4_242,
                in_flight: 16,
                completed: 30_001,
                errors: BTreeMap::from([("http_404".to_string(), 12)]),
                robots_excluded: 77,
                duplicates_avoided: 1_999_999,
            },
            seen: SeenStatus::new("compact", 31_337, 350_000, 64.0),
            ..Default::default()
        }
    }
    fn fetched_total(&self) -> u64 {
        31_337
    }
}

#[test]
fn page_in_headless_chromium_shows_what_status_json_says() {
    let Some(bin) = chromium() else {
        eprintln!(
            "SKIPPED: no Chromium binary (install Debian's `chromium`); browser test not run"
        );
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let opts = ServeOptions {
        role: "crawl".into(),
        token: Some("tok".into()),
        ..Default::default()
    };
    let handle = rt
        .block_on(serve("127.0.0.1:0".parse().unwrap(), Arc::new(Fixed), opts))
        .unwrap();
    let url = format!("http://{}/?token=tok", handle.addr());
    let profile = tempfile_dir("profile");

    let out = chromium_command(&bin, &profile)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let shown: BTreeMap<String, String> = shown_fields(&dom).into_iter().collect();
    let expected = Fixed.report();
    let checks = [
        ("totals.fetched", expected.totals.fetched.to_string()),
        ("totals.queued", expected.totals.queued.to_string()),
        ("totals.in_flight", expected.totals.in_flight.to_string()),
        ("totals.completed", expected.totals.completed.to_string()),
        (
            "totals.robots_excluded",
            expected.totals.robots_excluded.to_string(),
        ),
        (
            "totals.duplicates_avoided",
            expected.totals.duplicates_avoided.to_string(),
        ),
        ("seen.backend", "compact".to_string()),
        ("seen.urls", "31337".to_string()),
        (
            "seen.bytes_per_url",
            expected.seen.bytes_per_url.to_string(),
        ),
        (
            "seen.hashset_bytes_per_url",
            expected.seen.hashset_bytes_per_url.to_string(),
        ),
        ("role", "crawl".to_string()),
    ];
    for (field, want) in checks {
        let got = shown.get(field).map(String::as_str).unwrap_or("<missing>");
        match (got.parse::<f64>(), want.parse::<f64>()) {
            // The page rounds to one decimal.
            (Ok(g), Ok(w)) => assert!((g - w).abs() < 0.051, "{field}: shown {got}, json {want}"),
            _ => assert_eq!(got, want, "{field} in {shown:?}"),
        }
    }
    assert!(
        dom.contains("<td>http_404</td><td>12</td>"),
        "errors table rendered"
    );

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("status-page.png");
    let status = chromium_command(&bin, &profile)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1000,1100")
        .arg(&url)
        .output()
        .unwrap();
    assert!(status.status.success(), "screenshot failed: {status:?}");
    assert!(
        std::fs::metadata(&shot)
            .map(|m| m.len() > 1000)
            .unwrap_or(false)
    );
    eprintln!("screenshot: {}", shot.display());
    rt.block_on(handle.shutdown());
}

fn tempfile_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("chromium-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
