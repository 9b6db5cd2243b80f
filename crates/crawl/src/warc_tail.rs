//! Finds where the complete records of an existing WARC file end, so a
//! resumed crawl appends after them instead of after a torn one.
//!
//! A crawl killed while writing (SIGKILL, power loss, a full disk) can leave
//! a record cut short at the end of its `--warc` file: the kernel may stop a
//! large `write` part way when the process is killed. Records appended after
//! it would be read as the rest of its block, and every reader (`warcio`)
//! would stop there. [`scan`] walks the file record by record, reading only
//! the headers and seeking over the blocks:
//!
//! ```text
//! WARC/1.1\r\n  (name: value\r\n)*  \r\n   block (Content-Length bytes)   \r\n\r\n
//! └──────────── header ≤ MAX_HEADER ──────┘
//! ```
//!
//! and classifies what follows the last complete record:
//! - nothing: [`Tail::Clean`];
//! - a prefix of a record (its header unfinished but starting as `WARC/`
//!   does, or its block or the closing `\r\n\r\n` cut by the end of the
//!   file): [`Tail::Torn`], which the writer cuts off;
//! - anything else (a file that is not an uncompressed WARC, a record whose
//!   length does not end at `\r\n\r\n`): [`TailError`], and the file is left
//!   as it is: only bytes that can be a torn write of ours are ever removed.
//!
//! Cost: one header read (at most [`MAX_HEADER`] bytes) and one seek per
//! record; memory: one header.

use std::io::{self, Read, Seek, SeekFrom};

/// Longest record header accepted (ours are a few hundred bytes; a target
/// URI is capped by the crawl's URL length cap).
pub const MAX_HEADER: usize = 1 << 20;

/// Bytes that end every record after its block.
const TRAILER: &[u8] = b"\r\n\r\n";

/// What follows the last complete record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// The file ends with a complete record (or is empty).
    Clean,
    /// A record cut short starts at `complete` (the length of the complete
    /// part); `len` is the file's length.
    Torn {
        /// Bytes of complete records.
        complete: u64,
        /// Length of the file.
        len: u64,
    },
}

/// Why a file cannot be appended to.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TailError {
    /// The bytes at `offset` cannot start or continue a record.
    #[error("not an uncompressed WARC file: {reason} at byte {offset}")]
    Malformed {
        /// Where the unreadable record starts.
        offset: u64,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Reading failed.
    #[error("{0}")]
    Io(String),
}

impl From<io::Error> for TailError {
    fn from(e: io::Error) -> TailError {
        TailError::Io(e.to_string())
    }
}

/// Scans `file` (of `len` bytes) from its start; see the module docs.
pub fn scan<F: Read + Seek>(file: &mut F, len: u64) -> Result<Tail, TailError> {
    let mut pos = 0u64;
    let mut head = Vec::new();
    while pos < len {
        file.seek(SeekFrom::Start(pos))?;
        let malformed = |reason| TailError::Malformed {
            offset: pos,
            reason,
        };
        let Some(head_len) = read_header(file, &mut head)? else {
            // The file ends inside the header: torn if it could be one.
            let magic = b"WARC/";
            let n = head.len().min(magic.len());
            if head[..n] != magic[..n] {
                return Err(malformed("no WARC/ version line"));
            }
            if head.len() >= MAX_HEADER {
                return Err(malformed("header longer than 1 MiB"));
            }
            return Ok(Tail::Torn { complete: pos, len });
        };
        let block = content_length(&head[..head_len]).map_err(malformed)?;
        let end = pos
            .checked_add(head_len as u64)
            .and_then(|p| p.checked_add(block))
            .and_then(|p| p.checked_add(TRAILER.len() as u64))
            .ok_or_else(|| malformed("Content-Length out of range"))?;
        if end > len {
            // Cut inside the block or the trailer: what is there of the
            // trailer must match it.
            let block_end = end - TRAILER.len() as u64;
            if block_end < len {
                let mut t = vec![0u8; (len - block_end) as usize];
                file.seek(SeekFrom::Start(block_end))?;
                file.read_exact(&mut t)?;
                if !TRAILER.starts_with(&t) {
                    return Err(malformed("block not followed by CRLF CRLF"));
                }
            }
            return Ok(Tail::Torn { complete: pos, len });
        }
        let mut t = [0u8; 4];
        file.seek(SeekFrom::Start(end - TRAILER.len() as u64))?;
        file.read_exact(&mut t)?;
        if t != TRAILER {
            return Err(malformed("block not followed by CRLF CRLF"));
        }
        pos = end;
    }
    Ok(Tail::Clean)
}

/// Reads from the current position into `head` up to and including the
/// blank line that ends a record header. `Some(length)` when it was found;
/// `None` when the file ended first or [`MAX_HEADER`] bytes held none
/// (`head` then holds what was read).
fn read_header<F: Read>(file: &mut F, head: &mut Vec<u8>) -> io::Result<Option<usize>> {
    head.clear();
    let mut buf = [0u8; 4096];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        // Search from 3 bytes back: the blank line can span two reads.
        let from = head.len().saturating_sub(3);
        head.extend_from_slice(&buf[..n]);
        if let Some(i) = head[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(Some(from + i + 4));
        }
        if head.len() >= MAX_HEADER {
            return Ok(None);
        }
    }
}

/// The version line's check and the `Content-Length` of a complete header.
fn content_length(head: &[u8]) -> Result<u64, &'static str> {
    let text = std::str::from_utf8(head).map_err(|_| "header not UTF-8")?;
    let mut lines = text.split("\r\n");
    if !lines.next().is_some_and(|l| l.starts_with("WARC/")) {
        return Err("no WARC/ version line");
    }
    let mut found = None;
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or("header line without a colon")?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            let v = value.trim();
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err("Content-Length not a number");
            }
            found = Some(v.parse().map_err(|_| "Content-Length out of range")?);
        }
    }
    found.ok_or("no Content-Length")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn record(kind: &str, block: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.1\r\nWARC-Type: {kind}\r\ncontent-length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(TRAILER);
        r
    }

    fn scan_bytes(b: &[u8]) -> Result<Tail, TailError> {
        scan(&mut Cursor::new(b), b.len() as u64)
    }

    /// Three records, one with a block holding CRLF CRLF and "WARC/1.1".
    fn file() -> (Vec<u8>, Vec<u64>) {
        let blocks: [&[u8]; 3] = [
            b"software: t\r\n",
            b"HTTP/1.1 200 OK\r\n\r\nWARC/1.1\r\n\r\n<p>",
            b"",
        ];
        let (mut f, mut ends) = (Vec::new(), vec![0]);
        for (i, b) in blocks.iter().enumerate() {
            f.extend(record(&format!("k{i}"), b));
            ends.push(f.len() as u64);
        }
        (f, ends)
    }

    #[test]
    fn every_cut_is_torn_at_the_last_complete_record() {
        let (f, ends) = file();
        for cut in 0..=f.len() {
            let complete = *ends.iter().rev().find(|&&e| e <= cut as u64).unwrap();
            let want = if complete == cut as u64 {
                Tail::Clean
            } else {
                Tail::Torn {
                    complete,
                    len: cut as u64,
                }
            };
            assert_eq!(scan_bytes(&f[..cut]), Ok(want), "cut at {cut}");
        }
    }

    #[test]
    fn foreign_or_damaged_files_are_errors() {
        let (f, ends) = file();
        let cases: Vec<(Vec<u8>, u64)> = vec![
            (b"hello world\n".to_vec(), 0),
            (b"WX".to_vec(), 0),
            (vec![0x1f, 0x8b, 8, 0, 0, 0], 0), // gzip: a .warc.gz
            ([f.clone(), b"garbage after".to_vec()].concat(), ends[3]),
            // Content-Length one short: the trailer is not where it says.
            (
                String::from_utf8_lossy(&f)
                    .replacen("content-length: 13", "content-length: 12", 1)
                    .into_bytes(),
                0,
            ),
            (b"WARC/1.1\r\nWARC-Type: x\r\n\r\n".to_vec(), 0),
            (b"WARC/1.1\r\nContent-Length: -1\r\n\r\n".to_vec(), 0),
            (
                b"WARC/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n".to_vec(),
                0,
            ),
            (
                b"WARC/1.1\r\nno colon\r\nContent-Length: 0\r\n\r\n\r\n\r\n".to_vec(),
                0,
            ),
            (b"WARC/1.1\r\nContent-Length: \xff\r\n\r\n".to_vec(), 0),
            (b"HTTP/1.1 200 OK\r\n\r\n".to_vec(), 0),
            // Cut inside the trailer, but what is there is not CRLF.
            (b"WARC/1.1\r\nContent-Length: 1\r\n\r\nxAB".to_vec(), 0),
        ];
        for (bytes, offset) in cases {
            match scan_bytes(&bytes) {
                Err(TailError::Malformed { offset: o, .. }) => {
                    assert_eq!(o, offset, "{:?}", String::from_utf8_lossy(&bytes))
                }
                other => panic!("{other:?} for {:?}", String::from_utf8_lossy(&bytes)),
            }
        }
    }

    #[test]
    fn a_header_without_end_is_bounded() {
        let mut f = b"WARC/1.1\r\n".to_vec();
        f.resize(MAX_HEADER + 10, b'a');
        assert!(matches!(
            scan_bytes(&f),
            Err(TailError::Malformed { offset: 0, .. })
        ));
        // Shorter: the end of the file may still be a torn header.
        f.truncate(MAX_HEADER - 10);
        assert_eq!(
            scan_bytes(&f),
            Ok(Tail::Torn {
                complete: 0,
                len: f.len() as u64
            })
        );
    }

    proptest::proptest! {
        /// Any bytes: an answer, no panic; a torn tail is always a strict
        /// suffix, and a clean or torn file's complete part scans clean.
        #[test]
        fn any_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
                     prefix in proptest::bool::ANY) {
            let bytes = if prefix { [file().0, bytes].concat() } else { bytes };
            if let Ok(Tail::Torn { complete, len }) = scan_bytes(&bytes) {
                proptest::prop_assert!(complete < len);
                proptest::prop_assert_eq!(scan_bytes(&bytes[..complete as usize]), Ok(Tail::Clean));
            }
        }
    }
}
