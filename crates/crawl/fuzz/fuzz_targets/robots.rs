#![no_main]
//! robots.txt interpretation never panics.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let r = mgz_crawl::robots::Robots::from_response(200, data, "mgz");
    let _ = r.allowed("http://a.example/some/path?q=1");
    let _ = r.crawl_delay();
});
