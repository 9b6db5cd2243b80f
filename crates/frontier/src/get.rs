//! `get`: leasing due URLs, fair across domains, polite per queue.
//!
//! Deficit round-robin over the domain ring: a domain's turn is worth
//! `max_urls_per_queue` URLs (one queue when unlimited), drawn from its hosts
//! in rotation; a turn cut short by `max_queues` resumes at the next call.
//! Each queue serves at most once per call; passes repeat until `max_queues`
//! queues served or a pass finds nothing. A queue is eligible when it is not blocked, its politeness delay
//! has elapsed, its in-flight count is under `max_urls_per_queue`, its crawl
//! limit is not reached and a pending URL may be due (in-RAM hints); it
//! gives at most `max_urls_per_turn` URLs (when set) of that room. Only then
//! is the store read: a prefix scan of its `sched` range, skipping leased
//! entries, stopping at the first URL not yet due.
//!
//! Cost per call: every domain of the ring with a pending URL is visited.
//! A domain whose last turn found no queue with a pending URL is skipped
//! without touching its queues until `Table::grows` moves (a URL made
//! pending, a queue added); the other queues are visited, and one with
//! nothing pending leaves before any lookup. While `grows` stands, the
//! domains a round's sort found with nothing pending (the ring's idle tail,
//! see `ring`) are not visited at all. Late in a crawl, when most queues
//! are empty, a call thus costs about one check per live domain (10M
//! crawler loop over 200,000 hosts: its last tenth took 23 s instead of
//! 112 s with the per-domain skip, docs/BENCHMARKS.md "Session 19"; the
//! idle tail, "Session 31").

use fjall::UserValue;

use crate::codec::{Body, parse_sched_key, sched_key};
use crate::disc::order;
use crate::discscan::DiscCursors;
use crate::error::Result;
use crate::frontier::Frontier;
use crate::table::{LeaseKey, Queue, Table};
use crate::types::{GetParams, UrlRecord, crawl_name};

/// Lease length when the caller passes 0.
const DEFAULT_LEASE_S: u64 = 30;

/// Per-call settings.
struct Ask {
    now_ms: u64,
    lease_ms: u64,
    per_queue: usize,
    /// Most URLs a queue gives in this call (≤ `per_queue`).
    per_turn: usize,
}

/// What a call has leased so far, and its open `disc` iterators (see
/// `discscan`).
#[derive(Default)]
struct Leased {
    out: Vec<UrlRecord>,
    disc: DiscCursors,
}

impl Frontier {
    /// Leases up to `max_queues` × `max_urls_per_queue` due URLs (see [`GetParams`]).
    pub fn get(&self, params: &GetParams) -> Result<Vec<UrlRecord>> {
        let mut t = self.lock_store()?;
        if !t.active {
            return Ok(Vec::new());
        }
        let lease_s = match params.delay_requestable {
            0 => DEFAULT_LEASE_S,
            s => u64::from(s),
        };
        let ask = Ask {
            now_ms: self.now_ms(),
            lease_ms: lease_s * 1000,
            per_queue: limit(params.max_urls_per_queue),
            per_turn: limit(params.max_urls_per_queue).min(limit(params.max_urls_per_turn)),
        };
        let crawl = match &params.crawl {
            Some(name) => match t.crawl_ids.get(crawl_name(name)) {
                Some(&id) => Some(id),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        t.get_calls += 1;
        let mut out = Leased::default();
        if let Some(key) = params.key.as_deref().filter(|k| !k.is_empty()) {
            let qids: Vec<u32> = t
                .crawls
                .iter()
                .filter(|(id, _)| crawl.is_none_or(|c| c == **id))
                .filter_map(|(id, _)| t.qid(*id, key))
                .collect();
            for qid in qids.into_iter().take(limit(params.max_queues)) {
                self.serve_queue(&mut t, qid, usize::MAX, &ask, &mut out)?;
            }
            return Ok(out.out);
        }
        let served = self.serve_ring(&mut t, crawl, limit(params.max_queues), &ask, &mut out);
        t.disc_ranges += out.disc.opened;
        served?;
        Ok(out.out)
    }

    /// The deficit round-robin over domains.
    fn serve_ring(
        &self,
        t: &mut Table,
        crawl: Option<u32>,
        max_queues: usize,
        ask: &Ask,
        out: &mut Leased,
    ) -> Result<()> {
        let n = t.ring.len();
        let mut served = 0;
        let mut p = t.cursor % n.max(1);
        // Positions visited in a row without a queue served; n of them (the
        // whole ring, in one order) end the call. Revisiting a domain in the
        // same call changes nothing but the ring's order, and a sort
        // restarts the count.
        let mut idle = 0;
        while served < max_queues && idle < n {
            if p == 0 && t.start_round() {
                idle = 0;
            }
            if t.idle_past(p) {
                // The rest of the ring has nothing pending (see `ring`).
                idle += n - p;
                p = 0;
                continue;
            }
            t.ring_visits += 1;
            let di = t.ring[p] as usize;
            if crawl.is_some_and(|c| t.domains[di].crawl != c) {
                p = (p + 1) % n;
                idle += 1;
                continue;
            }
            let queues = self.serve_domain(t, di, max_queues - served, ask, out)?;
            served += queues;
            if t.domains[di].deficit() > 0 {
                // Turn interrupted by max_queues: resume it next call.
                t.cursor = p;
                return Ok(());
            }
            p = (p + 1) % n;
            if queues > 0 {
                idle = 0;
                t.ring_moved = true;
                t.cursor = p;
            } else {
                idle += 1;
            }
        }
        Ok(())
    }

    /// One turn of domain `di`: serves its next eligible queues until the
    /// turn's URL budget is spent, `max_queues` queues served, or none is
    /// left. Returns the number of queues served.
    fn serve_domain(
        &self,
        t: &mut Table,
        di: usize,
        max_queues: usize,
        ask: &Ask,
        out: &mut Leased,
    ) -> Result<usize> {
        let len = t.domains[di].queues.len();
        if t.domains[di].empty_at == t.grows {
            return Ok(0);
        }
        if t.domains[di].deficit() == 0 {
            t.domains[di].set_deficit(ask.per_queue);
        }
        let mut served = 0;
        let mut tried = 0;
        // Whether a queue visited in this turn has a pending URL.
        let mut pending = false;
        while tried < len && served < max_queues && t.domains[di].deficit() > 0 {
            let pos = (t.domains[di].cursor as usize + tried) % len;
            let qid = t.domains[di].queues[pos];
            tried += 1;
            let budget = t.domains[di].deficit();
            let got = self.serve_queue(t, qid, budget, ask, out)?;
            if got == 0 {
                pending |= t.queues.get(&qid).is_some_and(|q| q.rec.pending > 0);
                continue;
            }
            served += 1;
            let d = &mut t.domains[di];
            d.cursor = ((pos + 1) % len) as u32; // < len: queue ids are u32
            tried = 0;
            // An unlimited turn (max_urls_per_queue 0) is one queue.
            d.set_deficit(if ask.per_queue == usize::MAX {
                0
            } else {
                d.deficit().saturating_sub(got)
            });
            if served == max_queues {
                return Ok(served);
            }
        }
        t.domains[di].set_deficit(0);
        if served == 0 && !pending {
            // Every queue visited, none with a pending URL (late in a
            // crawl, most domains): skipped until one may gain a URL.
            t.domains[di].empty_at = t.grows;
        }
        Ok(served)
    }

    /// Leases due URLs from queue `qid` if it is eligible; returns how many.
    fn serve_queue(
        &self,
        t: &mut Table,
        qid: u32,
        budget: usize,
        ask: &Ask,
        out: &mut Leased,
    ) -> Result<usize> {
        let stamp = t.get_calls;
        let Some(q) = t.queues.get(&qid) else {
            return Ok(0);
        };
        // A pass visits every queue of the ring, and late in a crawl most
        // have nothing pending: those leave before any hash lookup or copy
        // (they were 60 % of the CPU of the last tenth of a 10M crawler
        // loop, docs/BENCHMARKS.md "Session 19").
        if q.stamp == stamp || q.rec.pending == 0 {
            return Ok(0);
        }
        let delay = t.delay_ms(q);
        let Some(q) = t.queues.get_mut(&qid) else {
            return Ok(0);
        };
        let Some(room) = room(q, delay, ask) else {
            return Ok(0);
        };
        let crawl = match t.crawls.get(&q.rec.crawl) {
            Some(c) => c.rec.name.clone(),
            None => return Ok(0),
        };
        let got = self.lease(q, qid, room.min(budget), ask, &crawl, out)?;
        if got > 0 {
            q.last_serve_ms = ask.now_ms;
            q.stamp = stamp;
        }
        Ok(got)
    }

    /// Scans the queue's `sched` range from its `scan_from` mark and its
    /// `disc` entries from its `disc_from` mark, merged in serving order
    /// (see `disc`), and leases up to `room` due URLs; moves each mark past
    /// the entries now all leased.
    fn lease(
        &self,
        q: &mut Queue,
        qid: u32,
        room: usize,
        ask: &Ask,
        crawl: &str,
        out: &mut Leased,
    ) -> Result<usize> {
        let from = sched_key(qid, q.scan_from.0, q.scan_from.1);
        let to = sched_key(qid, u64::MAX, u64::MAX);
        let sched = self.store.sched.range(from..=to).map(|kv| {
            let (k, v) = kv.into_inner()?;
            let (_, next_fetch, seq) = parse_sched_key(&k)?;
            Ok(((next_fetch, seq), v))
        });
        let disc = self
            .store
            .disc_scan(&mut out.disc, qid, q.disc_from, q.disc_hi);
        let mut heads = [Head::new(Box::new(sched))?, Head::new(Box::new(disc))?];
        let mut got = 0;
        let mut full = false;
        let due = |pos: LeaseKey| pos.0.saturating_mul(1000) <= ask.now_ms;
        // The due head first in serving order; a stream whose head is not
        // due is done (each is in next-fetch order).
        while let Some(i) = pick(&heads, due) {
            let Some((pos, v)) = heads[i].take()? else {
                break;
            };
            match i {
                0 => q.scan_from = (pos.0, pos.1 + 1),
                _ => q.disc_from = pos.1 + 1,
            }
            if q.leases.get(&pos).is_some_and(|&e| e > ask.now_ms) {
                continue;
            }
            let body = Body::decode(&v, &q.rec.key)?;
            let expiry = ask.now_ms + ask.lease_ms;
            q.leases.insert(pos, expiry);
            q.by_url.insert(url_hash(&body.url), pos);
            q.lease_min_expiry_ms = q.lease_min_expiry_ms.min(expiry);
            out.out.push(record(crawl, &q.rec.key, body, pos.0));
            got += 1;
            if got == room {
                full = true;
                break;
            }
        }
        if !full {
            // What is left is not due yet, or leased: nothing is due before
            // the first unread head (a lease expiry resets the hint, see
            // live_leases; an insertion takes the min with its time).
            let next = heads
                .iter()
                .filter_map(|h| h.head.as_ref().map(|(p, _)| p.0));
            q.due_hint_s = next.min().map_or(u32::MAX, crate::table::secs32);
            if heads[1].head.is_none() {
                // Every `disc` entry through segment `disc_hi` is leased: the
                // next scan starts past it (an insertion lowers the mark).
                let past = crate::disc::seg_start(q.disc_hi.saturating_add(1), self.store.seg_bits);
                q.disc_from = q.disc_from.max(past);
            }
        }
        Ok(got)
    }
}

/// A stream of (position, body) in serving order with its first item read.
struct Head<'a> {
    rest: Box<dyn Iterator<Item = Result<(LeaseKey, UserValue)>> + 'a>,
    head: Option<(LeaseKey, UserValue)>,
}

impl<'a> Head<'a> {
    fn new(mut rest: Box<dyn Iterator<Item = Result<(LeaseKey, UserValue)>> + 'a>) -> Result<Self> {
        let head = rest.next().transpose()?;
        Ok(Head { rest, head })
    }

    /// The head, reading the next one in its place.
    fn take(&mut self) -> Result<Option<(LeaseKey, UserValue)>> {
        let next = self.rest.next().transpose()?;
        Ok(std::mem::replace(&mut self.head, next))
    }
}

/// Index of the stream whose head is due and first in serving order.
fn pick(heads: &[Head<'_>; 2], due: impl Fn(LeaseKey) -> bool) -> Option<usize> {
    let pos = |i: usize| heads[i].head.as_ref().map(|(p, _)| *p).filter(|p| due(*p));
    match (pos(0), pos(1)) {
        (Some(a), Some(b)) => Some(usize::from(order(b) < order(a))),
        (Some(_), None) => Some(0),
        (None, Some(_)) => Some(1),
        (None, None) => None,
    }
}

/// How many URLs queue `q` may give now, or `None` if it is not eligible.
/// The caller has checked that `q` has a pending URL and was not served in
/// this call.
fn room(q: &mut Queue, delay_ms: u64, ask: &Ask) -> Option<usize> {
    if u64::from(q.rec.block_until_s).saturating_mul(1000) > ask.now_ms {
        return None;
    }
    if q.last_serve_ms > 0 && q.last_serve_ms.saturating_add(delay_ms) > ask.now_ms {
        return None;
    }
    let live = q.live_leases(ask.now_ms);
    let mut room = ask.per_queue.saturating_sub(live).min(ask.per_turn);
    if q.rec.limit > 0 {
        let used = q.rec.completed.saturating_add(live as u64);
        room = room.min(u64::from(q.rec.limit).saturating_sub(used) as usize);
    }
    (room > 0 && q.may_have_due(ask.now_ms)).then_some(room)
}

/// Key of [`Queue::by_url`]: xxh3-128 of the canonical URL text.
pub(crate) fn url_hash(url: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128(url.as_bytes())
}

/// 0 means unlimited.
fn limit(n: u32) -> usize {
    if n == 0 { usize::MAX } else { n as usize }
}

/// The caller-facing record of a stored URL.
pub(crate) fn record(crawl: &str, key: &str, body: Body, next_fetch: u64) -> UrlRecord {
    UrlRecord {
        crawl: crawl.to_string(),
        key: key.to_string(),
        url: body.url,
        metadata: body.metadata,
        depth: body.depth,
        created: body.created,
        next_fetch,
    }
}
