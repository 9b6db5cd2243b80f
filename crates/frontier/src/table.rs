//! The in-memory side: crawls, queue heads and the two-level round-robin.
//!
//! ```text
//! domains: [ (crawl 0, "example.com") -> [q3, q9, q12], cursor 1 ]
//!          [ (crawl 0, "other.org")   -> [q4],          cursor 0 ]
//!          ...
//! ring:    [1, 0, ...]   domain indexes in serving order   <- Table::cursor (a position)
//! queues:  qid -> Queue { rec (durable), last serve, leases, due hint }   dense, by qid
//! keys:    (crawl, key) -> qid                                            qids hashed only
//! ```
//! (`queues` and `keys` are drawn in `queues.rs`.)
//!
//! A `get` walks the domain ring from `cursor` with deficit round-robin (the
//! ring is re-sorted at each round, see `ring`): a
//! domain's turn is worth `max_urls_per_queue` URLs, drawn from as many of its
//! hosts (rotating) as it takes, so a site with 1,000 subdomains of two URLs
//! each gets the same share of URLs as a single host with a long backlog. Memory is per queue, never per URL
//! (apart from leases in flight), measured by `examples/table_cost.rs` (counting allocator, 1M
//! queues): **242 B per queue when every host is its own registrable domain** (a broad crawl),
//! 172 B with 16 hosts per domain (382 and 208 before the domain side was slimmed, `domains.rs`):
//! the 128-byte `Queue`, its key once, ~17 B of key index, and per domain a 56-byte `Domain`
//! (its name a suffix of a queue's key, its first queue id inline), ~17 B of domain index and
//! 4 B of ring; plus
//! 60-130 B per lease in flight (entries of 24 + 32 B in two hash maps at
//! their load factor); an idle queue holds no lease memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use mgz_seen::SeenSet;

pub use crate::domains::Domain;
use crate::domains::{DomainIndex, DomainName};
use crate::keyindex::KeyIndex;
use crate::queues::Queues;
use crate::records::{CrawlRec, QueueRec};
use crate::slim::SlimMap;

/// Lease key inside a queue: (next_fetch secs, seq).
pub type LeaseKey = (u64, u64);

/// One queue's head state in RAM.
#[derive(Debug)]
pub struct Queue {
    /// Durable part.
    pub rec: QueueRec,
    /// Index into [`Table::domains`].
    pub domain: u32,
    /// When URLs were last served from it (ms).
    pub last_serve_ms: u64,
    /// URLs in flight: sched position → lease expiry (ms).
    pub leases: SlimMap<LeaseKey, u64>,
    /// No lease expires before this (ms); may be stale-low, never stale-high.
    pub lease_min_expiry_ms: u64,
    /// No unleased pending URL is due before this (secs); stale-low only.
    pub due_hint_s: u32,
    /// Last `get` call that served it (each queue serves once per call).
    pub stamp: u64,
    /// Scans of `sched` start here: every pending entry before it is leased.
    /// Skipping the head this way avoids re-reading the tombstones that
    /// completed URLs leave at the front of the queue (the LSM queue trap).
    pub scan_from: LeaseKey,
    /// The same mark in `disc`: a (flagged) seq; every `disc` entry of the
    /// queue with a lower seq is leased.
    pub disc_from: u64,
    /// Highest `disc` segment that may hold entries of the queue.
    pub disc_hi: u32,
    /// Leased URLs by xxh3-128 of their canonical text, so completing one
    /// needs no store read; an entry counts only while `leases` holds its key.
    pub by_url: SlimMap<u128, LeaseKey>,
    /// Whether its full record is in the store (else the next write of its
    /// counters writes the full record).
    pub stored: bool,
    /// Whether an unfolded counter record names it (it is then in
    /// [`CounterLog::unfolded`](crate::counters::CounterLog::unfolded)).
    pub unfolded: bool,
}

/// A crawl's seen set behind a lock of its own, so that `put_discovered`
/// can insert a batch into it while the table lock is free (see `put`).
///
/// Lock order: the table lock, then this one; code that holds this lock
/// never waits for the table lock. The set is replaced (a new `SharedSeen`)
/// only when its crawl is made anew or loaded at open, so
/// [`SharedSeen::same`] tells whether a set taken out earlier is still the
/// crawl's.
#[derive(Clone)]
pub struct SharedSeen(Arc<Mutex<Box<dyn SeenSet>>>);

impl SharedSeen {
    /// Shares `set`.
    pub fn new(set: Box<dyn SeenSet>) -> Self {
        SharedSeen(Arc::new(Mutex::new(set)))
    }

    /// The set (a poisoned lock is taken over: a panic inside a set leaves
    /// it as consistent as the set makes it, as before the lock existed).
    pub fn lock(&self) -> MutexGuard<'_, Box<dyn SeenSet>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `self` and `other` are the same set.
    pub fn same(&self, other: &SharedSeen) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A crawl in RAM: its record and its seen set (its queues are found
/// through [`Table::qid`]).
pub struct Crawl {
    /// Durable part.
    pub rec: CrawlRec,
    /// Keys of every URL ever stored in the crawl (and not deleted since the last rebuild).
    pub seen: SharedSeen,
    /// URLs were deleted since the seen set was built: a "seen" answer must be checked in the store.
    pub dirty: bool,
}

/// `secs` as a u32 (seconds since 1970 fit until 2106), larger ones
/// clamped: for hints that may be low, never high.
pub fn secs32(secs: u64) -> u32 {
    u32::try_from(secs).unwrap_or(u32::MAX)
}

/// All in-memory state, guarded by the frontier's mutex.
#[derive(Default)]
pub struct Table {
    /// Crawl name → id.
    pub crawl_ids: HashMap<String, u32>,
    /// Crawl id → crawl.
    pub crawls: HashMap<u32, Crawl>,
    /// Queue id → queue.
    pub queues: Queues,
    /// (crawl, queue key) → queue id.
    pub keys: KeyIndex,
    /// Every domain, by index (the order first seen; a domain never moves).
    pub domains: Vec<Domain>,
    /// The domain ring: indexes into `domains` in serving order, re-sorted
    /// at each round (see `ring`).
    pub ring: Vec<u32>,
    /// Whether a domain was served since the ring was last sorted.
    pub ring_moved: bool,
    /// Ring positions from here on held, at the last sort, only domains
    /// with no pending URL (see `ring`); trusted while `grows` equals
    /// `idle_at`.
    pub idle_from: usize,
    /// [`Table::grows`] at the sort that set `idle_from`.
    pub idle_at: Option<u64>,
    /// Domains `get` calls visited so far (read by the tests).
    pub ring_visits: u64,
    /// (crawl, domain name) → index in `domains`.
    pub domain_index: DomainIndex,
    /// Ring position of the next domain to serve.
    pub cursor: usize,
    /// `disc` ranges opened by `get` calls so far (read by the tests).
    pub disc_ranges: u64,
    /// Next queue id.
    pub next_qid: u32,
    /// Next crawl id.
    pub next_crawl: u32,
    /// Next discovery sequence number.
    pub next_seq: u64,
    /// Counter of `get` calls (for [`Queue::stamp`]).
    pub get_calls: u64,
    /// Bumped whenever a queue may gain a pending URL (a URL made pending,
    /// a queue added, counters loaded): see [`Domain::empty_at`]. Only
    /// these raise a pending count; completions, deletes and purges lower it.
    pub grows: u64,
    /// Whether `get` serves anything.
    pub active: bool,
    /// Whether seen-set changes are written to the seen log.
    pub logging: bool,
    /// Segment bits of `disc` (the store's).
    pub seg_bits: u8,
    /// Seen-log records of the write under way (one frame at commit).
    pub log_buf: Vec<u8>,
    /// Counter records not folded into queue records yet.
    pub counters: crate::counters::CounterLog,
    /// `put_discovered` calls between their two holds of the table lock,
    /// inserting into a seen set meanwhile (see `put`): a seen snapshot
    /// waits for none to be left, so every key it holds was decided.
    pub seen_staged: usize,
    /// A seen snapshot is waiting for `seen_staged` to reach 0: batches
    /// are decided in one hold meanwhile, so it does not wait for ever
    /// under writers that keep overlapping.
    pub staging_paused: bool,
}

/// The registrable domain of a queue key (the key itself when it has none,
/// e.g. an IP address or a custom key): the unit of fairness. An IP literal
/// is its own domain (the Public Suffix List's default rule would make
/// `192.0.2.1` and `10.0.2.1` one domain, `2.1`, sharing one turn).
pub fn registrable_domain(key: &str) -> String {
    mgz_url::host_queue_key(key, mgz_url::QueueKeyKind::RegistrableDomain).to_string()
}

impl Table {
    /// Adds queue `qid` with record `rec` to the maps and the ring.
    pub fn insert_queue(&mut self, qid: u32, rec: QueueRec) {
        // A queue put in the place of another takes it out of its domain too.
        self.remove_queue(qid);
        let dname = registrable_domain(&rec.key);
        let found = self
            .domain_index
            .find(&self.domains, &self.queues, rec.crawl, &dname);
        // A new domain is indexed once the queue its name points into is in.
        let (d, new_domain) = match found {
            Some(d) => (d as usize, false),
            None => {
                self.domains.push(Domain::new(
                    rec.crawl,
                    DomainName::new(&dname, qid, &rec.key),
                ));
                (self.domains.len() - 1, true)
            }
        };
        let id = u32::try_from(d).unwrap_or(u32::MAX);
        self.domains[d].queues.push(qid);
        self.grows += 1;
        self.next_qid = self.next_qid.max(qid + 1);
        let cur_seg = crate::disc::seg_of(self.next_seq, self.seg_bits);
        self.queues.insert(
            qid,
            Queue {
                rec,
                domain: id,
                last_serve_ms: 0,
                leases: SlimMap::default(),
                lease_min_expiry_ms: u64::MAX,
                due_hint_s: 0,
                stamp: 0,
                scan_from: (0, 0),
                // A new queue has no `disc` entry before the current segment
                // (`recover::load` widens this for stored queues).
                disc_from: crate::disc::seg_start(cur_seg, self.seg_bits),
                disc_hi: cur_seg,
                stored: false,
                unfolded: false,
                by_url: SlimMap::default(),
            },
        );
        self.keys.insert(&self.queues, qid);
        if new_domain {
            self.domain_index.insert(&self.domains, &self.queues, id);
            self.ring.push(id);
        }
    }

    /// Removes queue `qid` from the maps and the ring.
    pub fn remove_queue(&mut self, qid: u32) -> Option<Queue> {
        let q = self.queues.remove(&qid)?;
        self.keys.remove(q.rec.crawl, &q.rec.key, qid);
        if let Some(d) = self.domains.get_mut(q.domain as usize) {
            d.unlink(qid, &q.rec.key, &self.queues);
        }
        Some(q)
    }

    /// The qid of `key` in crawl `crawl`, if it exists.
    pub fn qid(&self, crawl: u32, key: &str) -> Option<u32> {
        self.keys.find(&self.queues, crawl, key)
    }

    /// The qids of crawl `crawl`'s queues, ascending.
    pub fn crawl_qids(&self, crawl: u32) -> Vec<u32> {
        let of_crawl = self.queues.iter().filter(|(_, q)| q.rec.crawl == crawl);
        of_crawl.map(|(qid, _)| qid).collect()
    }

    /// Marks `key` (of queue `qid`) seen in crawl `crawl`; true if it was
    /// new. New keys are recorded for the seen log, with the schedule
    /// position `at` of a URL that gets no `urls` entry (see `pending`).
    pub fn seen_insert(&mut self, crawl: u32, qid: u32, key: &[u8], at: Option<LeaseKey>) -> bool {
        let Some(c) = self.crawls.get_mut(&crawl) else {
            return false;
        };
        let new = c.seen.lock().insert(key);
        if new && self.logging {
            match at {
                Some(at) => crate::seenlog::push_key_at(&mut self.log_buf, (crawl, qid), key, at),
                None => crate::seenlog::push_key(&mut self.log_buf, crawl, qid, key),
            }
        }
        new
    }

    /// Records new key `key` of queue `qid` for the seen log, at schedule
    /// position `at` (see [`Table::seen_insert`]); for keys a batch insert
    /// found new (`put`).
    pub fn log_seen(&mut self, (crawl, qid): (u32, u32), key: &[u8], at: LeaseKey) {
        if self.logging {
            crate::seenlog::push_key_at(&mut self.log_buf, (crawl, qid), key, at);
        }
    }

    /// Marks crawl `crawl` dirty: URLs were deleted, "seen" answers need checking.
    pub fn set_dirty(&mut self, crawl: u32) {
        if let Some(c) = self.crawls.get_mut(&crawl) {
            c.dirty = true;
            if self.logging {
                crate::seenlog::push_dirty(&mut self.log_buf, crawl);
            }
        }
    }

    /// Politeness delay of a queue in ms.
    pub fn delay_ms(&self, q: &Queue) -> u64 {
        q.rec.delay_ms.get().map(u64::from).unwrap_or_else(|| {
            self.crawls
                .get(&q.rec.crawl)
                .map_or(crate::records::DEFAULT_DELAY_MS, |c| c.rec.default_delay_ms)
        })
    }
}

impl Queue {
    /// Drops expired leases and returns how many are still in flight.
    pub fn live_leases(&mut self, now_ms: u64) -> usize {
        if self.lease_min_expiry_ms <= now_ms {
            // The first expired entry of each keyspace (`sched`, `disc`).
            let mut first_expired: [Option<LeaseKey>; 2] = [None, None];
            self.leases.retain(|k, exp| {
                let live = *exp > now_ms;
                if !live {
                    let f = &mut first_expired[usize::from(crate::disc::is_disc(*k))];
                    *f = Some(f.map_or(*k, |f| f.min(*k)));
                }
                live
            });
            if first_expired.iter().any(Option::is_some) {
                let leases = &self.leases;
                self.by_url.retain(|_, lk| leases.contains_key(lk));
                // Their URLs are unleased pending entries again, maybe due.
                self.due_hint_s = 0;
                for k in first_expired.into_iter().flatten() {
                    self.lower_marks(k);
                }
            }
            self.lease_min_expiry_ms = self.leases.values().copied().min().unwrap_or(u64::MAX);
        }
        self.leases.len()
    }

    /// Notes a pending entry added at `key` (due at `key.0`) in segment
    /// `seg` (0 for `sched`).
    pub fn added(&mut self, key: LeaseKey, seg: u32) {
        self.due_hint_s = self.due_hint_s.min(secs32(key.0));
        self.disc_hi = self.disc_hi.max(seg);
        self.lower_marks(key);
    }

    /// Moves the scan mark of `key`'s keyspace back to `key` if it is past it.
    fn lower_marks(&mut self, key: LeaseKey) {
        if crate::disc::is_disc(key) {
            self.disc_from = self.disc_from.min(key.1);
        } else {
            self.scan_from = self.scan_from.min(key);
        }
    }

    /// Whether an unleased pending URL may be due now (cheap, may say yes wrongly).
    pub fn may_have_due(&self, now_ms: u64) -> bool {
        if self.rec.pending as usize <= self.leases.len() {
            return false;
        }
        u64::from(self.due_hint_s) * 1000 <= now_ms
    }
}

#[cfg(test)]
mod tests {
    use super::registrable_domain;

    #[test]
    fn each_ip_literal_key_is_its_own_domain() {
        assert_eq!(registrable_domain("a.b.example.co.uk"), "example.co.uk");
        assert_eq!(registrable_domain("www.site-1.sim"), "site-1.sim");
        assert_eq!(registrable_domain("192.0.2.1"), "192.0.2.1");
        assert_eq!(registrable_domain("10.0.2.1"), "10.0.2.1");
        assert_eq!(registrable_domain("[2001:db8::1]"), "[2001:db8::1]");
        // Custom keys (URLFrontier clients choose any) stay whole or group
        // as host names do; none panics.
        assert_eq!(registrable_domain("localhost"), "localhost");
        for odd in ["", "my queue", "..", "[", "a:b"] {
            let _ = registrable_domain(odd);
        }
    }
}
