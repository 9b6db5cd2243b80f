//! The `--append-to FILE` log, as in `anew`: the lines of FILE count as seen,
//! new lines are appended to FILE and printed.
//!
//! Crash safety, the contract:
//!
//! ```text
//!   per chunk of input:  decide ─▶ append new lines to FILE ─▶ fsync ─▶ print
//! ```
//!
//! A line reaches the output only after it is durable in FILE. A crash at any
//! point therefore never leaves a printed line missing from FILE; a crash
//! between the fsync and the print loses at most that chunk's printout, and
//! rerunning the same input prints nothing for lines FILE already holds, so
//! reruns are idempotent: FILE never gets a line twice.
//!
//! A crash in the middle of an append can leave a torn last line (no `\n`).
//! On the next run it is read as one more line (harmless: it only marks its
//! own bytes as seen) and a `\n` is written before the first new line, so a
//! torn line never glues onto a new one. Lines are always written to FILE
//! newline-terminated, whatever the input's last line looked like.
//!
//! Cost: one `write` and one `fdatasync` per input chunk that has new lines
//! (a chunk is up to 256 KiB of input, or one burst of a slow producer).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use crate::DedupError;

/// An append-only line file, opened for preloading and appending.
#[derive(Debug)]
pub struct AppendLog {
    file: File,
    pending: Vec<u8>,
    needs_newline: bool,
}

impl AppendLog {
    /// Opens (creating if missing) `path` for reading and appending.
    /// Returns the log and a reader positioned at the start, for preloading.
    pub fn open(path: &Path) -> Result<(AppendLog, File), DedupError> {
        let created = !path.exists();
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(DedupError::AppendFile)?;
        if created {
            sync_parent_dir(path).map_err(DedupError::AppendFile)?;
        }
        let reader = file.try_clone().map_err(DedupError::AppendFile)?;
        let log = AppendLog {
            file,
            pending: Vec::new(),
            needs_newline: false,
        };
        Ok((log, reader))
    }

    /// Tells the log how the existing file ends (from the preload pass): a
    /// last byte other than `\n` means a `\n` goes before the first new line.
    pub fn set_last_byte(&mut self, last: Option<u8>) {
        self.needs_newline = last.is_some_and(|b| b != b'\n');
    }

    /// Queues `line` (with or without its `\n`) for the next commit.
    pub fn push(&mut self, line: &[u8]) {
        if self.needs_newline {
            self.pending.push(b'\n');
            self.needs_newline = false;
        }
        self.pending.extend_from_slice(line);
        if !line.ends_with(b"\n") {
            self.pending.push(b'\n');
        }
    }

    /// Writes the queued lines and makes them durable. Nothing is printed
    /// for a chunk before this returns `Ok`.
    pub fn commit(&mut self) -> Result<(), DedupError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.file
            .write_all(&self.pending)
            .and_then(|()| self.file.sync_data())
            .map_err(DedupError::AppendFile)?;
        self.pending.clear();
        Ok(())
    }
}

/// Makes a newly created file's directory entry durable, so a crash right
/// after the first append cannot lose the whole file.
fn sync_parent_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // Opening a directory for reading works on Unix; elsewhere skip.
    match File::open(dir) {
        Ok(d) => d.sync_all().or(Ok(())),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_newline_terminated_and_a_torn_tail_is_separated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seen.txt");
        std::fs::write(&path, b"old\ntorn").unwrap();
        let (mut log, _) = AppendLog::open(&path).unwrap();
        log.set_last_byte(Some(b'n'));
        log.push(b"new1\n");
        log.push(b"new2");
        log.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"old\ntorn\nnew1\nnew2\n");
    }

    #[test]
    fn open_creates_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.txt");
        let (mut log, _) = AppendLog::open(&path).unwrap();
        log.set_last_byte(None);
        log.push(b"x\n");
        log.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"x\n");
    }
}
