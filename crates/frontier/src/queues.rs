//! Where the queue heads live: a dense store indexed by qid, and one
//! hashed index from (crawl, key) to qid that keeps no key of its own.
//!
//! ```text
//! Queues:   chunks[qid / 1024] -> Some(Box<[Option<Queue>; 1024]>)   slot qid % 1024
//!           (a chunk is allocated when its first queue arrives, freed with its last)
//! KeyIndex: open-addressing table of (tag, qid) entries, hashed by xxh3 of
//!           the key and the crawl; a probe compares (crawl, key) with the
//!           queue's own record (`keyindex.rs`)
//! ```
//!
//! Why: a `HashMap<u32, Queue>` paid a ~160-byte bucket per queue at its
//! load factor (7/16 to 7/8 full: 180–370 B per queue), and the key → qid
//! map a second copy of every key plus a 32-byte bucket. Here a queue costs
//! its slot (`size_of::<Queue>()`, 128 B: 152 before the `disc` marks, 160
//! after them, 136 since its key is a `Box<str>` and its small fields
//! are u32s, 128 since its own delay and its block time take 4 bytes
//! each), its
//! key once (in `rec.key`), and 11–16 B of index (`keyindex`: an 8-byte
//! entry, 3/8 to 3/4 full); a chunk wastes at most 1,023 empty slots (qids
//! are dense: they are handed out in order and only deleted queues leave
//! holes).
//!
//! Invariants: `KeyIndex` holds exactly the qids present in `Queues`, each
//! findable by its record's (crawl, key); `Chunk::live` counts its `Some`
//! slots. Cost: lookup by qid is two indexings; by key one hash of the key
//! and usually one comparison.

use crate::table::Queue;

/// Slots per chunk (a chunk of 128-byte queues is 128 KiB).
const CHUNK: usize = 1024;

struct Chunk {
    slots: Box<[Option<Queue>]>,
    live: usize,
}

/// Queue heads by qid (see the module docs).
#[derive(Default)]
pub struct Queues {
    chunks: Vec<Option<Chunk>>,
    len: usize,
}

fn split(qid: u32) -> (usize, usize) {
    let qid = qid as usize;
    (qid / CHUNK, qid % CHUNK)
}

impl Queues {
    /// The queue `qid`.
    pub fn get(&self, qid: &u32) -> Option<&Queue> {
        let (c, s) = split(*qid);
        self.chunks.get(c)?.as_ref()?.slots[s].as_ref()
    }

    /// Address of queue `qid`'s slot, for a prefetch (nothing is read).
    pub fn slot_ptr(&self, qid: u32) -> Option<*const Option<Queue>> {
        let (c, s) = split(qid);
        let chunk = self.chunks.get(c)?.as_ref()?;
        chunk.slots.get(s).map(std::ptr::from_ref)
    }

    /// The queue `qid`, mutable.
    pub fn get_mut(&mut self, qid: &u32) -> Option<&mut Queue> {
        let (c, s) = split(*qid);
        self.chunks.get_mut(c)?.as_mut()?.slots[s].as_mut()
    }

    /// Puts `q` at `qid`, returning the queue it replaces.
    pub fn insert(&mut self, qid: u32, q: Queue) -> Option<Queue> {
        let (c, s) = split(qid);
        if self.chunks.len() <= c {
            self.chunks.resize_with(c + 1, || None);
        }
        let chunk = self.chunks[c].get_or_insert_with(|| Chunk {
            slots: (0..CHUNK).map(|_| None).collect(),
            live: 0,
        });
        let old = chunk.slots[s].replace(q);
        if old.is_none() {
            chunk.live += 1;
            self.len += 1;
        }
        old
    }

    /// Takes the queue `qid` out; frees its chunk when it was the last one.
    pub fn remove(&mut self, qid: &u32) -> Option<Queue> {
        let (c, s) = split(*qid);
        let slot = self.chunks.get_mut(c)?;
        let chunk = slot.as_mut()?;
        let q = chunk.slots[s].take()?;
        chunk.live -= 1;
        self.len -= 1;
        if chunk.live == 0 {
            *slot = None;
        }
        Some(q)
    }

    /// Number of queues.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Every queue with its qid, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Queue)> {
        let chunks = self.chunks.iter().enumerate();
        chunks.flat_map(|(c, chunk)| {
            let slots = chunk.as_ref().map_or(&[][..], |ch| &ch.slots[..]);
            let base = c * CHUNK;
            slots
                .iter()
                .enumerate()
                .filter_map(move |(s, q)| Some(((base + s) as u32, q.as_ref()?)))
        })
    }

    /// Every queue, mutable, by ascending qid.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Queue> {
        let slots = self
            .chunks
            .iter_mut()
            .flatten()
            .flat_map(|ch| ch.slots.iter_mut());
        slots.flatten()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use crate::records::QueueRec;
    use crate::table::Table;

    #[derive(Debug, Clone)]
    enum Op {
        /// Adds queue `qid` (crawl, key) unless the key or the qid is taken.
        Add(u32, u32, u8),
        Remove(u32),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        // qids spread over 3 chunks; 2 crawls × 12 keys, so keys repeat
        // across crawls and get re-added after removal.
        let qid = prop_oneof![0..40u32, 1000..1100u32, 5000..5010u32];
        let op = prop_oneof![
            3 => (qid.clone(), 0..2u32, 0..12u8).prop_map(|(q, c, k)| Op::Add(q, c, k)),
            1 => qid.prop_map(Op::Remove),
        ];
        prop::collection::vec(op, 0..300)
    }

    /// Three registrable domains, so removals move domain names between
    /// queues' keys and into the domains (`domains.rs`).
    fn key(k: u8) -> String {
        format!("host{k}.example{}.com", k % 3)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The table's queues and key index agree with a plain map after
        /// any sequence of adds and removes.
        #[test]
        fn queues_and_key_index_match_a_model(ops in ops()) {
            let mut t = Table::default();
            let mut model: BTreeMap<u32, (u32, String)> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Add(qid, crawl, k) => {
                        let taken = model.values().any(|(c, kk)| *c == crawl && *kk == key(k));
                        if taken || model.contains_key(&qid) {
                            continue;
                        }
                        let rec = QueueRec { crawl, key: key(k).into(), ..QueueRec::default() };
                        t.insert_queue(qid, rec);
                        model.insert(qid, (crawl, key(k)));
                    }
                    Op::Remove(qid) => {
                        let got = t.remove_queue(qid).map(|q| (q.rec.crawl, q.rec.key));
                        prop_assert_eq!(got, model.remove(&qid).map(|(c, k)| (c, k.into())));
                    }
                }
            }
            prop_assert_eq!(t.queues.len(), model.len());
            let listed: Vec<(u32, (u32, String))> = t
                .queues
                .iter()
                .map(|(qid, q)| (qid, (q.rec.crawl, q.rec.key.to_string())))
                .collect();
            let want: Vec<_> = model.clone().into_iter().collect();
            prop_assert_eq!(listed, want);
            for crawl in 0..2u32 {
                for k in 0..12u8 {
                    let want = model.iter().find(|(_, v)| **v == (crawl, key(k))).map(|(q, _)| *q);
                    prop_assert_eq!(t.qid(crawl, &key(k)), want);
                }
                let want: Vec<u32> = model.iter().filter(|(_, v)| v.0 == crawl).map(|(q, _)| *q).collect();
                prop_assert_eq!(t.crawl_qids(crawl), want);
            }
            prop_assert_eq!(t.queues.values_mut().count(), model.len());
            // Every domain keeps its name and is found by it, whichever of
            // its queues were removed; each queue is listed by its domain.
            for (i, d) in t.domains.iter().enumerate() {
                let name = d.name(&t.queues);
                prop_assert!(name.starts_with("example"), "{name:?}");
                prop_assert_eq!(t.domain_index.find(&t.domains, &t.queues, d.crawl, name), Some(i as u32));
            }
            for (qid, q) in t.queues.iter() {
                let d = &t.domains[q.domain as usize];
                prop_assert_eq!(d.name(&t.queues), crate::table::registrable_domain(&q.rec.key));
                prop_assert!(d.queues.as_slice().contains(&qid));
            }
            if model.is_empty() {
                prop_assert!(t.queues.chunks.iter().all(Option::is_none), "empty chunks are freed");
            }
        }
    }

    #[test]
    fn a_queue_slot_is_128_bytes() {
        assert_eq!(std::mem::size_of::<Option<crate::table::Queue>>(), 128);
    }

    #[test]
    fn a_queue_costs_its_slot_and_a_few_bytes_of_index() {
        let mut t = Table::default();
        for qid in 0..10_000u32 {
            let rec = QueueRec {
                crawl: 0,
                key: format!("h{qid}.example.org").into(),
                ..QueueRec::default()
            };
            t.insert_queue(qid, rec);
        }
        assert_eq!(t.queues.chunks.len(), 10);
        // `keyindex`: 8-byte entries, at most 3/4 and (past a rebuild) at
        // least 3/8 full: 16,384 entries for 10,000 queues.
        let index = t.keys.heap_bytes() as f64 / 10_000.0;
        assert!(index <= 16.0, "{index} B of index per queue");
        assert_eq!(t.qid(0, "h9999.example.org"), Some(9999));
        assert_eq!(t.qid(1, "h9999.example.org"), None);
    }
}
