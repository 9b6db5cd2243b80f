//! The URL stream for benchmarks: `mgz sim urls`.
//!
//! Each URL is `scheme://host/dir/leaf[?query]`, drawn from a seeded stream:
//!
//! - host: rank `r` in [0, 200,000) with `P(rank <= x) = ln(x+1)/ln(N+1)`
//!   (a continuous Zipf with exponent 1: the top host has about 6% of URLs),
//!   its name a pure function of `r` (`www.lanternriver17.com`, `blog.meadow.org`, ...);
//! - dir: one of the host's 256 directories, again Zipf-ranked, so URLs
//!   of a host share path prefixes (`/docs/15/`, `/news/2024/05/`, `/wiki/`);
//! - leaf: 1 to 5 words joined by `-` or `_`, a numeric id on 45%,
//!   then `.html`, `.php`, `/` or nothing;
//! - query on 20% of fresh URLs (`?id=`, `?page=`, `?q=...&sort=`, `?utm_source=`);
//! - duplicates: with probability `dup_rate` (default 0.5) the stream repeats one of its
//!   last 4,096 URLs instead (crawls rediscover navigation links constantly).
//!
//! Memory: the 4,096-URL ring (about 300 KB); nothing grows with the count.
//! The calibration against real lists is in the crate README.

use std::collections::VecDeque;

use crate::hash::{Rng, h};

const HOSTS: f64 = 200_000.0;
const DIRS: f64 = 256.0;
const RING: usize = 4096;

const WORDS: [&str; 48] = [
    "lantern", "river", "meadow", "copper", "violet", "thunder", "compass", "harbour", "orchard",
    "station", "signal", "garden", "library", "winter", "market", "paper", "engine", "music",
    "archive", "search", "index", "page", "news", "story", "review", "guide", "city", "world",
    "travel", "health", "science", "sports", "video", "photo", "design", "recipe", "history",
    "energy", "school", "money", "house", "film", "game", "data", "cloud", "forest", "ocean",
    "art",
];
const TLDS: [&str; 10] = [
    ".com", ".com", ".com", ".org", ".net", ".de", ".co.uk", ".io", ".fr", ".info",
];
const PREFIXES: [&str; 8] = ["www.", "www.", "www.", "", "blog.", "en.", "shop.", "docs."];
const EXTS: [&str; 6] = [".html", ".html", ".php", "/", "", ".htm"];

/// An endless, seeded stream of crawl-shaped URLs.
#[derive(Debug, Clone)]
pub struct UrlStream {
    seed: u64,
    rng: Rng,
    dup_rate: f64,
    ring: VecDeque<String>,
}

impl UrlStream {
    /// A stream drawn from `seed`, repeating a recent URL with probability 0.5.
    pub fn new(seed: u64) -> Self {
        UrlStream {
            seed,
            rng: Rng::new(seed, &[0x0421]),
            dup_rate: 0.5,
            ring: VecDeque::with_capacity(RING),
        }
    }

    /// The same stream with duplicate probability `rate` (clamped to [0, 1]).
    pub fn with_dup_rate(mut self, rate: f64) -> Self {
        self.dup_rate = if rate.is_nan() {
            0.0
        } else {
            rate.clamp(0.0, 1.0)
        };
        self
    }

    fn word(&mut self) -> &'static str {
        WORDS[self.rng.below(WORDS.len() as u64) as usize]
    }

    /// A fresh URL (may collide with an earlier one by chance).
    fn fresh(&mut self) -> String {
        let r = zipf_rank(self.rng.unit(), HOSTS);
        let mut url = String::with_capacity(96);
        url.push_str(if self.rng.chance(0.8) {
            "https://"
        } else {
            "http://"
        });
        url.push_str(&host_name(self.seed, r));
        let d = zipf_rank(self.rng.unit(), DIRS);
        url.push_str(&dir_path(self.seed, r, d));
        self.leaf(&mut url);
        if self.rng.chance(0.2) {
            self.query(&mut url);
        }
        url
    }

    fn leaf(&mut self, url: &mut String) {
        let sep = if self.rng.chance(0.7) { "-" } else { "_" };
        for i in 0..1 + self.rng.below(5) {
            if i > 0 {
                url.push_str(sep);
            }
            url.push_str(self.word());
        }
        if self.rng.chance(0.45) {
            url.push_str(&format!("{sep}{}", self.rng.below(1_000_000)));
        }
        url.push_str(EXTS[self.rng.below(EXTS.len() as u64) as usize]);
    }

    fn query(&mut self, url: &mut String) {
        let q = match self.rng.below(4) {
            0 => format!("?id={}", self.rng.below(1_000_000)),
            1 => format!("?page={}", 1 + self.rng.below(50)),
            2 => format!("?q={}+{}&sort=date", self.word(), self.word()),
            _ => format!("?utm_source={}&utm_medium=social", self.word()),
        };
        url.push_str(&q);
    }
}

impl Iterator for UrlStream {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        if !self.ring.is_empty() && self.rng.chance(self.dup_rate) {
            let i = self.rng.below(self.ring.len() as u64) as usize;
            return Some(self.ring[i].clone());
        }
        let url = self.fresh();
        if self.ring.len() == RING {
            self.ring.pop_front();
        }
        self.ring.push_back(url.clone());
        Some(url)
    }
}

/// A rank in [0, n) with P(rank <= x) = ln(x+1)/ln(n+1).
fn zipf_rank(u: f64, n: f64) -> u64 {
    ((n + 1.0).powf(u) - 1.0).floor().clamp(0.0, n - 1.0) as u64
}

/// The name of host rank `r`.
fn host_name(seed: u64, r: u64) -> String {
    let x = h(seed, &[r, 0x4057]);
    let pick = |shift: u32, n: usize| ((x >> shift) % n as u64) as usize;
    let mut name = String::from(PREFIXES[pick(0, PREFIXES.len())]);
    name.push_str(WORDS[pick(8, WORDS.len())]);
    if x >> 20 & 1 == 1 {
        name.push_str(WORDS[pick(24, WORDS.len())]);
    }
    if x >> 21 & 3 == 0 {
        name.push_str(&(r % 1000).to_string());
    } else if x >> 21 & 3 == 1 {
        name.push('-');
        name.push_str(WORDS[pick(32, WORDS.len())]);
    }
    name.push_str(TLDS[pick(40, TLDS.len())]);
    name
}

/// Directory `d` of host `r`: `/`, then 1 to 3 segments, ending in `/`.
fn dir_path(seed: u64, r: u64, d: u64) -> String {
    let mut rng = Rng::new(seed, &[r, d, 0xD1]);
    let mut path = String::from("/");
    let style = h(seed, &[r, 0x57]) % 4;
    for depth in 0..1 + rng.below(3) {
        let seg = match (style, depth) {
            (0, 1) => format!("{}", 2000 + rng.below(26)),
            (0, 2) => format!("{:02}", 1 + rng.below(12)),
            (1, 1) => format!("{}", rng.below(20)),
            _ => WORDS[rng.below(WORDS.len() as u64) as usize].to_string(),
        };
        path.push_str(&seg);
        path.push('/');
    }
    path
}

/// `count` URLs of the stream seeded by `seed` (duplicate rate 0.5).
pub fn urls(count: u64, seed: u64) -> std::iter::Take<UrlStream> {
    UrlStream::new(seed).take(usize::try_from(count).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn stream_is_deterministic_and_shaped() {
        let a: Vec<String> = urls(20_000, 3).collect();
        assert_eq!(a, urls(20_000, 3).collect::<Vec<_>>());
        assert_ne!(a[..100], urls(100, 4).collect::<Vec<_>>()[..]);
        let mean = a.iter().map(String::len).sum::<usize>() as f64 / a.len() as f64;
        assert!((60.0..80.0).contains(&mean), "mean length {mean}");
        let distinct = a.iter().collect::<HashSet<_>>().len() as f64 / a.len() as f64;
        assert!(
            (0.45..0.55).contains(&distinct),
            "distinct share {distinct}"
        );
        let with_query = a.iter().filter(|u| u.contains('?')).count() as f64 / a.len() as f64;
        assert!(
            (0.15..0.25).contains(&with_query),
            "query share {with_query}"
        );
        assert!(
            a.iter().all(|u| url::Url::parse(u).is_ok()),
            "every URL parses"
        );
    }

    #[test]
    fn dup_rate_is_honoured() {
        let a: Vec<String> = UrlStream::new(1).with_dup_rate(0.0).take(10_000).collect();
        let distinct = a.iter().collect::<HashSet<_>>().len();
        assert!(distinct > 9_900, "{distinct}");
        assert_eq!(zipf_rank(0.0, 10.0), 0);
        assert_eq!(zipf_rank(0.999_999, 10.0), 9);
    }
}
