//! A simple deterministic URL generator for `mgz bench seen --generate N`,
//! until the synthetic web (`mgz sim urls`) lands.
//!
//! What it imitates, roughly as a crawl frontier sees it:
//! - host popularity is Zipf (s = 1) over `max(100, N/20)` hosts, so a few
//!   hosts own most URLs and most hosts have a handful;
//! - a host's paths share its few top-level sections and sub-sections;
//! - one URL in five has a query string;
//! - one URL in five repeats an earlier one (links to already-seen pages);
//! - mean length is about 70 bytes.
//!
//! URL `i` is a pure function of `(i, N)`, so any run can be reproduced.

const WORDS: &[&str] = &[
    "news", "blog", "products", "about", "help", "docs", "forum", "wiki", "article", "category",
    "tag", "user", "profile", "search", "events", "archive", "2019", "2020", "2021", "2022",
    "2023", "2024", "sports", "music", "video", "photos", "travel", "food", "science", "tech",
    "health", "business", "politics", "world", "local", "opinion", "reviews", "guides", "support",
    "download", "en", "de", "fr", "api", "v2", "static", "shop", "cart", "store", "library",
];
const SYLLABLES: &[&str] = &[
    "ka", "ro", "mi", "tel", "sun", "po", "lar", "net", "vi", "da", "zen", "or", "ba", "qu", "ix",
    "lo", "ma", "ter", "fi", "go", "ne", "ra", "sto", "web", "hub",
];
const TLDS: &[&str] = &[
    "com", "com", "com", "com", "org", "net", "de", "co.uk", "io", "fr", "jp", "ru", "com.br",
    "info",
];
const SUBDOMAINS: &[&str] = &[
    "www.", "www.", "www.", "", "", "blog.", "en.", "shop.", "m.", "news.",
];

/// splitmix64: tiny, fast, good enough for a workload generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// Generates `n` URLs; see the module doc.
pub struct Generator {
    n: usize,
    /// Cumulative Zipf weights of the hosts, normalised to 1.
    cdf: Vec<f64>,
}

impl Generator {
    /// A generator of `n` URLs.
    pub fn new(n: usize) -> Self {
        let hosts = (n / 20).max(100);
        let mut cdf = Vec::with_capacity(hosts);
        let mut total = 0.0;
        for rank in 1..=hosts {
            total += 1.0 / rank as f64;
            cdf.push(total);
        }
        cdf.iter_mut().for_each(|c| *c /= total);
        Self { n, cdf }
    }

    /// All URLs in order, each passed to `f`.
    pub fn for_each(&self, mut f: impl FnMut(&str)) {
        let mut dup = Rng(0x5eed ^ self.n as u64);
        let mut buf = String::with_capacity(256);
        for i in 0..self.n {
            let j = if i > 0 && dup.below(5) == 0 {
                dup.below(i)
            } else {
                i
            };
            buf.clear();
            self.url(j, &mut buf);
            f(&buf);
        }
    }

    fn host(&self, rng: &mut Rng) -> usize {
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }

    /// URL number `j` (a pure function of `j`).
    fn url(&self, j: usize, out: &mut String) {
        use std::fmt::Write;
        let mut rng = Rng(j as u64 ^ 0xa076_1d64_78bd_642f);
        let h = self.host(&mut rng);
        let mut hr = Rng(h as u64 ^ 0xe703_7ed1_a0b4_28db);
        out.push_str(if hr.below(5) == 0 {
            "http://"
        } else {
            "https://"
        });
        out.push_str(hr.pick(SUBDOMAINS));
        for _ in 0..3 + hr.below(3) {
            out.push_str(hr.pick(SYLLABLES));
        }
        if hr.below(2) == 0 {
            let _ = write!(out, "-{}", hr.pick(WORDS));
        }
        let _ = write!(out, "{}.{}", h % 1000, hr.pick(TLDS));
        // A host's sections: a few words chosen by the host's own generator.
        let sections = 1 + hr.below(8);
        let section = rng.below(sections).min(rng.below(sections));
        let mut sr = Rng(h as u64 * 31 + section as u64);
        let _ = write!(out, "/{}", sr.pick(WORDS));
        for _ in 0..1 + rng.below(3) {
            let _ = write!(out, "/{}", sr.pick(WORDS));
        }
        self.leaf(&mut rng, out);
    }

    fn leaf(&self, rng: &mut Rng, out: &mut String) {
        use std::fmt::Write;
        let _ = match rng.below(4) {
            0 => write!(
                out,
                "/{}-{}-{}-{}-{}",
                rng.pick(WORDS),
                rng.pick(WORDS),
                rng.pick(SYLLABLES),
                rng.pick(WORDS),
                rng.below(100_000)
            ),
            1 => write!(out, "/{}/{}.html", rng.pick(WORDS), rng.below(1_000_000)),
            2 => write!(
                out,
                "/{}/{}_{}",
                rng.pick(WORDS),
                rng.pick(SYLLABLES),
                rng.below(10_000)
            ),
            _ => write!(out, "/{}/{}", rng.pick(WORDS), rng.below(100_000_000)),
        };
        if rng.below(5) == 0 {
            let _ = match rng.below(3) {
                0 => write!(out, "?id={}", rng.below(1_000_000)),
                1 => write!(out, "?page={}&sort=asc", rng.below(50)),
                _ => write!(out, "?q={}+{}", rng.pick(WORDS), rng.pick(WORDS)),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<String> {
        let mut v = Vec::new();
        Generator::new(n).for_each(|u| v.push(u.to_string()));
        v
    }

    #[test]
    fn deterministic_with_duplicates_and_plausible_length() {
        let a = sample(20_000);
        assert_eq!(a, sample(20_000));
        let unique: std::collections::HashSet<_> = a.iter().collect();
        let dup = 1.0 - unique.len() as f64 / a.len() as f64;
        assert!((0.15..0.30).contains(&dup), "duplicate share {dup}");
        let mean = a.iter().map(String::len).sum::<usize>() as f64 / a.len() as f64;
        assert!((65.0..80.0).contains(&mean), "mean length {mean}");
    }

    #[test]
    fn host_skew_is_zipf_like() {
        let a = sample(20_000);
        let mut per_host = std::collections::HashMap::<&str, usize>::new();
        for u in &a {
            *per_host.entry(u.split('/').nth(2).unwrap()).or_default() += 1;
        }
        let mut counts: Vec<usize> = per_host.into_values().collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        // Zipf(1) over 1000 hosts: the top host gets ~13 %, the top 10 ~39 %.
        let top10: usize = counts[..10].iter().sum();
        assert!(counts[0] > 1_500 && top10 > 6_000, "{:?}", &counts[..10]);
    }
}
