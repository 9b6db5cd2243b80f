//! The page budget of a crawl (`--max-pages`) across its runs.
//!
//! `STATE/responses` holds the page responses received by every earlier run
//! with this state directory, as one decimal count and a newline (`1234\n`).
//! A run goes on from that count, so rerunning the same command after a stop
//! or a kill continues the budget where it was (as the per-host budgets do,
//! [`crate::traps`]) instead of granting a fresh one: a crawl stopped by its
//! budget does nothing more when rerun; a larger `--max-pages` lets it go on.
//!
//! Writes: the file is replaced (the count written to `responses.tmp`, then
//! renamed over it) at most every [`SAVE_EVERY`] while responses arrive, and
//! once more, with an fsync, when the run ends. A rename is atomic, so a kill
//! leaves the old count or the new one, never a torn one. A SIGKILL can
//! shift the count a little: the responses of its last [`SAVE_EVERY`] are
//! not in it (those pages are stored and not fetched again, so the next run
//! may fetch that many more), and a fetch in flight at the kill is counted
//! and fetched again when the crawl resumes (so it may fetch that many fewer).
//! A failed write (a full disk) is logged and the run goes on: the budget is
//! advisory, and the frontier and the page store report the cause.
//!
//! A file that is not a count is refused with [`CrawlError::State`] and left
//! as it is (it may be the user's to inspect or delete).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::{CrawlError, state_file};

/// Name of the count file in the state directory.
pub const FILE: &str = "responses";
/// Longest time a run keeps new responses out of the file.
pub const SAVE_EVERY: Duration = Duration::from_millis(250);
/// Longest file read: a count and a newline fit in 21 bytes.
const MAX_FILE: u64 = 64;

/// Responses counted by earlier runs, and this run's saves.
pub struct Budget {
    path: PathBuf,
    earlier: u64,
    /// Count last written, and when.
    saved: Mutex<(u64, Instant)>,
}

impl Budget {
    /// Reads `dir/responses` (absent: a crawl with no earlier run, 0).
    pub fn open(dir: &Path) -> Result<Budget, CrawlError> {
        let path = dir.join(FILE);
        let earlier = match state_file::read(&path, MAX_FILE)? {
            Some(bytes) => parse_count(&bytes).map_err(|r| state_file::bad(&path, r))?,
            None => 0,
        };
        Ok(Budget {
            path,
            earlier,
            saved: Mutex::new((earlier, Instant::now())),
        })
    }

    /// Responses received by earlier runs.
    pub fn earlier(&self) -> u64 {
        self.earlier
    }

    /// Writes `total` if it changed and the last write is [`SAVE_EVERY`] old.
    pub fn save_soon(&self, total: u64) {
        let Ok(mut saved) = self.saved.lock() else {
            return;
        };
        if saved.0 == total || saved.1.elapsed() < SAVE_EVERY {
            return;
        }
        *saved = (total, Instant::now());
        if let Err(e) = self.write(total, false) {
            tracing::warn!("{}: {e}", self.path.display());
        }
    }

    /// Writes `total` and syncs it (the end of a run).
    pub fn save_now(&self, total: u64) {
        if let Ok(mut saved) = self.saved.lock() {
            *saved = (total, Instant::now());
        }
        if let Err(e) = self.write(total, true) {
            tracing::warn!("{}: {e}", self.path.display());
        }
    }

    fn write(&self, total: u64, sync: bool) -> std::io::Result<()> {
        state_file::replace(&self.path, format!("{total}\n").as_bytes(), sync)
    }
}

/// The count a budget file holds: decimal digits and an optional newline,
/// at most 63 bytes (what [`Budget`] writes is `"{count}\n"`).
pub fn parse_count(bytes: &[u8]) -> Result<u64, String> {
    state_file::parse_number(bytes, MAX_FILE, "a count of responses")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_directory_has_spent_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Budget::open(dir.path()).unwrap().earlier(), 0);
        assert!(!dir.path().join(FILE).exists(), "opening writes nothing");
    }

    #[test]
    fn a_saved_count_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        Budget::open(dir.path()).unwrap().save_now(1234);
        assert_eq!(std::fs::read(dir.path().join(FILE)).unwrap(), b"1234\n");
        assert_eq!(Budget::open(dir.path()).unwrap().earlier(), 1234);
        assert!(!dir.path().join("responses.tmp").exists());
        // A file written by hand without its newline is a count too.
        std::fs::write(dir.path().join(FILE), "77").unwrap();
        assert_eq!(Budget::open(dir.path()).unwrap().earlier(), 77);
        std::fs::write(dir.path().join(FILE), u64::MAX.to_string()).unwrap();
        assert_eq!(Budget::open(dir.path()).unwrap().earlier(), u64::MAX);
    }

    #[test]
    fn saves_are_spaced_but_the_last_one_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let b = Budget::open(dir.path()).unwrap();
        b.save_soon(5); // within SAVE_EVERY of the open: not written
        assert!(!dir.path().join(FILE).exists());
        std::thread::sleep(SAVE_EVERY + Duration::from_millis(20));
        b.save_soon(6);
        assert_eq!(Budget::open(dir.path()).unwrap().earlier(), 6);
        b.save_soon(9); // too soon again
        assert_eq!(Budget::open(dir.path()).unwrap().earlier(), 6);
        b.save_now(9);
        assert_eq!(Budget::open(dir.path()).unwrap().earlier(), 9);
    }

    #[test]
    fn a_file_that_is_not_a_count_is_refused_and_kept() {
        let cases: &[&[u8]] = &[
            b"",
            b"\n",
            b"-1\n",
            b"+5\n",
            b" 12\n",
            b"12 \n",
            b"12\n\n",
            b"1e3\n",
            b"0x10\n",
            b"12\r\n",
            b"\xff\xfe1\n",
            b"99999999999999999999999\n",
            b"caf\xc3\xa9\n",
            &[b'7'; 100],
        ];
        for bytes in cases {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(FILE);
            std::fs::write(&path, bytes).unwrap();
            match Budget::open(dir.path()) {
                Err(CrawlError::State { path: p, reason }) => {
                    assert!(p.ends_with(FILE), "{p}");
                    assert!(!reason.is_empty());
                }
                Err(e) => panic!("{bytes:?}: wrong error {e}"),
                Ok(b) => panic!("{bytes:?} read as {}", b.earlier()),
            }
            assert_eq!(&std::fs::read(&path).unwrap(), bytes, "left as it was");
        }
    }

    #[test]
    fn a_directory_in_place_of_the_file_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(FILE)).unwrap();
        match Budget::open(dir.path()) {
            Err(CrawlError::State { path, reason }) => {
                assert!(
                    path.ends_with(FILE) && reason.contains("unreadable"),
                    "{reason}"
                );
            }
            Err(e) => panic!("wrong error {e}"),
            Ok(b) => panic!("read as {}", b.earlier()),
        }
    }

    #[test]
    fn a_failed_write_leaves_the_old_count_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let b = Budget::open(dir.path()).unwrap();
        b.save_now(3);
        // The rename cannot replace a directory: the write fails.
        std::fs::remove_file(dir.path().join(FILE)).unwrap();
        std::fs::create_dir(dir.path().join(FILE)).unwrap();
        b.save_now(8);
        assert!(dir.path().join(FILE).is_dir());
        assert!(!dir.path().join("responses.tmp").exists());
    }
}
