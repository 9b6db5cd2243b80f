//! Reading input as chunks of whole lines, with one reused buffer.
//!
//! ```text
//!   buf: [ line\n line\n ... line\n | partial line ........ | free    ]
//!         ^0                        ^start                  ^end      ^buf.len()
//!         `---- chunk handed out ---'
//! ```
//!
//! Each [`Chunks::next_chunk`] moves the partial tail to the front, reads
//! (one `read` call at a time) until the buffer holds at least one `\n`, and
//! hands out everything up to the last `\n`. At end of input the remaining
//! bytes (a last line without a newline) are handed out as a final chunk.
//!
//! Invariants: a chunk is never empty and always ends at a line boundary
//! (`\n`, or end of input); bytes are never altered, split or merged.
//!
//! Memory: `chunk_bytes` plus the longest line seen. A line of many
//! megabytes grows the buffer to hold it whole (the set needs its full key);
//! the buffer shrinks back afterwards so one odd line does not pin memory.
//!
//! Latency: a chunk is handed out as soon as one `read` returns a newline, so
//! an interactive producer (`tail -f | mgz dedup`) sees output per burst, not
//! per megabyte.

use std::io::{self, Read};

/// Default read size: large enough that syscalls and per-chunk work are noise
/// (~1,000 URLs per batch), small enough that the chunk, the output buffer and
/// the per-line vectors stay far below the set's size. 64 KiB instead of
/// 256 KiB took `--seen fingerprint`'s peak RSS on the 10M synthetic list from
/// 54.8 to 53.7 MB (¼ of huniq's is 54.6) at the same wall time (0.68-0.71 × huniq).
pub const DEFAULT_CHUNK_BYTES: usize = 64 << 10;

/// A reader that yields chunks of complete lines.
#[derive(Debug)]
pub struct Chunks<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    chunk_bytes: usize,
    eof: bool,
}

impl<R: Read> Chunks<R> {
    /// Wraps `inner`; `chunk_bytes` (at least 1) is the size of one read.
    pub fn new(inner: R, chunk_bytes: usize) -> Self {
        let chunk_bytes = chunk_bytes.max(1);
        Chunks {
            inner,
            buf: Vec::new(),
            start: 0,
            end: 0,
            chunk_bytes,
            eof: false,
        }
    }

    /// The next chunk of whole lines, or `None` at end of input.
    pub fn next_chunk(&mut self) -> io::Result<Option<&[u8]>> {
        self.compact();
        loop {
            if self.eof {
                return Ok(self.take_rest());
            }
            let scanned = self.end;
            self.read_some()?;
            if let Some(nl) = memchr::memrchr(b'\n', &self.buf[scanned..self.end]) {
                self.start = scanned + nl + 1;
                return Ok(Some(&self.buf[..self.start]));
            }
        }
    }

    /// Moves the unconsumed tail to the front; releases a buffer that a long
    /// line inflated once the tail is small again.
    fn compact(&mut self) {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        let roomy = 4 * self.chunk_bytes;
        if self.buf.len() > roomy && self.end < self.chunk_bytes {
            self.buf.truncate(self.end.max(self.chunk_bytes));
            self.buf.shrink_to_fit();
        }
    }

    /// One `read` into the free space, growing the buffer when needed.
    fn read_some(&mut self) -> io::Result<()> {
        if self.buf.len() - self.end < self.chunk_bytes {
            self.buf.resize(self.end + self.chunk_bytes, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            return Ok(());
        }
    }

    /// At end of input: the last line without a newline, once.
    fn take_rest(&mut self) -> Option<&[u8]> {
        if self.end == 0 {
            return None;
        }
        let len = self.end;
        self.end = 0;
        Some(&self.buf[..len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8], chunk_bytes: usize) -> Vec<Vec<u8>> {
        let mut chunks = Chunks::new(input, chunk_bytes);
        let mut out = Vec::new();
        while let Some(c) = chunks.next_chunk().unwrap() {
            out.push(c.to_vec());
        }
        out
    }

    #[test]
    fn chunks_concatenate_to_the_input_and_end_at_line_boundaries() {
        let input = b"a\nbb\n\nccc\r\nlast";
        for size in [1, 2, 3, 7, 64] {
            let chunks = collect(input, size);
            assert_eq!(chunks.concat(), input, "chunk size {size}");
            let (last, full) = chunks.split_last().unwrap();
            assert!(full.iter().all(|c| c.ends_with(b"\n")), "size {size}");
            assert_eq!(last.as_slice(), b"last", "size {size}");
        }
    }

    #[test]
    fn empty_input_gives_no_chunk() {
        assert!(collect(b"", 4).is_empty());
    }

    #[test]
    fn a_line_longer_than_the_chunk_size_comes_out_whole() {
        let long = vec![b'x'; 10_000];
        let mut input = long.clone();
        input.extend_from_slice(b"\nshort\n");
        let chunks = collect(&input, 16);
        assert!(
            chunks[0].len() >= 10_001,
            "first chunk holds the long line whole"
        );
        assert_eq!(chunks.concat(), input);
    }

    #[test]
    fn the_buffer_shrinks_after_a_long_line() {
        let mut input = vec![b'y'; 100_000];
        input.extend_from_slice(b"\na\nb\n");
        let mut chunks = Chunks::new(&input[..], 8);
        chunks.next_chunk().unwrap();
        assert!(chunks.buf.len() >= 100_000);
        while chunks.next_chunk().unwrap().is_some() {}
        assert!(
            chunks.buf.len() <= 4 * 8,
            "buffer kept {} bytes",
            chunks.buf.len()
        );
    }
}
