#![no_main]
//! The crawl's small state files (`STATE/responses`, `STATE/policy`) on any
//! bytes: an answer, never a panic; what parses is what writing it back
//! would give.
use mgz_crawl::{budget, pinned};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(n) = budget::parse_count(data) {
        assert_eq!(budget::parse_count(format!("{n}\n").as_bytes()), Ok(n));
    }
    if let Ok(p) = pinned::parse_policy(data) {
        let text = pinned::format(&p);
        assert_eq!(pinned::parse_policy(text.as_bytes()), Ok(p));
    }
});
