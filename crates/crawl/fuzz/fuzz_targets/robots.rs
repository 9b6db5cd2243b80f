#![no_main]
//! robots.txt interpretation and its memory estimate, and the page-level directives read from header
//! and attribute text (`X-Robots-Tag`, `<meta http-equiv=refresh>`), never
//! panic.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let r = mgz_crawl::robots::Robots::from_response(200, data, "mgz");
    let _ = r.allowed("http://a.example/some/path?q=1");
    let _ = r.crawl_delay();
    // The cache's memory bound counts every body byte, whatever it holds.
    let cut = data.len().min(mgz_crawl::robots::MAX_ROBOTS_BYTES);
    assert!(mgz_crawl::robots::estimated_bytes(data) >= 8 * cut);
    let text = String::from_utf8_lossy(data);
    let _ = mgz_crawl::extract::header_robots_directives(&text, "mgz");
    if let Some(url) = mgz_crawl::extract::refresh_url(&text) {
        assert!(!url.is_empty());
    }
});
