//! The registrable domains of the round-robin: each [`Domain`] names
//! itself, mostly by pointing into one of its queues' keys, and
//! [`DomainIndex`] finds one by (crawl, name) without a copy of the name.
//!
//! ```text
//! Table::domains: Vec<Domain>   index = domain id, in the order first seen; never removed
//!   Domain { crawl u32, cursor u32, deficit u32, empty_at u64, queues: Qids,
//!            name: DomainName }                                                          56 B
//!   Qids:   None | One(qid) inline (a broad crawl: one host per domain)
//!         | Many(Box<Vec<u32>>) (two or more: one heap block more, shared by them)        16 B
//!   DomainName: Suffix { qid, len }: the last `len` bytes of queue qid's key               16 B
//!               (`www.example.com` → `example.com`; qid is one of the domain's queues)
//!             | Own(Box<str>): when no queue's key ends with the name (all removed, or
//!               a key whose registrable domain is not its literal suffix)
//! DomainIndex: open-addressing table of u64 entries (tag u32 | domain id u32),
//!   hashed by xxh3 of the name and the crawl; a probe compares (crawl, name)
//!   with the domain's own fields
//! ```
//!
//! Why: a `HashMap<(u32, String), usize>` held a 40-byte bucket per domain
//! at its load factor plus the name a second time, and every domain's
//! `Vec<u32>` of queues a heap block of its own. In a broad crawl, where
//! almost every host is its own domain, the domain side cost more than the
//! queue itself (`examples/table_cost.rs`: 382 B per queue, one host per
//! domain, against 208 with 16 hosts per domain; then 267 and 179, 278
//! and 196 B resident; since session 45, with the 56-byte `Domain` and the
//! 128-byte queue slot, 242 and 172, 254 and 189 B resident:
//! docs/BENCHMARKS.md, "Queue table per host").
//!
//! Invariants: a `Suffix` name's queue is live and one of the domain's
//! queues (removing it moves the name to another queue or into `Own`, see
//! [`Domain::unlink`]), so a domain's name never changes; every domain id
//! below `domains.len()` is in the index exactly once, reachable by linear probing from the home slot of its (crawl, name)
//! without crossing an empty entry; entries ≤ 3/4 of the table (domains are
//! never removed, so there are no tombstones). Cost: 8 B per entry at a load
//! of 3/8 to 3/4, 11–21 B per domain; a lookup hashes the name once and
//! usually compares it once.

use std::ops::Index;

use xxhash_rust::xxh3::xxh3_64;

use crate::queues::Queues;

/// A domain's queue ids, in the order they were added: one inline, two or
/// more behind a box (16 B instead of a 24-byte inline `Vec`).
#[derive(Debug, Clone, Default)]
pub enum Qids {
    /// No queue (all removed).
    #[default]
    None,
    /// Exactly one queue.
    One(u32),
    /// Two or more.
    #[allow(clippy::box_collection)] // Boxed on purpose: 8 B per domain instead of 24.
    Many(Box<Vec<u32>>),
}

impl Qids {
    /// Number of queues.
    pub fn len(&self) -> usize {
        match self {
            Qids::None => 0,
            Qids::One(_) => 1,
            Qids::Many(v) => v.len(),
        }
    }

    /// The queue ids as a slice.
    pub fn as_slice(&self) -> &[u32] {
        match self {
            Qids::None => &[],
            Qids::One(q) => std::slice::from_ref(q),
            Qids::Many(v) => v,
        }
    }

    /// Appends `qid`.
    pub fn push(&mut self, qid: u32) {
        match self {
            Qids::None => *self = Qids::One(qid),
            Qids::One(q) => *self = Qids::Many(Box::new(vec![*q, qid])),
            Qids::Many(v) => v.push(qid),
        }
    }

    /// Keeps the queue ids `keep` takes, in order; one left goes inline.
    pub fn retain(&mut self, mut keep: impl FnMut(u32) -> bool) {
        match self {
            Qids::None => {}
            Qids::One(q) => {
                if !keep(*q) {
                    *self = Qids::None;
                }
            }
            Qids::Many(v) => {
                v.retain(|&q| keep(q));
                match v[..] {
                    [] => *self = Qids::None,
                    [q] => *self = Qids::One(q),
                    _ => {}
                }
            }
        }
    }
}

impl Index<usize> for Qids {
    type Output = u32;

    fn index(&self, i: usize) -> &u32 {
        &self.as_slice()[i]
    }
}

/// A registrable domain of one crawl and its queues, rotated round-robin.
#[derive(Debug)]
pub struct Domain {
    /// Owning crawl.
    pub crawl: u32,
    /// Position in `queues` of the next queue to try.
    pub cursor: u32,
    /// URLs left in the domain's current turn (deficit round-robin); 0 = no
    /// turn under way. Read and set through [`Domain::deficit`] and
    /// [`Domain::set_deficit`]: `u32::MAX` stands for no limit.
    deficit: u32,
    /// [`Table::grows`](crate::table::Table::grows) when a turn found no
    /// queue of the domain with a pending URL ([`NOT_EMPTY`] if none has):
    /// while `grows` keeps that value none can have gained one, so `get`
    /// skips the domain without visiting its queues.
    pub empty_at: u64,
    /// Queues of this domain.
    pub queues: Qids,
    /// The registrable domain (or the key itself, see
    /// [`registrable_domain`](crate::table::registrable_domain)).
    pub name: DomainName,
}

/// Where a domain's name is kept (see the module docs).
#[derive(Debug)]
pub enum DomainName {
    /// The last `len` bytes of the key of queue `qid`.
    Suffix {
        /// A live queue of the domain.
        qid: u32,
        /// Bytes of the name.
        len: u32,
    },
    /// The name itself.
    Own(Box<str>),
}

impl Default for DomainName {
    fn default() -> Self {
        DomainName::Own("".into())
    }
}

impl DomainName {
    /// `name` as it is kept for a domain whose first queue `qid` has key
    /// `key`: a suffix of the key when it is one.
    pub fn new(name: &str, qid: u32, key: &str) -> DomainName {
        match u32::try_from(name.len()) {
            Ok(len) if key.ends_with(name) => DomainName::Suffix { qid, len },
            _ => DomainName::Own(name.into()),
        }
    }
}

/// The last `len` bytes of `key` ("" if that is not a char boundary, which
/// [`DomainName::new`] rules out).
fn suffix(key: &str, len: u32) -> &str {
    key.len()
        .checked_sub(len as usize)
        .and_then(|at| key.get(at..))
        .unwrap_or("")
}

/// [`Domain::empty_at`] of a domain not known to be empty (`grows` counts
/// table changes from 0 and never gets there).
pub const NOT_EMPTY: u64 = u64::MAX;

impl Default for Domain {
    fn default() -> Self {
        Domain {
            crawl: 0,
            cursor: 0,
            deficit: 0,
            empty_at: NOT_EMPTY,
            queues: Qids::None,
            name: DomainName::default(),
        }
    }
}

impl Domain {
    /// A domain of crawl `crawl` named as `name` says, with no queue yet.
    pub fn new(crawl: u32, name: DomainName) -> Domain {
        Domain {
            crawl,
            name,
            ..Domain::default()
        }
    }

    /// URLs left in the current turn (`usize::MAX`: no limit).
    pub fn deficit(&self) -> usize {
        match self.deficit {
            u32::MAX => usize::MAX,
            d => d as usize,
        }
    }

    /// Sets the URLs left in the current turn; from `u32::MAX` on, no limit.
    pub fn set_deficit(&mut self, urls: usize) {
        self.deficit = u32::try_from(urls).unwrap_or(u32::MAX);
    }

    /// The domain's name.
    pub fn name<'a>(&'a self, queues: &'a Queues) -> &'a str {
        match &self.name {
            DomainName::Own(name) => name,
            DomainName::Suffix { qid, len } => {
                queues.get(qid).map_or("", |q| suffix(&q.rec.key, *len))
            }
        }
    }

    /// Takes queue `qid`, whose key was `key` and which is no longer in
    /// `queues`, out of the domain; a name kept in its key moves to another
    /// queue's key that ends with it, or into the domain.
    pub fn unlink(&mut self, qid: u32, key: &str, queues: &Queues) {
        self.queues.retain(|x| x != qid);
        self.cursor = 0;
        self.deficit = 0;
        if let DomainName::Suffix { qid: at, len } = self.name
            && at == qid
        {
            let name = suffix(key, len);
            let other = self
                .queues
                .as_slice()
                .iter()
                .copied()
                .find(|q| queues.get(q).is_some_and(|q| q.rec.key.ends_with(name)));
            self.name = match other {
                Some(q) => DomainName::Suffix { qid: q, len },
                None => DomainName::Own(name.into()),
            };
        }
    }
}

const EMPTY: u64 = 0;

/// (crawl, domain name) → domain id (see the module docs).
#[derive(Default)]
pub struct DomainIndex {
    entries: Vec<u64>,
    live: usize,
}

fn hash(crawl: u32, name: &str) -> u64 {
    xxh3_64(name.as_bytes()) ^ u64::from(crawl).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A live entry for `id` under `hash`: the tag's low bit is set, so it is
/// never [`EMPTY`].
fn entry(hash: u64, id: u32) -> u64 {
    (((hash >> 32) | 1) << 32) | u64::from(id)
}

impl DomainIndex {
    /// The id of domain `name` of crawl `crawl` among `domains`.
    pub fn find(&self, domains: &[Domain], queues: &Queues, crawl: u32, name: &str) -> Option<u32> {
        if self.entries.is_empty() {
            return None;
        }
        let h = hash(crawl, name);
        let tag = entry(h, 0) >> 32;
        let mask = self.entries.len() - 1;
        let mut i = (h as usize) & mask;
        loop {
            let e = self.entries[i];
            if e == EMPTY {
                return None;
            }
            let id = e as u32;
            if e >> 32 == tag
                && let Some(d) = domains.get(id as usize)
                && d.crawl == crawl
                && d.name(queues) == name
            {
                return Some(id);
            }
            i = (i + 1) & mask;
        }
    }

    /// Indexes domain `id`, already in `domains` and not yet indexed.
    pub fn insert(&mut self, domains: &[Domain], queues: &Queues, id: u32) {
        if (self.live + 1) * 4 > self.entries.len() * 3 {
            let want = ((self.live + 1) * 2).next_power_of_two().max(16);
            let old = std::mem::replace(&mut self.entries, vec![EMPTY; want]);
            for e in old.into_iter().filter(|&e| e != EMPTY) {
                self.place(domains, queues, e as u32);
            }
        }
        self.place(domains, queues, id);
        self.live += 1;
    }

    fn place(&mut self, domains: &[Domain], queues: &Queues, id: u32) {
        let h = domains
            .get(id as usize)
            .map_or(0, |d| hash(d.crawl, d.name(queues)));
        let mask = self.entries.len() - 1;
        let mut i = (h as usize) & mask;
        while self.entries[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.entries[i] = entry(h, id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_domain_is_56_bytes_its_queue_list_16_and_its_name_16() {
        assert_eq!(std::mem::size_of::<Qids>(), 16);
        assert_eq!(std::mem::size_of::<DomainName>(), 16);
        assert_eq!(std::mem::size_of::<Domain>(), 56);
    }

    #[test]
    fn a_new_domain_is_not_known_empty_and_a_deficit_past_u32_is_no_limit() {
        let mut d = Domain::default();
        assert_eq!(d.empty_at, NOT_EMPTY);
        assert_eq!(d.deficit(), 0);
        for (set, got) in [
            (7, 7),
            (u32::MAX as usize - 1, u32::MAX as usize - 1),
            (u32::MAX as usize, usize::MAX),
            (usize::MAX, usize::MAX),
        ] {
            d.set_deficit(set);
            assert_eq!(d.deficit(), got, "{set}");
        }
    }

    #[test]
    fn a_name_is_kept_in_the_key_when_it_ends_it() {
        assert!(matches!(
            DomainName::new("example.com", 3, "www.example.com"),
            DomainName::Suffix { qid: 3, len: 11 }
        ));
        assert!(matches!(
            DomainName::new("example.com", 3, "www.example.com:8080"),
            DomainName::Own(_)
        ));
        assert_eq!(suffix("ab", 3), "");
        assert_eq!(suffix("aé", 1), "");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// `Qids` keeps what a `Vec` would after any pushes and removals.
        #[test]
        fn qids_match_a_vec(ops in prop::collection::vec((any::<bool>(), 0..6u32), 0..60)) {
            let (mut q, mut model) = (Qids::default(), Vec::new());
            for (push, x) in ops {
                if push {
                    q.push(x);
                    model.push(x);
                } else {
                    q.retain(|y| y != x);
                    model.retain(|&y| y != x);
                }
                prop_assert_eq!(q.as_slice(), &model[..]);
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(matches!(q, Qids::One(_)), model.len() == 1);
                prop_assert_eq!(matches!(q, Qids::None), model.is_empty());
                for (i, &m) in model.iter().enumerate() {
                    prop_assert_eq!(q[i], m);
                }
            }
        }

        /// The index finds every domain added by (crawl, name) and nothing
        /// else, across its rebuilds.
        #[test]
        fn the_index_finds_what_a_map_does(names in prop::collection::vec((0..3u32, "[a-d]{0,3}"), 0..200)) {
            let (mut domains, mut index) = (Vec::<Domain>::new(), DomainIndex::default());
            let mut model = std::collections::HashMap::new();
            for (crawl, name) in names {
                let got = index.find(&domains, &Queues::default(), crawl, &name);
                prop_assert_eq!(got, model.get(&(crawl, name.clone())).copied());
                if got.is_none() {
                    let id = domains.len() as u32;
                    domains.push(Domain { crawl, name: DomainName::Own(name.clone().into()), ..Domain::default() });
                    index.insert(&domains, &Queues::default(), id);
                    model.insert((crawl, name), id);
                }
            }
            for ((crawl, name), id) in &model {
                prop_assert_eq!(index.find(&domains, &Queues::default(), *crawl, name), Some(*id));
            }
            prop_assert!(index.live * 4 <= index.entries.len() * 3 || index.entries.is_empty());
        }
    }
}
