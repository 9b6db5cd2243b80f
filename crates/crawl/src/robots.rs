//! robots.txt per RFC 9309, parsed by `texting_robots`, cached per origin.
//!
//! Outcome of fetching `/robots.txt` (RFC 9309 §2.3.1):
//! - 2xx: the rules, `Crawl-delay` (capped at 30 s) and `Sitemap:` lines;
//! - 4xx: no rules, everything allowed;
//! - 5xx, timeout or network error: the whole origin is disallowed *for now*
//!   and robots.txt is fetched again after [`RETRY_UNREACHABLE`].
//!
//! Bodies beyond [`MAX_ROBOTS_BYTES`] (500 KiB) are cut before parsing, as the
//! RFC allows. An entry lives [`CACHE_TTL`] (24 h). A 429 counts as
//! unreachable, not as 4xx (see [`Robots::from_response`]).
//!
//! Memory: a parsed rule set carries an estimate of the heap it holds
//! ([`estimated_bytes`]), by which [`crate::robots_cache::RobotsCache`]
//! bounds the outcomes kept in memory.

use std::time::Duration;

/// Largest robots.txt body parsed.
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;
/// How long a fetched robots.txt is trusted.
pub const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);
/// When an unreachable robots.txt is tried again.
pub const RETRY_UNREACHABLE: Duration = Duration::from_secs(60);
/// Upper bound on an honoured `Crawl-delay`.
pub const MAX_CRAWL_DELAY: Duration = Duration::from_secs(30);

/// What robots.txt says about one origin.
#[derive(Debug)]
pub enum Robots {
    /// Parsed rules, and the heap they are estimated to hold
    /// ([`estimated_bytes`]).
    Rules {
        /// The rules for our user agent.
        robot: Box<texting_robots::Robot>,
        /// [`estimated_bytes`] of the body they were parsed from.
        bytes: usize,
    },
    /// robots.txt absent (4xx) or ignored: everything allowed.
    AllowAll,
    /// robots.txt unreachable (5xx, 429, timeout): nothing allowed until retried.
    Unreachable,
}

impl Robots {
    /// Interprets a robots.txt response (`status` 0 = network failure).
    pub fn from_response(status: u16, body: &[u8], agent: &str) -> Robots {
        match status {
            200..=299 => {
                let body = &body[..body.len().min(MAX_ROBOTS_BYTES)];
                match texting_robots::Robot::new(agent, body) {
                    Ok(r) => Robots::Rules {
                        robot: Box::new(r),
                        bytes: estimated_bytes(body),
                    },
                    // An unparseable file carries no rules we can honour.
                    Err(_) => Robots::AllowAll,
                }
            }
            // 429 Too Many Requests is the server asking us to slow down,
            // not saying there is no robots.txt: taken as unreachable (asked
            // again later, nothing fetched meanwhile), as Google does. RFC
            // 9309 lets a crawler read any 4xx as "allow all", which would
            // crawl a throttling site without its rules.
            429 => Robots::Unreachable,
            // A redirect chain given up on (a loop, more than five hops; see
            // `robots_fetch`) counts as "unavailable", like 4xx.
            300..=499 => Robots::AllowAll,
            _ => Robots::Unreachable,
        }
    }

    /// Whether `url` may be fetched.
    pub fn allowed(&self, url: &str) -> bool {
        match self {
            Robots::Rules { robot, .. } => robot.allowed(url),
            Robots::AllowAll => true,
            Robots::Unreachable => false,
        }
    }

    /// The `Crawl-delay`, capped at [`MAX_CRAWL_DELAY`].
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            Robots::Rules { robot, .. } => robot
                .delay
                .filter(|d| d.is_finite() && *d >= 0.0)
                .map(|d| Duration::from_secs_f32(d.min(MAX_CRAWL_DELAY.as_secs_f32()))),
            _ => None,
        }
    }

    /// Heap this outcome is estimated to hold (0 unless parsed rules).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Robots::Rules { bytes, .. } => *bytes,
            _ => 0,
        }
    }

    /// `Sitemap:` URLs.
    pub fn sitemaps(&self) -> &[String] {
        match self {
            Robots::Rules { robot, .. } => &robot.sitemaps,
            _ => &[],
        }
    }
}

/// Fixed part of [`estimated_bytes`]: the `Robot`, its vectors, the box.
const BASE_BYTES: usize = 1024;
/// Per byte of the body: the rules' pattern strings and their vector slots.
const PER_BODY_BYTE: usize = 8;
/// Per rule line holding a `$`: `texting_robots` compiles it to a regex.
const PER_DOLLAR_RULE: usize = 40 * 1024;
/// Per byte of such a line, and per `*` in it (a larger automaton).
const PER_DOLLAR_BYTE: usize = 64;
const PER_DOLLAR_STAR: usize = 4 * 1024;

/// Upper estimate of the heap a rule set parsed from `body` holds once it
/// has been matched from two threads (a host's URLs are checked by one task
/// at a time at the default `--per-host 1`, on whichever worker thread).
///
/// `texting_robots` keeps a plain prefix or `*` rule as its pattern text,
/// but compiles a rule with `$` into a `regex::Regex`: 6–15 KiB each, more
/// for long or starred patterns, plus match caches of 3–20 KiB per thread
/// that used it. `tests/robots_memory.rs` checks this estimate against a
/// counting allocator (a file of ten such rules held 160 KiB, one of a
/// hundred 3.8 MiB). The body is counted whole (every group, comments
/// included), so the estimate errs high.
pub fn estimated_bytes(body: &[u8]) -> usize {
    let body = &body[..body.len().min(MAX_ROBOTS_BYTES)];
    let dollar_rules = body
        .split(|&b| b == b'\n' || b == b'\r')
        .map(|line| line.split(|&b| b == b'#').next().unwrap_or_default())
        .filter(|rule| rule.contains(&b'$'))
        .map(|rule| {
            let stars = rule.iter().filter(|&&b| b == b'*').count();
            PER_DOLLAR_RULE + PER_DOLLAR_BYTE * rule.len() + PER_DOLLAR_STAR * stars
        })
        .fold(0usize, usize::saturating_add);
    (BASE_BYTES + PER_BODY_BYTE * body.len()).saturating_add(dollar_rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    const UA: &str = "mgz";

    #[test]
    fn status_classes() {
        assert!(Robots::from_response(404, b"", UA).allowed("http://a/x"));
        assert!(!Robots::from_response(500, b"", UA).allowed("http://a/x"));
        for s in [401, 403, 410, 451] {
            assert!(
                Robots::from_response(s, b"", UA).allowed("http://a/x"),
                "{s}"
            );
        }
        let throttled = Robots::from_response(429, b"User-agent: *\nAllow: /\n", UA);
        assert!(matches!(throttled, Robots::Unreachable));
        assert!(!throttled.allowed("http://a/x"));
        assert!(!Robots::from_response(0, b"", UA).allowed("http://a/x"));
        let r = Robots::from_response(200, b"User-agent: *\nDisallow: /private\n", UA);
        assert!(r.allowed("http://a/x") && !r.allowed("http://a/private/1"));
    }

    #[test]
    fn delay_is_capped_and_sitemaps_listed() {
        let body = b"User-agent: *\nCrawl-delay: 3600\nSitemap: http://a/s.xml\n";
        let r = Robots::from_response(200, body, UA);
        assert_eq!(r.crawl_delay(), Some(MAX_CRAWL_DELAY));
        assert_eq!(r.sitemaps(), ["http://a/s.xml".to_string()]);
    }

    #[test]
    fn malformed_bodies_do_not_panic() {
        let mut huge = b"User-agent: *\n".to_vec();
        huge.extend(std::iter::repeat_n(b'a', 2 * MAX_ROBOTS_BYTES));
        for body in [
            &b"\xff\xfe\x00garbage\n\n::::"[..],
            b"Disallow",
            b"\0\0\0",
            &huge,
        ] {
            let r = Robots::from_response(200, body, UA);
            let _ = r.allowed("http://a/b");
        }
    }
}
