//! The URL stream for benchmarks (placeholder distribution; calibrated below).

/// An endless stream of crawl-shaped URLs.
#[derive(Debug, Clone)]
pub struct UrlStream {
    rng: crate::hash::Rng,
}

impl Iterator for UrlStream {
    type Item = String;
    fn next(&mut self) -> Option<String> {
        let host = self.rng.below(1000);
        let page = self.rng.below(100_000);
        Some(format!("http://www.site-{host}.sim/page/{page}.html"))
    }
}

/// `count` URLs drawn from `seed`.
pub fn urls(count: u64, seed: u64) -> std::iter::Take<UrlStream> {
    UrlStream {
        rng: crate::hash::Rng::new(seed, &[0x0421]),
    }
    .take(count as usize)
}
