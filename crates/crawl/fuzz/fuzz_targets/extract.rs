#![no_main]
//! HTML extraction must never panic, whatever the bytes and charset label.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (label, body) = data.split_at(data.len().min(16));
    let ct = format!("text/html; charset={}", String::from_utf8_lossy(label));
    let _ = mgz_crawl::extract::extract(body, Some(&ct));
});
