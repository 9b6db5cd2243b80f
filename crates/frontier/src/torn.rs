//! Reporting a torn journal tail.
//!
//! fjall preallocates each journal file (`store/N.jnl`, 64 MiB of zeros) and,
//! when it reopens, truncates the file to the end of its last complete batch:
//! a batch cut short by a crash or a full disk is dropped, keeping writes
//! atomic. It says so only at `debug` level (through the `log` crate), and
//! the same truncation also trims the unused zero tail of every journal, so
//! "fjall truncated" alone does not mean data was cut.
//!
//! So before the store opens we note, per journal, where its last non-zero
//! byte ends; after it opened, a journal now shorter than that lost a torn
//! tail of real bytes, and we warn with the byte counts. Cost at open: one
//! backward read over each journal's zero tail (page-cache speed, ~10 ms for
//! an idle 64 MiB journal; a full one stops at its last block).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Bytes read per step when scanning a journal backwards.
const CHUNK: u64 = 64 << 10;

/// Journals of one store and where their data ended before recovery.
#[derive(Debug, Default)]
pub(crate) struct JournalTails {
    ends: Vec<(PathBuf, u64)>,
}

impl JournalTails {
    /// Notes the data end of every `*.jnl` file in `store_dir` (none yet: empty).
    pub(crate) fn scan(store_dir: &Path) -> JournalTails {
        let Ok(entries) = std::fs::read_dir(store_dir) else {
            return JournalTails::default();
        };
        let ends = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jnl"))
            .filter_map(|p| data_end(&p).ok().map(|end| (p, end)))
            .collect();
        JournalTails { ends }
    }

    /// Warns for each journal that recovery cut below its old data end;
    /// returns how many bytes were discarded in all.
    pub(crate) fn warn_if_truncated(&self) -> u64 {
        let mut discarded = 0;
        for (path, end) in &self.ends {
            let Ok(meta) = std::fs::metadata(path) else {
                continue; // flushed and deleted by recovery
            };
            if meta.len() < *end {
                let lost = end - meta.len();
                discarded += lost;
                tracing::warn!(
                    journal = %path.display(),
                    kept_bytes = meta.len(),
                    discarded_bytes = lost,
                    "torn journal tail: truncated to the last complete batch \
                     (the unfinished write was never acknowledged)"
                );
            }
        }
        discarded
    }
}

/// Offset just past the last non-zero byte of `path`.
fn data_end(path: &Path) -> std::io::Result<u64> {
    let mut f = File::open(path)?;
    let mut pos = f.metadata()?.len();
    let mut buf = vec![0u8; CHUNK as usize];
    let zeros = vec![0u8; CHUNK as usize];
    while pos > 0 {
        let start = pos.saturating_sub(CHUNK);
        let n = (pos - start) as usize;
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut buf[..n])?;
        // Slice equality is one memcmp: fast over the long zero tail.
        if buf[..n] == zeros[..n] {
            pos = start;
            continue;
        }
        if let Some(i) = buf[..n].iter().rposition(|&b| b != 0) {
            return Ok(start + i as u64 + 1);
        }
        pos = start;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_end_skips_the_zero_tail() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("0.jnl");
        let mut bytes = vec![0u8; 200_000];
        bytes[70_000] = 7;
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(data_end(&p).unwrap(), 70_001);
        std::fs::write(&p, vec![0u8; 1000]).unwrap();
        assert_eq!(data_end(&p).unwrap(), 0);
    }

    #[test]
    fn a_journal_cut_below_its_data_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("3.jnl");
        std::fs::write(&p, [1u8; 100]).unwrap();
        std::fs::write(dir.path().join("other"), [1u8; 100]).unwrap();
        let tails = JournalTails::scan(dir.path());
        assert_eq!(tails.ends.len(), 1);
        assert_eq!(tails.warn_if_truncated(), 0);
        File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(60)
            .unwrap();
        assert_eq!(tails.warn_if_truncated(), 40);
    }
}
