//! Crawl counters (atomics, shared by all workers) and the final summary.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use crate::traps::TrapKind;

/// Live counters.
#[derive(Default)]
pub struct Counters {
    /// Page responses received (robots.txt and sitemaps not included).
    pub pages_fetched: AtomicU64,
    /// 2xx pages stored.
    pub pages_stored: AtomicU64,
    /// Body bytes received.
    pub bytes: AtomicU64,
    /// Discovered URLs already known.
    pub duplicates_skipped: AtomicU64,
    /// URLs not fetched because robots.txt disallows them.
    pub robots_excluded: AtomicU64,
    /// URLs cut by trap limits (the sum of `traps_by_kind`).
    pub traps_cut: AtomicU64,
    /// URLs cut by each trap limit, by [`TrapKind::index`].
    traps_by_kind: [AtomicU64; TrapKind::ALL.len()],
    /// URLs queued by an earlier run that this run's `--include` or
    /// `--exclude` rejects: settled unfetched.
    pub unmatched_queued: AtomicU64,
    /// URLs queued as new.
    pub queued: AtomicU64,
    /// Total length of the URLs queued as new (for the status page's
    /// `HashSet<String>` comparison).
    pub queued_url_bytes: AtomicU64,
    /// robots.txt fetches that failed, whose cause was logged (the first
    /// [`WARNED_ROBOTS`] are logged as warnings).
    pub robots_failures: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
}

/// robots.txt fetch failures logged as warnings per run; later ones at
/// debug level. One failing site says why its URLs wait; a crawl across
/// 100,000 hosts, thousands of them down, must not flood the terminal.
pub const WARNED_ROBOTS: u64 = 10;

impl Counters {
    /// Adds one to `counter`.
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    /// Counts one URL cut by trap limit `kind`.
    pub fn trap(&self, kind: TrapKind) {
        self.traps_cut.fetch_add(1, Relaxed);
        self.traps_by_kind[kind.index()].fetch_add(1, Relaxed);
    }

    /// URLs cut by each trap limit that cut any, by [`TrapKind::name`].
    pub fn traps_by_kind(&self) -> BTreeMap<&'static str, u64> {
        TrapKind::ALL
            .iter()
            .map(|&k| (k.name(), self.traps_by_kind[k.index()].load(Relaxed)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// Counts one error of `kind`.
    pub fn error(&self, kind: &str) {
        let mut e = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        *e.entry(kind.to_string()).or_default() += 1;
    }

    /// Errors by kind.
    pub fn errors(&self) -> BTreeMap<String, u64> {
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Total errors.
    pub fn error_total(&self) -> u64 {
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .sum()
    }
}

/// Peak resident set size of this process (`VmHWM`), bytes.
pub fn peak_rss_bytes() -> u64 {
    proc_status_kb("VmHWM:") * 1024
}

/// Current resident set size (`VmRSS`), bytes.
pub fn rss_bytes() -> u64 {
    proc_status_kb("VmRSS:") * 1024
}

fn proc_status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| {
                    l.strip_prefix(field)
                        .map(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                })
                .flatten()
        })
        .unwrap_or(0)
}

/// The final summary; serialises to the `--json` object.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct Summary {
    /// Page responses received.
    pub pages_fetched: u64,
    /// 2xx pages stored.
    pub pages_stored: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Discovered URLs already known.
    pub duplicates_skipped: u64,
    /// URLs robots.txt excluded.
    pub robots_excluded: u64,
    /// URLs cut as traps.
    pub traps_cut: u64,
    /// The same by trap limit (only those that cut any), for the printed
    /// summary: the `--json` object keeps exactly the issue's keys.
    #[serde(skip)]
    pub traps_by_kind: BTreeMap<&'static str, u64>,
    /// Errors by kind.
    pub errors: BTreeMap<String, u64>,
    /// Wall time, seconds.
    pub elapsed_s: f64,
    /// `pages_fetched / elapsed_s`.
    pub pages_per_s: f64,
    /// Peak RSS of the process, bytes.
    pub peak_rss_bytes: u64,
    /// Seen-set backend of the frontier.
    pub seen_backend: String,
    /// Heap bytes of the seen set.
    pub seen_bytes: u64,
    /// Links of pages at `--max-depth` kept in the state for a deeper rerun
    /// (`STATE/edge`, see [`crate::edge`]); printed, not in `--json`.
    #[serde(skip)]
    pub edge_links: u64,
}

impl Summary {
    /// Snapshot of `c` since `start`.
    pub fn from_counters(
        c: &Counters,
        start: Instant,
        seen_backend: &str,
        seen_bytes: u64,
    ) -> Summary {
        let elapsed_s = start.elapsed().as_secs_f64();
        let fetched = c.pages_fetched.load(Relaxed);
        Summary {
            pages_fetched: fetched,
            pages_stored: c.pages_stored.load(Relaxed),
            bytes: c.bytes.load(Relaxed),
            duplicates_skipped: c.duplicates_skipped.load(Relaxed),
            robots_excluded: c.robots_excluded.load(Relaxed),
            traps_cut: c.traps_cut.load(Relaxed),
            traps_by_kind: c.traps_by_kind(),
            errors: c.errors(),
            elapsed_s,
            pages_per_s: if elapsed_s > 0.0 {
                fetched as f64 / elapsed_s
            } else {
                0.0
            },
            peak_rss_bytes: peak_rss_bytes(),
            seen_backend: seen_backend.to_string(),
            seen_bytes,
            edge_links: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_has_exactly_the_issue_keys() {
        let c = Counters::default();
        c.error("timeout");
        c.error("timeout");
        let s = Summary::from_counters(&c, Instant::now(), "hash", 0);
        let v = serde_json::to_value(&s).unwrap();
        let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "bytes",
                "duplicates_skipped",
                "elapsed_s",
                "errors",
                "pages_fetched",
                "pages_per_s",
                "pages_stored",
                "peak_rss_bytes",
                "robots_excluded",
                "seen_backend",
                "seen_bytes",
                "traps_cut"
            ]
        );
        assert_eq!(v["errors"]["timeout"], 2);
        assert!(peak_rss_bytes() > 0);
    }

    #[test]
    fn traps_are_counted_in_all_and_by_kind() {
        let c = Counters::default();
        c.trap(TrapKind::HostBudget);
        c.trap(TrapKind::Length);
        c.trap(TrapKind::HostBudget);
        let s = Summary::from_counters(&c, Instant::now(), "hash", 0);
        assert_eq!(s.traps_cut, 3);
        let want: BTreeMap<&str, u64> = [("host_budget", 2), ("url_length", 1)].into();
        assert_eq!(s.traps_by_kind, want);
        for (i, k) in TrapKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i);
        }
    }
}
