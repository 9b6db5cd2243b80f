//! The order of the domain ring within a round: at the start of each round
//! the ring is sorted by the queue id each domain will serve next.
//!
//! ```text
//! domains: [d0, d1, d2, d3]   index = order first seen; a domain never moves
//! ring:    [2, 0, 3, 1]       position → domain index (4 B per domain);
//!                             Table::cursor is a position
//! new round (the walk reaches position 0, no turn under way there):
//!   domains with a pending URL sorted by (next_qid(d), d), next_qid = the
//!   first queue of d from d.cursor on with a pending URL; then the others,
//!   in their previous order
//! ```
//!
//! Why: a `get` call serves the domains at consecutive ring positions and
//! reads each served queue's `disc` entries through cursors that step
//! forward over a segment's keys, which go by queue id (`discscan`). A
//! cursor serves the next queue cheaply only when that queue's id is a
//! little past the previous one's; otherwise it opens a new range (a table
//! index lookup and a block load per table of the segment). Queue ids are
//! given in the order hosts are first seen. When domains were kept in the
//! order they were first seen, the first round served every domain's first
//! host, in ascending ids, but later rounds served each domain's second,
//! third ... host, whose ids follow no order: at 20M URLs over 200,000 hosts
//! (four per domain) and 2^18 URLs per segment, `get` served 109,000 URLs/s
//! in its first tenth and 28,000-41,000/s from the third on, most of the
//! time spent opening ranges. Sorted, a call visits ascending ids in every
//! round: 78,000-81,000 URLs/s over the whole phase (docs/BENCHMARKS.md,
//! "Session 26").
//!
//! Idle tail: a sort leaves the domains with no pending URL at the end of
//! the ring, from position `Table::idle_from` on, and notes `Table::grows`
//! in `idle_at`. Only a rise of `grows` can give one of them a pending URL,
//! so while it keeps that value a walk that reaches `idle_from` goes
//! straight to position 0, and the next sort looks only at the positions
//! before it. Late in a crawl, when a few big sites are left, a call thus
//! costs about one visit per live domain instead of one per domain (10M
//! crawler loop over 200,000 hosts, where its last calls each served one
//! host's 100 URLs: docs/BENCHMARKS.md, "Session 31").
//!
//! Invariants: `ring` is a permutation of `0..domains.len()` (a new domain
//! is appended to both, none is removed) and `Table::cursor` is below its
//! length whenever it is non-empty; a sort only reorders it, at position 0.
//! Memory: 4 B per domain, plus 8 B per domain while a sort runs; nothing
//! per URL.
//!
//! Fairness is that of the deficit round-robin: each round still gives every
//! domain one turn; only the order of the turns within a round changes. A
//! turn cut short by `max_queues` resumes at its position before any sort
//! (the sort waits while the domain at position 0 has a turn under way).
//!
//! Cost: one sort per round in which a domain was served: a look at each
//! domain's queues from its cursor to its first pending one (none for a
//! domain known to have nothing pending; none for the idle tail while
//! `grows` stands), then O(L log L) for the L domains with a pending URL;
//! the others keep their order at the end. With `max_queues` 0 every call
//! is a round.

use crate::table::Table;

impl Table {
    /// Starts a new round if the walk is at position 0 with no turn under
    /// way there: sorts the ring by each domain's next queue id (see the
    /// module docs). A round that served nothing changed no domain's
    /// cursor, so the ring is sorted only if a domain was served since.
    /// Returns whether it sorted.
    pub fn start_round(&mut self) -> bool {
        let at_zero = self.ring.first().map(|&d| d as usize);
        let busy = |d: usize| self.domains.get(d).is_some_and(|d| d.deficit() > 0);
        if !self.ring_moved || at_zero.is_none_or(busy) {
            return false;
        }
        self.ring_moved = false;
        // Past `idle_from` nothing can have gained a pending URL since the
        // last sort: only the part before it is looked at.
        let end = match self.idle_at == Some(self.grows) {
            true => self.idle_from.min(self.ring.len()),
            false => self.ring.len(),
        };
        let mut live = Vec::new();
        let mut idle = Vec::new();
        for &d in &self.ring[..end] {
            match self.next_qid_of(d as usize) {
                u32::MAX => idle.push(d),
                qid => live.push((qid, d)),
            }
        }
        live.sort_unstable();
        self.idle_from = live.len();
        self.idle_at = Some(self.grows);
        // An idle domain is left as a visit would leave it: known empty
        // until `grows` moves, no turn under way.
        for &d in &idle {
            if let Some(dom) = self.domains.get_mut(d as usize) {
                dom.empty_at = self.grows;
                dom.set_deficit(0);
            }
        }
        let order = live.into_iter().map(|(_, d)| d).chain(idle);
        for (slot, d) in self.ring[..end].iter_mut().zip(order) {
            *slot = d;
        }
        true
    }

    /// Whether every domain from ring position `p` on is known to have no
    /// pending URL (see `idle_from`): a walk may go straight to position 0.
    pub fn idle_past(&self, p: usize) -> bool {
        p > 0 && p >= self.idle_from && self.idle_at == Some(self.grows)
    }

    /// The id of the first queue of domain `d` from its cursor on that has a
    /// pending URL, or `u32::MAX` (at once for a domain known to have none,
    /// see `Domain::empty_at`).
    fn next_qid_of(&self, d: usize) -> u32 {
        let Some(dom) = self.domains.get(d) else {
            return u32::MAX;
        };
        if dom.empty_at == self.grows {
            return u32::MAX;
        }
        let len = dom.queues.len();
        (0..len)
            .map(|i| dom.queues[(dom.cursor as usize + i) % len])
            .find(|qid| self.queues.get(qid).is_some_and(|q| q.rec.pending > 0))
            .unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Arc;

    use crate::{
        Durability, Frontier, FrontierOptions, GetParams, KnownItem, ManualClock, StoreOptions,
        UrlItem,
    };

    const DOMAINS: usize = 64;
    const RANKS: usize = 4;
    const PER_HOST: usize = 8;

    /// The domain whose rank-`r` host is seen `i`-th among rank-`r` hosts:
    /// ascending, descending, a stride, and that stride reversed, so the
    /// queue ids of one rank follow the domain order only for rank 0.
    fn domain_at(r: usize, i: usize) -> usize {
        match r {
            0 => i,
            1 => DOMAINS - 1 - i,
            2 => (i * 37) % DOMAINS,
            _ => ((DOMAINS - 1 - i) * 37) % DOMAINS,
        }
    }

    /// 64 domains of 4 hosts, 8 URLs per host put in 8 rounds of one URL
    /// per host; with 2^8 URLs per `disc` segment, round k fills segment
    /// k + 1, so each queue has one entry in each of the 8 segments.
    fn filled(dir: &std::path::Path) -> Frontier {
        let opts = FrontierOptions {
            clock: Arc::new(ManualClock::new(1_700_000_000_000)),
            durability: Durability::OsBuffer,
            store: StoreOptions {
                segment_bits: 8,
                ..StoreOptions::default()
            },
            ..FrontierOptions::default()
        };
        let f = Frontier::open(dir, opts).unwrap();
        for k in 0..PER_HOST {
            let batch: Vec<UrlItem> = (0..RANKS)
                .flat_map(|r| (0..DOMAINS).map(move |i| (r, domain_at(r, i))))
                .map(|(r, d)| UrlItem::new(format!("http://h{r}.d{d}.com/p{k}")))
                .collect();
            f.put_discovered(&batch).unwrap();
        }
        f.set_delay("", None, 0).unwrap();
        f
    }

    #[test]
    fn every_round_reads_each_segment_in_ascending_queue_ids() {
        let dir = tempfile::tempdir().unwrap();
        let f = filled(dir.path());
        let params = GetParams {
            max_queues: 32,
            max_urls_per_queue: PER_HOST as u32,
            delay_requestable: 3600,
            ..GetParams::default()
        };
        let mut served = HashSet::new();
        let mut calls = 0u64;
        let mut domains_per_round: Vec<HashSet<String>> = Vec::new();
        loop {
            let got = f.get(&params).unwrap();
            if got.is_empty() {
                break;
            }
            calls += 1;
            let round = (calls as usize - 1) * 32 / DOMAINS;
            if domains_per_round.len() <= round {
                domains_per_round.push(HashSet::new());
            }
            for r in &got {
                assert!(served.insert(r.url.clone()), "{} served twice", r.url);
                let domain = r.key.split_once('.').unwrap().1.to_string();
                domains_per_round[round].insert(domain);
            }
            complete(&f, got);
        }
        assert_eq!(served.len(), DOMAINS * RANKS * PER_HOST);
        // A turn is one host's 8 URLs, so a round is two calls of 32
        // domains, and every round serves every domain once.
        assert_eq!(calls, (RANKS * DOMAINS / 32) as u64);
        assert!(domains_per_round.iter().all(|d| d.len() == DOMAINS));
        // Each call reads 32 queues × 8 segments. In ascending queue ids a
        // call opens one range per segment (one more where a round ends
        // inside it); out of order, nearly one per queue and segment, as
        // rounds 2-4 did before the ring was sorted.
        let opened = f.lock().disc_ranges;
        assert!(
            opened <= 2 * 8 * calls,
            "{opened} ranges opened in {calls} calls"
        );
    }

    #[test]
    fn a_call_for_one_crawl_passes_a_turn_left_under_way_in_another() {
        let dir = tempfile::tempdir().unwrap();
        let f = Frontier::open(dir.path(), FrontierOptions::default()).unwrap();
        let item = |crawl: &str, url: &str| UrlItem {
            crawl: crawl.into(),
            ..UrlItem::new(url)
        };
        f.put_discovered(&[item("a", "http://h0.a.com/"), item("a", "http://h1.a.com/")])
            .unwrap();
        f.put_discovered(&[item("b", "http://b.org/")]).unwrap();
        let get = |crawl: Option<&str>, max_queues| {
            let params = GetParams {
                crawl: crawl.map(String::from),
                max_queues,
                max_urls_per_queue: 2,
                ..GetParams::default()
            };
            let got = f.get(&params).unwrap();
            got.into_iter().map(|r| r.url).collect::<Vec<_>>()
        };
        // a.com's turn is worth 2 URLs; max_queues 1 cuts it after h0.
        assert_eq!(get(None, 1), ["http://h0.a.com/"]);
        assert_eq!(get(Some("b"), 0), ["http://b.org/"]);
        // The cut turn resumes with a.com's other host.
        assert_eq!(get(None, 0), ["http://h1.a.com/"]);
    }

    /// Completes every URL of `got`, as a crawler would.
    fn complete(f: &Frontier, got: Vec<crate::UrlRecord>) {
        let done: Vec<KnownItem> = got
            .into_iter()
            .map(|r| KnownItem::completed(r.url))
            .collect();
        f.put_known(&done).unwrap();
    }

    #[test]
    fn late_in_a_crawl_calls_visit_only_the_domains_left_and_a_domain_gaining_a_url_is_served() {
        let dir = tempfile::tempdir().unwrap();
        let opts = FrontierOptions {
            clock: Arc::new(ManualClock::new(1_700_000_000_000)),
            durability: Durability::OsBuffer,
            ..FrontierOptions::default()
        };
        let f = Frontier::open(dir.path(), opts).unwrap();
        // One big site of 40 URLs and 63 sites of one URL each.
        let mut batch: Vec<UrlItem> = (0..40)
            .map(|i| UrlItem::new(format!("http://big.com/p{i}")))
            .collect();
        batch.extend((0..63).map(|d| UrlItem::new(format!("http://d{d}.com/"))));
        f.put_discovered(&batch).unwrap();
        f.set_delay("", None, 0).unwrap();
        let params = GetParams {
            max_urls_per_queue: 4,
            delay_requestable: 3600,
            ..GetParams::default()
        };
        let visits = || f.lock().ring_visits;
        // The first call serves every site, the small ones to the end.
        let got = f.get(&params).unwrap();
        assert_eq!(got.len(), 4 + 63);
        complete(&f, got);
        // From now on only big.com has a pending URL: 9 calls of 4 URLs,
        // each visiting big.com and at most the domain at position 0 (the
        // walk starts there after a sort), not the 63 empty ones.
        let mut served = 4 + 63;
        for call in 0..9 {
            let before = visits();
            let got = f.get(&params).unwrap();
            let visited = visits() - before;
            assert_eq!(got.len(), 4, "call {call}");
            assert!(got.iter().all(|r| r.key == "big.com"), "call {call}");
            assert!(visited <= 2, "call {call} visited {visited} domains");
            served += got.len();
            complete(&f, got);
        }
        assert_eq!(served, 40 + 63);
        assert!(f.get(&params).unwrap().is_empty());
        // A site of the idle tail gains a URL: the next call serves it.
        f.put_discovered(&[UrlItem::new("http://d17.com/new")])
            .unwrap();
        let got = f.get(&params).unwrap();
        assert_eq!(
            got.iter().map(|r| r.url.as_str()).collect::<Vec<_>>(),
            ["http://d17.com/new"]
        );
        complete(&f, got);
        // So does one whose URL is put back as known and due.
        let again = KnownItem {
            item: UrlItem::new("http://d40.com/"),
            next_fetch: 1,
        };
        f.put_known(&[again]).unwrap();
        let got = f.get(&params).unwrap();
        assert_eq!(
            got.iter().map(|r| r.url.as_str()).collect::<Vec<_>>(),
            ["http://d40.com/"]
        );
    }
}
