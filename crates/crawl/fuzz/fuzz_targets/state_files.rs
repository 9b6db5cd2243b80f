#![no_main]
//! The crawl's state files (`STATE/responses`, `STATE/policy`, `STATE/edge`,
//! `STATE/last-request`)
//! on any bytes: an answer, never a panic; what parses is what writing it
//! back would give.
use mgz_crawl::{budget, edge, pace, pinned};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(n) = budget::parse_count(data) {
        assert_eq!(budget::parse_count(format!("{n}\n").as_bytes()), Ok(n));
    }
    if let Ok(t) = pace::parse_bound(data) {
        assert_eq!(pace::parse_bound(format!("{t}\n").as_bytes()), Ok(t));
    }
    if let Ok(p) = pinned::parse_policy(data) {
        let text = pinned::format(&p);
        assert_eq!(pinned::parse_policy(text.as_bytes()), Ok(p));
    }
    // The edge: the entries read before the end (or an error) are what the
    // file says; written back whole, they read back the same, untorn.
    let mut entries = edge::Entries::new(data);
    let mut got = Vec::new();
    let clean = loop {
        match entries.next_entry() {
            Ok(Some(e)) => got.push(e),
            Ok(None) => break true,
            Err(_) => break false,
        }
    };
    let mut text = edge::HEADER.to_vec();
    for (depth, url) in &got {
        text.extend_from_slice(format!("{depth} {url}\n").as_bytes());
    }
    let mut again = edge::Entries::new(&text[..]);
    for e in &got {
        assert_eq!(again.next_entry().as_ref(), Ok(&Some(e.clone())));
    }
    assert_eq!(again.next_entry(), Ok(None));
    assert!(!again.torn());
    if clean && !entries.torn() {
        // A file read through untorn holds the header and whole lines only.
        assert!(data.is_empty() || data.ends_with(b"\n"));
    }
});
