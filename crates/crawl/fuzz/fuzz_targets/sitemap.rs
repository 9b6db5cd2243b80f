#![no_main]
//! Sitemap parsing returns a value or a typed error, never panics.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = mgz_crawl::sitemap::parse(data);
});
