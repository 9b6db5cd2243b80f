//! Reading and replacing the crawl's small state files (`STATE/responses`,
//! `STATE/policy`, `STATE/last-request`): a capped read that names the file in its errors, and a
//! replacement written beside the file and renamed over it, so a kill
//! leaves the old content or the new, never a torn file.

use std::io::{Read, Write};
use std::path::Path;

use crate::CrawlError;

/// A [`CrawlError::State`] about `path`.
pub fn bad(path: &Path, reason: String) -> CrawlError {
    CrawlError::State {
        path: path.display().to_string(),
        reason,
    }
}

/// The first `max` bytes of `path`, `None` when it does not exist.
pub fn read(path: &Path, max: u64) -> Result<Option<Vec<u8>>, CrawlError> {
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(bad(path, format!("unreadable: {e}"))),
    };
    let mut bytes = Vec::new();
    f.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(path, format!("unreadable: {e}")))?;
    Ok(Some(bytes))
}

/// Replaces `path` with `bytes` (written to `path.tmp`, then renamed over
/// it; with `sync`, the file and its directory are synced too). A failed
/// write removes the temporary file and leaves `path` as it was.
pub fn replace(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if sync {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)?;
        if sync && let Some(dir) = path.parent() {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The number a one-number state file holds: decimal digits and an
/// optional newline, shorter than `max` bytes; `what` names it in errors.
pub fn parse_number(bytes: &[u8], max: u64, what: &str) -> Result<u64, String> {
    if bytes.len() as u64 >= max {
        return Err(format!("longer than {} bytes", max - 1));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "not text".to_string())?;
    let digits = text.strip_suffix('\n').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("not {what}: {text:?}"));
    }
    digits
        .parse()
        .map_err(|_| format!("out of range: {digits}"))
}
