//! Crawler-trap limits and crawl scope, applied to every discovered URL before
//! it reaches the frontier.
//!
//! Traps: canonical URL longer than `max_url_len`; a path segment occurring
//! `max_segment_repeats` (3) or more times; more than `max_path_depth` path
//! segments; more than `host_budget` URLs admitted for one host (counted in a
//! map from the host's [`host_key`] to a count: a 16-byte entry, 18-37 bytes
//! per host at the map's load factor). Each cut is counted by kind.
//!
//! Scope: the seeds' hosts or registrable domains, each kept once as a
//! [`host_key`] ([`SeedScope`], 10-21 bytes per distinct host), so a
//! million seeds cost their distinct hosts, and each judgement is one hash
//! lookup (it was a scan of every seed's host: a million string compares a
//! link with a million seeds).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use regex::Regex;
use xxhash_rust::xxh3::xxh3_64;

/// Which hosts a crawl may leave its seeds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Only the seeds' hosts.
    Host,
    /// The seeds' registrable domains (and their subdomains).
    Domain,
    /// Anywhere.
    Any,
}

impl std::str::FromStr for Scope {
    type Err = crate::CrawlError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "host" => Ok(Scope::Host),
            "domain" => Ok(Scope::Domain),
            "any" => Ok(Scope::Any),
            _ => Err(crate::CrawlError::Config(format!(
                "scope {s:?}: expected host|domain|any"
            ))),
        }
    }
}

/// The registrable domain of `host` (public suffix + 1 label), or the host
/// itself (an IP literal: the list would make `192.0.2.1`'s domain `2.1`,
/// shared with every address ending in `.2.1`).
pub fn registrable_domain(host: &str) -> &str {
    mgz_url::host_queue_key(host, mgz_url::QueueKeyKind::RegistrableDomain)
}

/// Trap limits.
#[derive(Debug, Clone)]
pub struct TrapLimits {
    /// Longest canonical URL, bytes.
    pub max_url_len: usize,
    /// A segment occurring this many times marks a trap.
    pub max_segment_repeats: usize,
    /// Most path segments.
    pub max_path_depth: usize,
    /// Most URLs admitted per host.
    pub host_budget: u64,
}

impl Default for TrapLimits {
    fn default() -> Self {
        TrapLimits {
            max_url_len: 2048,
            max_segment_repeats: 3,
            max_path_depth: 32,
            host_budget: 100_000,
        }
    }
}

/// Why a URL was cut as a trap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrapKind {
    /// URL over the length cap.
    Length,
    /// A path segment repeated.
    RepeatedSegment,
    /// Too many path segments.
    PathDepth,
    /// Host budget used up.
    HostBudget,
}

impl TrapKind {
    /// Every kind, in [`TrapKind::index`] order.
    pub const ALL: [TrapKind; 4] = [
        TrapKind::Length,
        TrapKind::RepeatedSegment,
        TrapKind::PathDepth,
        TrapKind::HostBudget,
    ];

    /// Position in [`TrapKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name printed in summaries (`url_length` is `--max-url-length`,
    /// `path_depth` `--max-path-depth`, `host_budget` `--max-host-urls`).
    pub fn name(self) -> &'static str {
        match self {
            TrapKind::Length => "url_length",
            TrapKind::RepeatedSegment => "repeated_segment",
            TrapKind::PathDepth => "path_depth",
            TrapKind::HostBudget => "host_budget",
        }
    }
}

/// Checks path-shape traps of a canonical URL (`path` without query).
pub fn shape_trap(url: &str, path: &str, lim: &TrapLimits) -> Option<TrapKind> {
    if url.len() > lim.max_url_len {
        return Some(TrapKind::Length);
    }
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segs.len() > lim.max_path_depth {
        return Some(TrapKind::PathDepth);
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for s in &segs {
        let c = counts.entry(s).or_default();
        *c += 1;
        if *c >= lim.max_segment_repeats {
            return Some(TrapKind::RepeatedSegment);
        }
    }
    None
}

/// The key of `host`'s budget: its xxh3 hash. Two hosts whose 64-bit hashes
/// collide share one budget, the only way a key can err.
pub fn host_key(host: &str) -> u64 {
    xxh3_64(host.as_bytes())
}

/// What the scope keeps of the seeds: their hosts ([`Scope::Host`]) or
/// their registrable domains ([`Scope::Domain`]) as [`host_key`]s, each
/// distinct one once (8 bytes and a control byte; 10-21 bytes a key in
/// the set at its load factor, 11.8 measured in `tests/host_memory.rs`),
/// whatever the number of seeds: a million seeds on 87,536 hosts keep
/// 87,536 keys. Nothing for [`Scope::Any`]. A host whose key collides with
/// a seed's is in scope, the only way the set can err (2^-64 a pair).
#[derive(Debug, Clone)]
pub struct SeedScope {
    scope: Scope,
    keys: HashSet<u64>,
}

impl SeedScope {
    /// An empty one for `scope`.
    pub fn new(scope: Scope) -> SeedScope {
        SeedScope {
            scope,
            keys: HashSet::new(),
        }
    }

    /// One for `scope` with the seed hosts `hosts`.
    pub fn of<S: AsRef<str>>(scope: Scope, hosts: impl IntoIterator<Item = S>) -> SeedScope {
        let mut s = SeedScope::new(scope);
        for h in hosts {
            s.add(h.as_ref());
        }
        s
    }

    /// Adds a seed's host.
    pub fn add(&mut self, host: &str) {
        if let Some(k) = self.key(host) {
            self.keys.insert(k);
        }
    }

    /// The distinct keys kept.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is kept.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn key(&self, host: &str) -> Option<u64> {
        match self.scope {
            Scope::Any => None,
            Scope::Host => Some(host_key(host)),
            Scope::Domain => Some(host_key(registrable_domain(host))),
        }
    }

    /// Whether `host` is in scope.
    pub fn admits(&self, host: &str) -> bool {
        match self.key(host) {
            None => true,
            Some(k) => self.keys.contains(&k),
        }
    }
}

/// Scope, include/exclude patterns and per-host budgets.
pub struct Filter {
    scope: SeedScope,
    include: Option<Regex>,
    exclude: Option<Regex>,
    limits: TrapLimits,
    /// URLs admitted per host, by [`host_key`] (a `String` key cost ~50
    /// bytes more per host).
    admitted: Mutex<HashMap<u64, u64>>,
}

/// Why a discovered URL is not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Queue it.
    Admit,
    /// Outside scope or patterns.
    OutOfScope,
    /// Cut as a trap.
    Trap(TrapKind),
}

impl Filter {
    /// A filter for the given scope.
    pub fn new(
        scope: SeedScope,
        include: Option<Regex>,
        exclude: Option<Regex>,
        limits: TrapLimits,
    ) -> Filter {
        Filter {
            scope,
            include,
            exclude,
            limits,
            admitted: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `host` is in scope.
    pub fn host_in_scope(&self, host: &str) -> bool {
        self.scope.admits(host)
    }

    /// Whether `url` (canonical) passes `--include` and `--exclude`.
    pub fn patterns_admit(&self, url: &str) -> bool {
        self.include.as_ref().is_none_or(|r| r.is_match(url))
            && !self.exclude.as_ref().is_some_and(|r| r.is_match(url))
    }

    /// Whether this run has `--include` or `--exclude` patterns.
    pub fn has_patterns(&self) -> bool {
        self.include.is_some() || self.exclude.is_some()
    }

    /// Judges a canonical URL (scope, patterns, shape traps); does not count budgets.
    pub fn judge(&self, url: &url::Url) -> Verdict {
        let host = url.host_str().unwrap_or("");
        if !self.host_in_scope(host) || !self.patterns_admit(url.as_str()) {
            return Verdict::OutOfScope;
        }
        match shape_trap(url.as_str(), url.path(), &self.limits) {
            Some(t) => Verdict::Trap(t),
            None => Verdict::Admit,
        }
    }

    /// Takes one unit of `host`'s budget if any is left. Checking and
    /// charging under one lock keeps concurrent pages from overspending it;
    /// a URL that turns out to be known already is [`Filter::refund`]ed.
    pub fn try_charge(&self, host: &str) -> bool {
        let mut m = self.admitted.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(host_key(host)).or_default();
        if *n >= self.limits.host_budget {
            return false;
        }
        *n += 1;
        true
    }

    /// Gives back a unit taken by [`Filter::try_charge`].
    pub fn refund(&self, host: &str) {
        let mut m = self.admitted.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&host_key(host)) {
            *n = n.saturating_sub(1);
        }
    }

    /// Charges what a resumed crawl had already admitted (see
    /// [`crate::queue::Census`]), so the budget keeps counting across runs.
    pub fn restore_budgets(&self, admitted: HashMap<u64, u64>) {
        let mut m = self.admitted.lock().unwrap_or_else(|p| p.into_inner());
        for (key, n) in admitted {
            let spent = m.entry(key).or_default();
            *spent = spent.saturating_add(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let l = TrapLimits::default();
        assert_eq!(shape_trap("http://a/x/y", "/x/y", &l), None);
        assert_eq!(
            shape_trap("http://a/x/a/x/b/x", "/x/a/x/b/x", &l),
            Some(TrapKind::RepeatedSegment)
        );
        assert_eq!(shape_trap("http://a/x/x", "/x/x", &l), None);

        let deep: String = (0..40).map(|i| format!("/s{i}")).collect::<String>();
        assert_eq!(shape_trap("http://a", &deep, &l), Some(TrapKind::PathDepth));
        let long = format!("http://a/{}", "x".repeat(3000));
        assert_eq!(shape_trap(&long, "/x", &l), Some(TrapKind::Length));
    }

    #[test]
    fn scopes_and_budget() {
        let seeds = vec!["www.site-1.sim".to_string()];
        let lim = TrapLimits {
            host_budget: 2,
            ..TrapLimits::default()
        };
        let f = Filter::new(
            SeedScope::of(Scope::Host, &seeds),
            None,
            Regex::new("/private").ok(),
            lim.clone(),
        );
        let u = |s: &str| url::Url::parse(s).unwrap();
        assert_eq!(f.judge(&u("http://www.site-1.sim/a")), Verdict::Admit);
        assert_eq!(f.judge(&u("http://blog.site-1.sim/a")), Verdict::OutOfScope);
        assert_eq!(
            f.judge(&u("http://www.site-1.sim/private/a")),
            Verdict::OutOfScope
        );
        assert!(f.try_charge("h") && f.try_charge("h"));
        assert!(!f.try_charge("h") && f.try_charge("g"));
        f.refund("h");
        assert!(f.try_charge("h") && !f.try_charge("h"));
        let f = Filter::new(
            SeedScope::of(Scope::Domain, ["www.example.co.uk"]),
            None,
            None,
            lim,
        );
        assert!(f.host_in_scope("blog.example.co.uk") && !f.host_in_scope("other.co.uk"));
        // An IP-literal seed is its own domain: not every address that ends
        // in the same two numbers (the list's default rule reads `2.1` as a
        // domain under the suffix `1`).
        let lim = TrapLimits::default();
        let f = Filter::new(
            SeedScope::of(Scope::Domain, ["192.0.2.1"]),
            None,
            None,
            lim.clone(),
        );
        assert!(f.host_in_scope("192.0.2.1"));
        assert!(!f.host_in_scope("10.0.2.1") && !f.host_in_scope("2.1"));
        let f = Filter::new(
            SeedScope::of(Scope::Domain, ["[2001:db8::1]"]),
            None,
            None,
            lim,
        );
        assert!(f.host_in_scope("[2001:db8::1]") && !f.host_in_scope("[2001:db8::2]"));
    }

    #[test]
    fn a_seed_scope_keeps_each_host_or_domain_once() {
        let hosts: Vec<String> = (0..3000)
            .map(|i| format!("h{}.site-{}.test", i % 30, i % 3))
            .collect();
        let by_host = SeedScope::of(Scope::Host, &hosts);
        let by_domain = SeedScope::of(Scope::Domain, &hosts);
        let anywhere = SeedScope::of(Scope::Any, &hosts);
        assert_eq!((by_host.len(), by_domain.len()), (30, 3));
        assert!(anywhere.is_empty() && anywhere.admits("elsewhere.test"));
        for h in &hosts {
            assert!(by_host.admits(h) && by_domain.admits(h));
        }
        assert!(!by_host.admits("h30.site-0.test") && by_domain.admits("h30.site-0.test"));
        assert!(!by_host.admits("site-0.test") && by_domain.admits("site-0.test"));
        assert!(!by_domain.admits("site-3.test") && !by_host.admits(""));
    }
}
