//! The crawler's view of the PowerCache frontier, plus the per-depth
//! pending counts that drive breadth-first waves.
//!
//! The crawl opens the frontier with OS-buffer durability (see
//! `run::open_shared`): a call never waits for an fsync, it costs tens of
//! microseconds of CPU (a page-cache read at worst). So calls run on the
//! calling task's thread: handing each to the blocking pool cost two thread
//! switches (futex wake, context switch) per call, three calls per page —
//! more than the calls themselves. Only opening (the census), flushing and
//! statistics over the whole frontier go to the blocking pool.
//!
//! Waves: URLs are fetched depth by depth. While any URL of depth `W` is
//! pending, leases of deeper URLs are handed back for a second. So a URL is
//! always first discovered at its least depth (links cost one, redirects
//! none), which makes `--max-depth` exact: the crawl reaches precisely the
//! pages within that many links of a seed, whatever order hosts progress in.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use mgz_frontier::{Frontier, GetParams, KnownItem, Lowered, PutOutcome, UrlItem, UrlRecord};

use crate::CrawlError;

/// Whether a URL waits for a retry (network error, 5xx, 429/503, robots
/// unreachable, its host's turn far off). Retrying URLs do not hold their
/// wave back: a page that fails for minutes must not stall the whole crawl.
/// (Should it succeed later, its links may be found after a deeper path to
/// them; documented.)
pub fn is_retrying(meta: &mgz_frontier::Metadata) -> bool {
    ["tries", "throttled", "robots_tries", "far_turn"]
        .iter()
        .any(|k| meta.contains_key(*k))
}

/// Frontier handle plus pending counts per depth.
pub struct Queue {
    frontier: Arc<Frontier>,
    pending: Mutex<Vec<u64>>,
    retrying: Mutex<Vec<u64>>,
    /// URLs whose depth was lowered while leased (see [`Queue::lower`]),
    /// and the lock that orders every depth-rewriting `put_known`.
    lowered: Arc<Mutex<std::collections::HashMap<String, u32>>>,
    /// Queues this crawl blocked (429/503), and until when (Unix seconds),
    /// for the status page.
    blocked: Mutex<std::collections::BTreeMap<String, u64>>,
}

fn ferr<E: std::fmt::Display + 'static>(e: E) -> CrawlError {
    let any: &dyn std::any::Any = &e;
    match any.downcast_ref::<mgz_frontier::FrontierError>() {
        Some(mgz_frontier::FrontierError::Poisoned(_)) => {
            CrawlError::FrontierPoisoned(e.to_string())
        }
        _ => CrawlError::Frontier(e.to_string()),
    }
}

/// Seconds since the epoch.
pub fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Queue {
    /// Wraps `frontier`, counting the URLs it already holds (resume).
    /// Also returns the URLs admitted per host so far (for the budgets).
    pub async fn open(
        frontier: Arc<Frontier>,
        policy: mgz_url::Policy,
    ) -> Result<(Queue, std::collections::HashMap<u64, u64>), CrawlError> {
        let f = frontier.clone();
        let started = std::time::Instant::now();
        let c = tokio::task::spawn_blocking(move || census(&f, &policy, None))
            .await
            .map_err(ferr)??;
        tracing::info!(
            census_s = started.elapsed().as_secs_f64(),
            hosts = c.per_host.len(),
            "frontier counted"
        );
        let q = Queue {
            frontier,
            pending: Mutex::new(c.pending),
            retrying: Mutex::new(c.retrying),
            lowered: Arc::default(),
            blocked: Mutex::default(),
        };
        Ok((q, c.per_host))
    }

    /// Counts the pending and retrying URLs per depth again from the
    /// frontier (as at open) and returns whether they differed. Only while
    /// nothing is leased: a lease's count moves when it is settled, and a
    /// URL written back (below) would lose its lease.
    ///
    /// A URL not yet a retry that is due more than `wait` from now, by its
    /// own schedule or its queue's block (a 429's `Retry-After: 3600`),
    /// becomes one (`far_turn`, written back to the frontier, as
    /// `worker::hand_back` marks a lease whose turn is that far): the crawl
    /// does not wait for it, it stays in the state for a later run. Without
    /// this, URLs handed back to a queue just before a 429 blocked it for an
    /// hour held their wave, and the crawl's end, for that hour. At most
    /// [`PARK_PER_PASS`] URLs are written per call; the rest stay counted
    /// pending until the next.
    pub async fn recount(
        &self,
        policy: mgz_url::Policy,
        wait: Duration,
    ) -> Result<Recounted, CrawlError> {
        let (mut c, parked) = self
            .call_blocking(move |f| -> Result<(Census, Vec<u64>), CrawlError> {
                let mut park = Park {
                    horizon: now_s().saturating_add(wait.as_secs()),
                    blocked: f.blocked_queues("").into_iter().collect(),
                    found: Vec::new(),
                };
                let c = census(f, &policy, Some(&mut park))?;
                let mut parked = Vec::new();
                let items: Vec<KnownItem> = (park.found.into_iter())
                    .map(|mut rec| {
                        bump(&mut parked, rec.depth);
                        crate::worker::bump_meta(&mut rec.metadata, "far_turn");
                        let (depth, at) = (rec.depth, rec.next_fetch);
                        known(rec, depth, at)
                    })
                    .collect();
                for chunk in items.chunks(1024) {
                    f.put_known(chunk).map_err(ferr)?;
                }
                Ok((c, parked))
            })
            .await??;
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut r = self.retrying.lock().unwrap_or_else(|e| e.into_inner());
        // Drift is judged on the counts the census took, before the move.
        let trim = |v: &[u64]| v.iter().rposition(|&n| n > 0).map_or(0, |i| i + 1);
        let drifted = p[..trim(&p)] != c.pending[..trim(&c.pending)]
            || r[..trim(&r)] != c.retrying[..trim(&c.retrying)];
        for (d, &n) in parked.iter().enumerate() {
            c.pending[d] -= n;
            if c.retrying.len() <= d {
                c.retrying.resize(d + 1, 0);
            }
            c.retrying[d] += n;
        }
        *p = c.pending;
        *r = c.retrying;
        Ok(Recounted {
            drifted,
            parked: parked.iter().sum(),
        })
    }

    /// Runs a short frontier call here (see the module docs).
    async fn call<T>(&self, f: impl FnOnce(&Frontier) -> T) -> Result<T, CrawlError> {
        Ok(f(&self.frontier))
    }

    /// Runs a long frontier call (a flush, a scan) on the blocking pool.
    async fn call_blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Frontier) -> T + Send + 'static,
    ) -> Result<T, CrawlError> {
        let fr = self.frontier.clone();
        tokio::task::spawn_blocking(move || f(&fr))
            .await
            .map_err(ferr)
    }

    /// The counts a URL sits in: retrying or pending.
    fn counts(&self, retrying: bool) -> &Mutex<Vec<u64>> {
        if retrying {
            &self.retrying
        } else {
            &self.pending
        }
    }

    pub(crate) fn add_pending(&self, depth: u32, delta: i64) {
        add(&self.pending, depth, delta);
    }

    /// Moves a URL of `depth` between the pending and retrying counts.
    pub fn set_retrying(&self, depth: u32, retrying: bool) {
        let (from, to) = if retrying {
            (&self.pending, &self.retrying)
        } else {
            (&self.retrying, &self.pending)
        };
        add(from, depth, -1);
        add(to, depth, 1);
    }
}

fn add(counts: &Mutex<Vec<u64>>, depth: u32, delta: i64) {
    {
        let mut p = counts.lock().unwrap_or_else(|e| e.into_inner());
        let d = depth as usize;
        if p.len() <= d {
            p.resize(d + 1, 0);
        }
        p[d] = p[d].saturating_add_signed(delta);
    }
}

impl Queue {
    /// The shallowest depth with pending URLs, `None` when nothing is pending.
    pub fn wave(&self) -> Option<u32> {
        let p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.iter().position(|&n| n > 0).map(|d| d as u32)
    }

    /// Pending URLs, retrying ones included, at depths up to `max`.
    pub fn pending_within(&self, max: u32) -> u64 {
        let sum = |m: &Mutex<Vec<u64>>| -> u64 {
            let counts = m.lock().unwrap_or_else(|e| e.into_inner());
            counts.iter().take(max as usize + 1).sum()
        };
        sum(&self.pending) + sum(&self.retrying)
    }

    /// Total pending URLs, retrying ones included.
    pub fn pending(&self) -> u64 {
        let sum = |m: &Mutex<Vec<u64>>| -> u64 {
            m.lock().unwrap_or_else(|e| e.into_inner()).iter().sum()
        };
        sum(&self.pending) + sum(&self.retrying)
    }

    /// Puts discovered URLs; hands them back with the outcome of each.
    pub async fn discover(
        &self,
        items: Vec<UrlItem>,
    ) -> Result<(Vec<UrlItem>, Vec<PutOutcome>), CrawlError> {
        if items.is_empty() {
            return Ok((items, Vec::new()));
        }
        let (items, out) = self
            .call(move |f| {
                let out = f.put_discovered(&items);
                (items, out)
            })
            .await?;
        let out = out.map_err(ferr)?;
        for (o, item) in out.iter().zip(&items) {
            if *o == PutOutcome::New {
                self.add_pending(item.depth, 1);
            }
        }
        Ok((items, out))
    }

    /// Leases up to `queues` queues × `per_turn` URLs for `lease` (whole
    /// seconds, at least 1: the frontier reads 0 as its own default), with
    /// at most `per_queue` of a queue's URLs in flight.
    pub async fn lease(
        &self,
        queues: u32,
        per_queue: u32,
        per_turn: u32,
        lease: Duration,
    ) -> Result<Vec<UrlRecord>, CrawlError> {
        let params = GetParams {
            max_queues: queues,
            max_urls_per_queue: per_queue,
            max_urls_per_turn: per_turn,
            delay_requestable: u32::try_from(lease.as_secs()).unwrap_or(u32::MAX).max(1),
            ..GetParams::default()
        };
        self.call(move |f| f.get(&params)).await?.map_err(ferr)
    }

    /// Marks `rec` completed (never served again); `was_retrying` says
    /// which count it sat in.
    pub async fn complete(&self, rec: UrlRecord, was_retrying: bool) -> Result<(), CrawlError> {
        let depth = rec.depth;
        self.reschedule(rec, 0).await?;
        add(self.counts(was_retrying), depth, -1);
        Ok(())
    }

    /// The depth `rec` should have: lower than leased when a redirect found a
    /// shorter path to it meanwhile.
    pub fn effective_depth(&self, rec: &UrlRecord) -> u32 {
        let l = self.lowered.lock().unwrap_or_else(|e| e.into_inner());
        if l.is_empty() {
            return rec.depth; // almost always: no URL hashed per page
        }
        l.get(&rec.url).map_or(rec.depth, |&d| d.min(rec.depth))
    }

    /// A redirect reached `url` at `depth`, but it was already queued deeper:
    /// move it to `depth` (0-1 BFS: a redirect costs no hop, so its target
    /// may be shallower than a link found first). A URL in flight keeps its
    /// lease (the frontier leaves it alone: re-putting it would hand it out
    /// again while it is fetched, which fetched it twice); the depth noted
    /// here is what its worker discovers links at and completes it with.
    ///
    /// A URL moved is counted again at its new depth in the count it sits
    /// in: retrying (waiting out a 503, say) or pending. Its metadata is
    /// read under the lock that orders every depth-rewriting `put_known`,
    /// so no hand-back changes it between the read and the move.
    pub async fn lower(&self, url: String, depth: u32) -> Result<(), CrawlError> {
        let lowered = self.lowered.clone();
        let moved = self
            .call(move |f| -> Result<Option<(u32, bool)>, CrawlError> {
                let mut l = lowered.lock().unwrap_or_else(|e| e.into_inner());
                let retrying = match f.url_status("", &url, None) {
                    Ok(rec) => is_retrying(&rec.metadata),
                    Err(mgz_frontier::FrontierError::NotFound(_)) => return Ok(None),
                    Err(e) => return Err(ferr(e)),
                };
                Ok(match f.lower_depth("", &url, depth).map_err(ferr)? {
                    Lowered::Moved { from } => Some((from, retrying)),
                    Lowered::InFlight { .. } => {
                        l.insert(url, depth);
                        None
                    }
                    _ => None,
                })
            })
            .await??;
        if let Some((old, retrying)) = moved {
            let counts = self.counts(retrying);
            add(counts, old, -1);
            add(counts, depth, 1);
        }
        Ok(())
    }

    /// Hands `rec` back to be served at `at_s` (seconds since the epoch, > 0).
    ///
    /// A URL lowered while it was leased ([`Queue::lower`] leaves its record
    /// and counts alone) is written at its new depth; handed back pending,
    /// its count moves there too (in the retrying counts when its metadata
    /// says it is retrying, as [`Queue::complete`] counts it), so the
    /// counts per depth follow the records and the waves can end.
    pub async fn reschedule(&self, rec: UrlRecord, at_s: u64) -> Result<(), CrawlError> {
        let lowered = self.lowered.clone();
        let (from, retrying) = (rec.depth, is_retrying(&rec.metadata));
        let to = self
            .call(move |f| {
                let mut l = lowered.lock().unwrap_or_else(|e| e.into_inner());
                let depth = l.get(&rec.url).map_or(rec.depth, |&d| d.min(rec.depth));
                if at_s == 0 {
                    l.remove(&rec.url);
                }
                f.put_known(&[known(rec, depth, at_s)]).map(|_| depth)
            })
            .await?
            .map_err(ferr)?;
        if at_s > 0 && to < from {
            let counts = self.counts(retrying);
            add(counts, from, -1);
            add(counts, to, 1);
        }
        Ok(())
    }
}

fn known(rec: UrlRecord, depth: u32, next_fetch: u64) -> KnownItem {
    KnownItem {
        item: rec.into_item(depth),
        next_fetch,
    }
}

impl Queue {
    /// Blocks a queue until `until_s`.
    pub async fn block(&self, key: String, until_s: u64) -> Result<(), CrawlError> {
        if let Ok(mut b) = self.blocked.lock() {
            b.retain(|_, until| *until > now_s());
            b.insert(key.clone(), until_s);
        }
        self.call(move |f| f.block_queue_until("", &key, until_s))
            .await?
            .map_err(ferr)
    }

    /// Sets the frontier's default politeness delay (to the millisecond).
    pub async fn set_default_delay(&self, delay: Duration) -> Result<(), CrawlError> {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.call(move |f| f.set_delay_ms("", None, ms))
            .await?
            .map_err(ferr)
    }

    /// Sets queue `key`'s own politeness delay (whole seconds) for this
    /// run: the next run's start clears it ([`Queue::clear_queue_delays`]).
    /// The crawler's gates space requests whatever the frontier's delay
    /// is: it only paces the leases.
    pub async fn set_queue_delay(&self, key: String, secs: u32) -> Result<(), CrawlError> {
        self.call(move |f| f.set_delay("", Some(&key), secs))
            .await?
            .map_err(ferr)
    }

    /// Gives every queue the crawl's default delay again (see
    /// [`Queue::set_queue_delay`]; the crawler sets a queue's own delay only
    /// for a host it gave up, for that run).
    pub async fn clear_queue_delays(&self) -> Result<(), CrawlError> {
        let cleared = self
            .call(|f| f.clear_queue_delays(""))
            .await?
            .map_err(ferr)?;
        if cleared > 0 {
            tracing::debug!(
                queues = cleared,
                "queues given up last run have their delay again"
            );
        }
        Ok(())
    }

    /// The frontier itself (read-only uses: stats, listings).
    pub fn frontier(&self) -> &Arc<Frontier> {
        &self.frontier
    }

    /// Queues blocked by this crawl and still blocked now: `(key, until_s)`.
    pub fn blocked_now(&self) -> Vec<(String, u64)> {
        let now = now_s();
        self.blocked.lock().map_or_else(
            |_| Vec::new(),
            |b| {
                b.iter()
                    .filter(|(_, u)| **u > now)
                    .map(|(k, u)| (k.clone(), *u))
                    .collect()
            },
        )
    }

    /// Heap bytes of the seen set.
    pub fn seen_bytes(&self) -> u64 {
        self.frontier.seen_bytes() as u64
    }

    /// Makes every write durable now.
    pub async fn flush(&self) -> Result<(), CrawlError> {
        self.call_blocking(|f| f.flush()).await?.map_err(ferr)
    }

    /// Flushes, and leaves the frontier as a close does
    /// ([`Frontier::checkpoint`]): the next run opens without replaying a
    /// journal or a seen log (after a million URLs, 1.2 s and 88 MB).
    pub async fn checkpoint(&self) -> Result<(), CrawlError> {
        self.call_blocking(|f| f.checkpoint()).await?.map_err(ferr)
    }
}

/// What the frontier holds at open: pending and retrying counts per depth,
/// and URLs admitted per host (the per-host budget spent so far).
#[derive(Default)]
pub struct Census {
    /// Pending URLs per depth.
    pub pending: Vec<u64>,
    /// Retrying URLs per depth.
    pub retrying: Vec<u64>,
    /// Every URL the frontier holds (completed included), per host (by
    /// [`crate::traps::host_key`]): each was charged to its host's budget
    /// when it was put.
    pub per_host: std::collections::HashMap<u64, u64>,
}

/// What [`Queue::recount`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recounted {
    /// The counts differed from the frontier's (before any parking).
    pub drifted: bool,
    /// URLs turned into retries, due later than the crawl waits for.
    pub parked: u64,
}

/// Most URLs one recount turns into retries (a queue of a million blocked
/// for an hour is written back over several recounts, not held at once).
pub const PARK_PER_PASS: usize = 100_000;

/// The URLs a recount turns into retries: pending, not retrying, due after
/// `horizon` (seconds since the epoch) by their schedule or their queue's
/// block (`blocked`: queue key → end of its block).
struct Park {
    horizon: u64,
    blocked: std::collections::HashMap<String, u64>,
    found: Vec<UrlRecord>,
}

impl Park {
    /// Takes pending `r`, not a retry, when it is due too late (up to
    /// [`PARK_PER_PASS`]).
    fn take(&mut self, r: &UrlRecord) {
        let due = (self.blocked.get(&r.key).copied()).map_or(r.next_fetch, |b| b.max(r.next_fetch));
        if due > self.horizon && self.found.len() < PARK_PER_PASS {
            self.found.push(r.clone());
        }
    }
}

fn bump(counts: &mut Vec<u64>, depth: u32) {
    let d = depth as usize;
    if counts.len() <= d {
        counts.resize(d + 1, 0);
    }
    counts[d] += 1;
}

/// One pass over each of the frontier's keyspaces ([`Frontier::for_each_url`];
/// queue by queue cost a seek per queue and keyspace). With `park`, the
/// pending URLs due too late are also collected there (see
/// [`Queue::recount`]); the counts are still by their metadata.
fn census(
    f: &Frontier,
    policy: &mgz_url::Policy,
    mut park: Option<&mut Park>,
) -> Result<Census, CrawlError> {
    let mut c = Census::default();
    f.for_each_url("", |r| {
        // Stored URLs are canonical: most are recognised without a parse.
        let host = match mgz_url::PlainUrl::check(&r.url, policy) {
            Some(p) => Some(crate::traps::host_key(p.host())),
            None => mgz_url::CanonicalUrl::parse(&r.url, None, policy)
                .ok()
                .map(|u| crate::traps::host_key(u.host())),
        };
        if let Some(h) = host {
            *c.per_host.entry(h).or_default() += 1;
        }
        if r.next_fetch != 0 {
            let counts = if is_retrying(&r.metadata) {
                &mut c.retrying
            } else {
                if let Some(p) = park.as_deref_mut() {
                    p.take(&r);
                }
                &mut c.pending
            };
            bump(counts, r.depth);
        }
        true
    })
    .map_err(ferr)?;
    Ok(c)
}

impl Queue {
    /// URLs the frontier itself counts as not completed.
    pub async fn frontier_pending(&self) -> u64 {
        self.call_blocking(|f| f.stats("", None).size)
            .await
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn queue(dir: &std::path::Path) -> Queue {
        let opts = mgz_frontier::FrontierOptions::default();
        let f = Arc::new(Frontier::open(dir, opts).unwrap());
        f.set_delay("", None, 0).unwrap();
        Queue::open(f, mgz_url::Policy::safe()).await.unwrap().0
    }

    fn item(url: &str, depth: u32) -> UrlItem {
        UrlItem {
            depth,
            ..UrlItem::new(url)
        }
    }

    /// A URL lowered while leased keeps its record and count until it is
    /// handed back; then both move to the new depth, so the waves see it
    /// where it is (they kept a depth-2 count for a URL at depth 1, and a
    /// crawl with deeper URLs left waited for that wave for ever).
    #[tokio::test]
    async fn counts_follow_a_url_lowered_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let q = queue(dir.path()).await;
        let urls = ["http://a.test/0", "http://a.test/p", "http://a.test/z"];
        q.discover(vec![item(urls[0], 1), item(urls[1], 2), item(urls[2], 3)])
            .await
            .unwrap();
        assert_eq!(q.wave(), Some(1));
        let mut leased = q.lease(1, 3, 3, Duration::from_secs(600)).await.unwrap();
        assert_eq!(leased.len(), 3);
        let p = leased.remove(1);
        assert_eq!(p.url, urls[1]);
        q.lower(urls[1].to_string(), 1).await.unwrap();
        // Leased: not moved, but its worker reads the new depth.
        assert_eq!(q.frontier_status(urls[1]).depth, 2);
        assert_eq!(q.effective_depth(&p), 1);
        for rec in leased {
            q.complete(rec, false).await.unwrap();
        }
        assert_eq!(q.wave(), Some(2), "/p is still counted where its record is");
        // Handed back (a retry, a wave's hand-back): record and count move.
        q.reschedule(p, now_s() + 60).await.unwrap();
        assert_eq!(q.frontier_status(urls[1]).depth, 1);
        assert_eq!(q.wave(), Some(1));
        assert_eq!(q.pending_within(1), 1);
        assert_eq!(q.pending(), 1);
    }

    /// A URL waiting for a retry that a redirect reaches at a lesser depth
    /// moves in the retrying counts, where it is counted: moved in the
    /// pending counts, its new depth kept one URL the frontier did not
    /// hold, and the crawl waited for that wave for ever (a CI run that
    /// hung, 1 run in 80 of sim_behaviour's trap test).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_retrying_url_lowered_moves_in_the_retrying_counts() {
        let dir = tempfile::tempdir().unwrap();
        let q = queue(dir.path()).await;
        let url = "http://a.test/busy";
        q.discover(vec![item(url, 4)]).await.unwrap();
        let mut rec = q
            .lease(1, 1, 1, Duration::from_secs(600))
            .await
            .unwrap()
            .remove(0);
        // What a worker does with a 503: retrying, handed back for later.
        rec.metadata.insert("tries".into(), vec!["1".into()]);
        q.set_retrying(rec.depth, true);
        q.reschedule(rec, now_s() + 60).await.unwrap();
        assert_eq!((q.wave(), q.pending()), (None, 1));
        q.lower(url.to_string(), 3).await.unwrap();
        assert_eq!(q.frontier_status(url).depth, 3);
        assert_eq!((q.wave(), q.pending_within(3)), (None, 1));
        let again = q.recount(mgz_url::Policy::safe(), HOUR).await.unwrap();
        assert_eq!(
            again,
            Recounted {
                drifted: false,
                parked: 0
            },
            "the counts agree with the frontier"
        );
    }

    /// A count that drifted from the frontier is taken again from it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_recount_mends_counts_that_drifted() {
        let dir = tempfile::tempdir().unwrap();
        let q = queue(dir.path()).await;
        q.discover(vec![item("http://a.test/1", 1), item("http://a.test/2", 2)])
            .await
            .unwrap();
        let safe = mgz_url::Policy::safe;
        assert!(!q.recount(safe(), HOUR).await.unwrap().drifted, "agree");
        q.add_pending(0, 1); // a URL at depth 0 the frontier does not hold
        assert_eq!(q.wave(), Some(0));
        assert!(q.recount(safe(), HOUR).await.unwrap().drifted, "differed");
        assert_eq!((q.wave(), q.pending()), (Some(1), 2));
    }

    const HOUR: Duration = Duration::from_secs(3600);

    /// URLs due later than the crawl waits for, by their queue's block (a
    /// 429's `Retry-After: 3600` on a host whose URLs were handed back for
    /// the wave) or by their own schedule, become retries at a recount,
    /// marked so in the frontier: their wave no longer waits for them, and
    /// a census (the next run's) counts them where the recount did. A URL
    /// due within the wait stays pending. Before, the blocked host's URLs
    /// held their wave for the hour (a CI run's timeout in
    /// `retries.rs::urls_handed_back_for_a_long_block_do_not_hold_the_crawls_end`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn urls_due_later_than_the_crawl_waits_become_retries_at_a_recount() {
        let dir = tempfile::tempdir().unwrap();
        let q = queue(dir.path()).await;
        let urls = [
            "http://blocked.test/1",
            "http://blocked.test/2",
            "http://late.test/",
            "http://soon.test/",
        ];
        q.discover(urls.iter().map(|u| item(u, 1)).collect())
            .await
            .unwrap();
        // Handed back: one far off by itself, one a few seconds off.
        for rec in q.lease(10, 10, 10, Duration::from_secs(600)).await.unwrap() {
            let at = match rec.key.as_str() {
                "late.test" => now_s() + 7200,
                "soon.test" => now_s() + 2,
                _ => now_s() + 1,
            };
            q.reschedule(rec, at).await.unwrap();
        }
        q.block("blocked.test".into(), now_s() + 3600)
            .await
            .unwrap();
        assert_eq!(q.wave(), Some(1));
        let safe = mgz_url::Policy::safe;
        let r = q.recount(safe(), Duration::from_secs(600)).await.unwrap();
        assert_eq!(
            r,
            Recounted {
                drifted: false,
                parked: 3
            }
        );
        assert_eq!((q.wave(), q.pending_within(1)), (Some(1), 4));
        for url in &urls[..3] {
            assert!(is_retrying(&q.frontier_status(url).metadata), "{url}");
        }
        assert!(!is_retrying(&q.frontier_status(urls[3]).metadata));
        // The frontier still holds them when due: schedule and depth kept.
        assert_eq!(q.frontier_status(urls[2]).depth, 1);
        assert!(q.frontier_status(urls[2]).next_fetch >= now_s() + 7000);
        // Once soon.test's URL is settled, only retries are left.
        let rec = loop {
            if let Some(rec) = q
                .lease(10, 10, 10, Duration::from_secs(600))
                .await
                .unwrap()
                .pop()
            {
                break rec;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(rec.url, urls[3]);
        q.complete(rec, false).await.unwrap();
        assert_eq!((q.wave(), q.pending()), (None, 3));
        let again = q.recount(safe(), Duration::from_secs(600)).await.unwrap();
        assert_eq!(
            again,
            Recounted {
                drifted: false,
                parked: 0
            }
        );
        // A census at open counts them as the recount did.
        drop(q);
        let q = queue(dir.path()).await;
        assert_eq!((q.wave(), q.pending()), (None, 3));
    }

    impl Queue {
        fn frontier_status(&self, url: &str) -> UrlRecord {
            self.frontier.url_status("", url, None).unwrap()
        }
    }
}
