//! The hosts of a synthetic web and their fixed features.
//!
//! Layout: one [`Host`] per virtual host (about 60 bytes plus its name), built
//! once from the config, plus the cumulative Zipf weights used to draw
//! cross-host link targets (8 bytes per host). Pages are never stored; see
//! `page.rs`. Host `i` has popularity rank `i` (host 0 is the most popular),
//! and its features are fixed functions of `i`, so every feature exists in any
//! web of 16 hosts or more:
//!
//! | feature | hosts |
//! |---|---|
//! | robots.txt kind | `i % 7`: 0 allow-all, 1 absent, 2 patterns, 3 allow-all, 4 crawl-delay (small hosts, else allow-all), 5 answers 500, 6 times out |
//! | trap | `i % 13`: 1 calendar, 2 session ids, 3 repeating segments, 4 growing URL (never on crawl-delay hosts) |
//! | charset | `i % 10`: 3 and 8 ISO-8859-1 in the header, 4 windows-1252 in a meta tag, 9 Shift_JIS in a meta http-equiv |
//! | sitemap with sitemap-only pages | `i % 3 == 0` and robots.txt is served (kinds 0, 2, 3, 4) |
//! | redirect chains | `i % 2 == 0`; the redirect loop on `i % 9 == 0` |
//! | error links (404, 410, 500, 503, 429) | `i % 3 == 1` |
//! | slow | `i % 11 == 10` and at most 60 pages |

use std::collections::HashMap;

use crate::{SimConfig, SimError};

/// What a host's robots.txt does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RobotsKind {
    /// 404: everything allowed.
    Absent,
    /// `Disallow:` (empty): everything allowed.
    AllowAll,
    /// `Disallow` and `Allow` lines with `*` and `$` patterns.
    Patterns,
    /// Allow all, with a `Crawl-delay`.
    CrawlDelay,
    /// 500: a crawler must assume complete disallow (RFC 9309 2.3.1.4).
    ServerError,
    /// No answer: the connection stalls then closes; complete disallow.
    Timeout,
}

/// Which crawler trap a host carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trap {
    /// `/calendar/YYYY/MM/` with previous and next month links, forever.
    Calendar,
    /// `/shop/?sid=...` pages whose links carry a session id that changes per visit chain.
    Session,
    /// `/loop/more/more/...`: a relative link that appends a segment.
    Repeat,
    /// `/grow/s1-.../s2-.../`: every hop adds a 200-byte segment.
    Long,
}

/// How a host declares a non-UTF-8 charset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Charset {
    /// UTF-8 declared in the header.
    Utf8,
    /// ISO-8859-1 declared in the Content-Type header.
    Latin1Header,
    /// windows-1252 declared by `<meta charset>`.
    Cp1252Meta,
    /// Shift_JIS declared by `<meta http-equiv="Content-Type">`.
    ShiftJisMeta,
}

/// One virtual host.
#[derive(Debug, Clone)]
pub(crate) struct Host {
    /// Lowercase host name, ending in `.sim`.
    pub name: String,
    /// Regular pages (index 0 is `/`).
    pub pages: u32,
    /// Pages only the sitemap lists.
    pub orphans: u32,
    pub robots: RobotsKind,
    pub trap: Option<Trap>,
    pub charset: Charset,
    pub redirects: bool,
    pub redirect_loop: bool,
    pub errors: bool,
    pub slow: bool,
}

/// The hosts of one web.
#[derive(Debug)]
pub(crate) struct World {
    pub cfg: SimConfig,
    pub hosts: Vec<Host>,
    by_name: HashMap<String, u32>,
    /// Cumulative popularity weights, normalised to end at 1.
    cdf: Vec<f64>,
}

/// The name of host `i`.
pub(crate) fn host_name(i: u32) -> String {
    match i % 5 {
        0 | 1 => format!("www.site-{i}.sim"),
        2 => format!("blog.site-{i}.sim"),
        3 => format!("shop-{i}.sim"),
        _ => format!("docs.site-{i}.sim"),
    }
}

impl World {
    /// Builds the hosts of `cfg`.
    pub(crate) fn new(cfg: &SimConfig) -> Result<World, SimError> {
        check(cfg)?;
        let weights: Vec<f64> = (0..cfg.hosts)
            .map(|i| 1.0 / f64::from(i + 1).powf(cfg.zipf_exponent))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cdf = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        let hosts: Vec<Host> = (0..cfg.hosts)
            .map(|i| {
                let pages = (f64::from(cfg.pages) * weights[i as usize] / total).round();
                make_host(i, (pages as u32).max(1))
            })
            .collect();
        let by_name = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.clone(), i as u32))
            .collect();
        Ok(World {
            cfg: cfg.clone(),
            hosts,
            by_name,
            cdf,
        })
    }

    /// The index of the host called `name` (lowercase, no port).
    pub(crate) fn lookup(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// The host whose popularity interval contains `u` in [0, 1).
    pub(crate) fn popular_host(&self, u: f64) -> u32 {
        let i = self.cdf.partition_point(|&c| c <= u);
        i.min(self.hosts.len() - 1) as u32
    }
}

fn check(cfg: &SimConfig) -> Result<(), SimError> {
    let reason = if cfg.hosts == 0 {
        "hosts must be at least 1"
    } else if cfg.pages < cfg.hosts {
        "pages must be at least hosts (every host has a home page)"
    } else if !(cfg.zipf_exponent.is_finite() && cfg.zipf_exponent >= 0.0) {
        "zipf_exponent must be a finite number >= 0"
    } else {
        return Ok(());
    };
    Err(SimError::Config {
        reason: reason.to_string(),
    })
}

fn make_host(i: u32, pages: u32) -> Host {
    let robots = match i % 7 {
        1 => RobotsKind::Absent,
        2 => RobotsKind::Patterns,
        4 if pages <= 40 => RobotsKind::CrawlDelay,
        5 => RobotsKind::ServerError,
        6 => RobotsKind::Timeout,
        _ => RobotsKind::AllowAll,
    };
    let trap = match i % 13 {
        _ if robots == RobotsKind::CrawlDelay => None,
        1 => Some(Trap::Calendar),
        2 => Some(Trap::Session),
        3 => Some(Trap::Repeat),
        4 => Some(Trap::Long),
        _ => None,
    };
    let charset = match i % 10 {
        3 | 8 => Charset::Latin1Header,
        4 => Charset::Cp1252Meta,
        9 => Charset::ShiftJisMeta,
        _ => Charset::Utf8,
    };
    let serves_robots = !matches!(
        robots,
        RobotsKind::Absent | RobotsKind::ServerError | RobotsKind::Timeout
    );
    let orphans = if i.is_multiple_of(3) && serves_robots {
        (pages / 10).max(1)
    } else {
        0
    };
    Host {
        name: host_name(i),
        pages,
        orphans,
        robots,
        trap,
        charset,
        redirects: i.is_multiple_of(2),
        redirect_loop: i.is_multiple_of(9),
        errors: i % 3 == 1,
        slow: i % 11 == 10 && pages <= 60,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_zipf_and_sum_near_total() {
        let w = World::new(&SimConfig::default()).unwrap();
        let total: u64 = w.hosts.iter().map(|h| u64::from(h.pages)).sum();
        assert!((29_000..31_000).contains(&total), "{total}");
        assert!(w.hosts[0].pages > 10 * w.hosts[99].pages);
        assert_eq!(w.lookup("www.site-0.sim"), Some(0));
        assert_eq!(w.lookup("shop-3.sim"), Some(3));
        assert_eq!(w.lookup("www.site-3.sim"), None);
    }

    #[test]
    fn popular_hosts_are_drawn_more_often() {
        let w = World::new(&SimConfig::small(1, 50, 500)).unwrap();
        let draws: Vec<u32> = (0..1000)
            .map(|k| w.popular_host(k as f64 / 1000.0))
            .collect();
        let zeros = draws.iter().filter(|&&h| h == 0).count();
        let last = draws.iter().filter(|&&h| h == 49).count();
        assert!(zeros > 10 * last.max(1), "{zeros} vs {last}");
        assert_eq!(w.popular_host(0.999_999_9), 49);
    }

    #[test]
    fn bad_configs_are_typed_errors() {
        assert!(World::new(&SimConfig::small(1, 0, 10)).is_err());
        assert!(World::new(&SimConfig::small(1, 10, 5)).is_err());
    }
}
