//! (crawl, queue key) → qid: an open-addressing table of 8-byte entries
//! that hashes qids only, the keys staying in the queue records.
//!
//! ```text
//! entries: [u64; 2^k]   0 = empty   1 = deleted (tombstone)
//!          live entry = (tag u32, low bit set) << 32 | qid u32
//!          home slot = low bits of the key's hash; tag = its high 32 bits | 1
//! ```
//!
//! Invariants: every live qid is present in `Queues` and reachable by
//! linear probing from the home slot of its record's (crawl, key) without
//! crossing an empty entry; live + deleted ≤ 3/4 of the entries.
//!
//! Why not `hashbrown`: a lookup is three dependent cache misses (entry,
//! the 136-byte queue slot, the key bytes) and a put batch does 256 of them
//! under the table lock; here [`KeyIndex::find_many`] prefetches each
//! stage for items further down the batch, so the misses of different
//! items overlap. Cost: 8 B per entry at a load of 3/8 to 3/4 (at most 1/2
//! after a rebuild), so 11–16 B per queue once past the first rebuilds
//! (hashbrown's table: 5 B per bucket, 6–11 B per queue).

use crate::queues::Queues;

const EMPTY: u64 = 0;
const DELETED: u64 = 1;

/// How far ahead (in items) [`KeyIndex::find_many`] prefetches each stage.
const AHEAD: usize = 6;

/// (crawl, queue key) → qid (see the module docs).
#[derive(Default)]
pub struct KeyIndex {
    entries: Vec<u64>,
    live: usize,
    deleted: usize,
}

/// The index hash of `key` in crawl `crawl` from its [`text_hash`].
fn with_crawl(crawl: u32, text_hash: u64) -> u64 {
    text_hash ^ u64::from(crawl).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The part of a key's index hash that does not depend on the crawl, so
/// callers can compute it before they take the table lock.
pub fn text_hash(key: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key.as_bytes())
}

fn tag_of(hash: u64) -> u64 {
    (hash >> 32) | 1
}

fn entry(hash: u64, qid: u32) -> u64 {
    (tag_of(hash) << 32) | u64::from(qid)
}

/// The index hash of queue `qid` (0 if it is missing, which the
/// invariant rules out).
fn hash_of(queues: &Queues, qid: u32) -> u64 {
    queues
        .get(&qid)
        .map_or(0, |q| with_crawl(q.rec.crawl, text_hash(&q.rec.key)))
}

/// Whether queue `qid` is (`crawl`, `key`).
fn is(queues: &Queues, qid: u32, crawl: u32, key: &str) -> bool {
    queues
        .get(&qid)
        .is_some_and(|q| q.rec.crawl == crawl && *q.rec.key == *key)
}

/// Hints the CPU to load the cache line at `p` (never faults).
#[inline]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing into the program
    // and does not fault, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl KeyIndex {
    fn mask(&self) -> usize {
        self.entries.len().wrapping_sub(1)
    }

    /// The qid of `key` in crawl `crawl`.
    pub fn find(&self, queues: &Queues, crawl: u32, key: &str) -> Option<u32> {
        self.find_hashed(queues, crawl, key, text_hash(key))
    }

    /// [`KeyIndex::find`] with the key's [`text_hash`] already computed.
    pub fn find_hashed(&self, queues: &Queues, crawl: u32, key: &str, h: u64) -> Option<u32> {
        self.probe(with_crawl(crawl, h), |qid| is(queues, qid, crawl, key))
    }

    /// The first qid on `hash`'s probe path whose tag matches: usually the
    /// answer, checked by the caller.
    fn candidate(&self, hash: u64) -> Option<u32> {
        self.probe(hash, |_| true)
    }

    /// Walks `hash`'s probe path to the first empty entry; returns the first
    /// qid with `hash`'s tag that `accept` takes.
    fn probe(&self, hash: u64, mut accept: impl FnMut(u32) -> bool) -> Option<u32> {
        let tag = tag_of(hash);
        let mask = self.mask();
        let mut i = (hash as usize) & mask;
        for _ in 0..self.entries.len() {
            let e = self.entries[i];
            if e == EMPTY {
                return None;
            }
            if e >> 32 == tag && accept(e as u32) {
                return Some(e as u32);
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// [`KeyIndex::find_hashed`] for each (crawl, key, text hash) of
    /// `items`, in order. Each item's entry, queue slot and key bytes are
    /// prefetched `AHEAD`, 2 × and 3 × `AHEAD` items before they are read.
    pub fn find_many(&self, queues: &Queues, items: &[(u32, &str, u64)]) -> Vec<Option<u32>> {
        let n = items.len();
        if self.entries.is_empty() {
            return vec![None; n];
        }
        let hash = |j: usize| with_crawl(items[j].0, items[j].2);
        let mask = self.mask();
        let mut cand = vec![None; n];
        let mut out = Vec::with_capacity(n);
        for i in 0..n + 3 * AHEAD {
            if i < n {
                prefetch(&self.entries[(hash(i) as usize) & mask]);
            }
            if let Some(j) = i.checked_sub(AHEAD).filter(|&j| j < n) {
                cand[j] = self.candidate(hash(j));
                if let Some(slot) = cand[j].and_then(|q| queues.slot_ptr(q)) {
                    prefetch(slot);
                }
            }
            if let Some(j) = i.checked_sub(2 * AHEAD).filter(|&j| j < n)
                && let Some(q) = cand[j].and_then(|q| queues.get(&q))
            {
                prefetch(q.rec.key.as_ptr());
            }
            if let Some(j) = i.checked_sub(3 * AHEAD).filter(|&j| j < n) {
                let (crawl, key, h) = items[j];
                let hit = cand[j].filter(|&q| is(queues, q, crawl, key));
                out.push(hit.or_else(|| self.find_hashed(queues, crawl, key, h)));
            }
        }
        out
    }

    /// Indexes queue `qid`, already in `queues` and not yet indexed.
    pub fn insert(&mut self, queues: &Queues, qid: u32) {
        if (self.live + self.deleted + 1) * 4 > self.entries.len() * 3 {
            self.grow(queues);
        }
        let hash = hash_of(queues, qid);
        let mask = self.mask();
        let mut i = (hash as usize) & mask;
        while self.entries[i] > DELETED {
            i = (i + 1) & mask;
        }
        if self.entries[i] == DELETED {
            self.deleted -= 1;
        }
        self.entries[i] = entry(hash, qid);
        self.live += 1;
    }

    /// Rebuilds the table, at most half full (tombstones dropped).
    fn grow(&mut self, queues: &Queues) {
        let want = ((self.live + 1) * 2).next_power_of_two().max(16);
        let old = std::mem::replace(&mut self.entries, vec![EMPTY; want]);
        self.deleted = 0;
        let mask = self.mask();
        for e in old.into_iter().filter(|&e| e > DELETED) {
            let mut i = (hash_of(queues, e as u32) as usize) & mask;
            while self.entries[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.entries[i] = e;
        }
    }

    /// Drops queue `qid` of (`crawl`, `key`) from the index.
    pub fn remove(&mut self, crawl: u32, key: &str, qid: u32) {
        let hash = with_crawl(crawl, text_hash(key));
        let want = entry(hash, qid);
        let mask = self.mask();
        let mut i = (hash as usize) & mask;
        for _ in 0..self.entries.len() {
            match self.entries[i] {
                EMPTY => return,
                e if e == want => {
                    self.entries[i] = DELETED;
                    self.live -= 1;
                    self.deleted += 1;
                    return;
                }
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Heap bytes of the index.
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.entries.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::text_hash;
    use crate::records::QueueRec;
    use crate::table::Table;

    fn key(k: u16) -> String {
        format!("h{k}.example.org")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// After adds and removes (tombstones, growth), a batch lookup
        /// answers exactly as one lookup per item, and as the model.
        #[test]
        fn find_many_matches_find_and_a_model(
            adds in prop::collection::vec((0..3u32, 0..400u16), 0..600),
            removes in prop::collection::vec(0..600usize, 0..200),
            asks in prop::collection::vec((0..3u32, 0..450u16), 0..300),
        ) {
            let mut t = Table::default();
            let mut model = std::collections::HashMap::new();
            for (crawl, k) in adds {
                if model.contains_key(&(crawl, k)) {
                    continue;
                }
                let qid = t.next_qid;
                t.insert_queue(qid, QueueRec { crawl, key: key(k).into(), ..QueueRec::default() });
                model.insert((crawl, k), qid);
            }
            let qids: Vec<u32> = model.values().copied().collect();
            for r in removes {
                if let Some(&qid) = qids.get(r % qids.len().max(1))
                    && t.remove_queue(qid).is_some()
                {
                    model.retain(|_, q| *q != qid);
                }
            }
            let keys: Vec<String> = asks.iter().map(|&(_, k)| key(k)).collect();
            let items: Vec<(u32, &str, u64)> = (asks.iter().zip(&keys))
                .map(|(&(c, _), k)| (c, k.as_str(), text_hash(k)))
                .collect();
            let many = t.keys.find_many(&t.queues, &items);
            for (((c, k), got), &(_, kk)) in items.iter().map(|i| (i.0, i.1)).zip(&many).zip(&asks) {
                prop_assert_eq!(*got, t.keys.find(&t.queues, c, k));
                prop_assert_eq!(*got, model.get(&(c, kk)).copied());
            }
        }
    }

    #[test]
    fn an_empty_index_finds_nothing() {
        let t = Table::default();
        let k = key(1);
        assert_eq!(t.keys.find(&t.queues, 0, &k), None);
        assert_eq!(
            t.keys.find_many(&t.queues, &[(0, &k, text_hash(&k))]),
            vec![None]
        );
    }
}
