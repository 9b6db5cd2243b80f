#![no_main]
//! HTML extraction must never panic, whatever the bytes and charset label;
//! without the text (`mgz crawl --no-text`) it finds the same links, base,
//! meta tags and directives (the title may differ in foreign content: see
//! the `extract` property tests).
use mgz_crawl::extract::{DEFAULT_AGENT, extract, extract_with};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (label, body) = data.split_at(data.len().min(16));
    let ct = format!("text/html; charset={}", String::from_utf8_lossy(label));
    let full = extract(body, Some(&ct));
    let bare = extract_with(body, Some(&ct), DEFAULT_AGENT, false);
    assert!(bare.text.is_empty());
    assert_eq!(
        (&bare.links, &bare.base, &bare.description, &bare.keywords),
        (&full.links, &full.base, &full.description, &full.keywords)
    );
    assert_eq!((bare.nofollow, bare.noindex), (full.nofollow, full.noindex));
});
