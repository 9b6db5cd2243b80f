//! [`SlimMap`]: a hash map for per-queue lease state that costs one pointer
//! while empty and hands its slack back as it drains.
//!
//! ```text
//! empty:    None                                  8 B inline, no heap
//! in use:   Some(Box<HashMap>) -> 48 B + buckets  buckets ≤ 4 × len (+ a small floor)
//! ```
//!
//! Why: every queue keeps two lease maps (`Queue::leases`, `Queue::by_url`).
//! A `std` map never shrinks, so after one `get` of 64 URLs a queue kept
//! ~7 KB of empty buckets for good: 100,000 queues held ~0.5 GB after the
//! 10M-URL benchmark's get phase. Here a map that empties is freed, and one
//! that falls to a quarter of its buckets is shrunk (amortised: it had to
//! lose ¾ of its entries since it last grew or shrank).

use std::collections::HashMap;
use std::hash::Hash;

/// Buckets below which a non-empty map is not shrunk (rehashing tiny maps
/// costs more than it saves).
const SHRINK_FLOOR: usize = 64;

/// A map that holds no allocation while empty (see the module docs).
// Boxed on purpose: 8 B per idle queue instead of a 48 B inline map.
#[allow(clippy::box_collection)]
#[derive(Debug)]
pub struct SlimMap<K, V>(Option<Box<HashMap<K, V>>>);

impl<K, V> Default for SlimMap<K, V> {
    fn default() -> Self {
        SlimMap(None)
    }
}

impl<K: Hash + Eq, V> SlimMap<K, V> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |m| m.len())
    }

    /// Whether it has no entries.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `k`.
    pub fn get(&self, k: &K) -> Option<&V> {
        self.0.as_ref()?.get(k)
    }

    /// Whether `k` has a value.
    pub fn contains_key(&self, k: &K) -> bool {
        self.get(k).is_some()
    }

    /// Sets `k` to `v`, returning the old value.
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        self.0.get_or_insert_with(Box::default).insert(k, v)
    }

    /// Removes `k`, returning its value; frees or shrinks the map as it drains.
    pub fn remove(&mut self, k: &K) -> Option<V> {
        let v = self.0.as_mut()?.remove(k);
        if v.is_some() {
            self.compact();
        }
        v
    }

    /// Keeps the entries for which `keep` is true; frees or shrinks the map.
    pub fn retain(&mut self, keep: impl FnMut(&K, &mut V) -> bool) {
        if let Some(m) = self.0.as_mut() {
            m.retain(keep);
            self.compact();
        }
    }

    /// The values, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().flat_map(|m| m.values())
    }

    /// Buckets allocated (0 while empty).
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.0.as_ref().map_or(0, |m| m.capacity())
    }

    fn compact(&mut self) {
        let Some(m) = self.0.as_mut() else {
            return;
        };
        if m.is_empty() {
            self.0 = None;
        } else if m.capacity() >= SHRINK_FLOOR && m.len() * 4 <= m.capacity() {
            m.shrink_to(m.len() * 2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn empty_map_holds_no_buckets() {
        let mut m = SlimMap::default();
        for i in 0..1000u64 {
            m.insert(i, i);
        }
        assert!(m.capacity() >= 1000);
        for i in 0..1000u64 {
            assert_eq!(m.remove(&i), Some(i));
        }
        assert_eq!(m.capacity(), 0);
        assert!(m.is_empty());
        assert_eq!(std::mem::size_of::<SlimMap<u64, u64>>(), 8);
    }

    #[test]
    fn draining_map_shrinks() {
        let mut m = SlimMap::default();
        for i in 0..4096u64 {
            m.insert(i, ());
        }
        m.retain(|k, _| *k < 10);
        assert_eq!(m.len(), 10);
        assert!(m.capacity() < SHRINK_FLOOR * 2, "{}", m.capacity());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u16),
        Remove(u8),
        RetainBelow(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (any::<u8>(), any::<u16>()).prop_map(|(k, v)| Op::Insert(k, v)),
            any::<u8>().prop_map(Op::Remove),
            any::<u8>().prop_map(Op::RetainBelow),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Same answers as a plain HashMap, and never more than 4× slack.
        #[test]
        fn behaves_like_hashmap(ops in proptest::collection::vec(op(), 0..400)) {
            let mut slim = SlimMap::default();
            let mut model = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(slim.insert(k, v), model.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(slim.remove(&k), model.remove(&k)),
                    Op::RetainBelow(b) => {
                        slim.retain(|k, _| *k < b);
                        model.retain(|k, _| *k < b);
                    }
                }
                prop_assert_eq!(slim.len(), model.len());
                prop_assert_eq!(slim.capacity() == 0, model.is_empty());
                prop_assert!(slim.capacity() <= (4 * slim.len()).max(SHRINK_FLOOR));
                for k in 0..=255u8 {
                    prop_assert_eq!(slim.get(&k), model.get(&k));
                    prop_assert_eq!(slim.contains_key(&k), model.contains_key(&k));
                }
                let mut a: Vec<_> = slim.values().copied().collect();
                let mut b: Vec<_> = model.values().copied().collect();
                a.sort_unstable();
                b.sort_unstable();
                prop_assert_eq!(a, b);
            }
        }
    }
}
