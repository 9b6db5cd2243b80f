#![no_main]
//! The WARC tail scanner on any file: an answer, never a panic; a torn tail
//! is a strict suffix, and the complete part before it scans clean.
use std::io::Cursor;

use mgz_crawl::warc_tail::{Tail, scan};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let len = data.len() as u64;
    if let Ok(Tail::Torn { complete, len: l }) = scan(&mut Cursor::new(data), len) {
        assert_eq!(l, len);
        assert!(complete < len);
        let head = &data[..complete as usize];
        assert_eq!(scan(&mut Cursor::new(head), complete), Ok(Tail::Clean));
    }
});
