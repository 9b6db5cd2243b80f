//! `hash`: the seeds' baseline, `HashSet<Box<[u8]>>`.
//!
//! # Layout
//!
//! ```text
//!  table: [ctrl bytes: 1 per slot + 16] [slot: Box<[u8]> = ptr, len (16 B)] ...
//!                                               |
//!                                               v  own heap block (malloc):
//!                                          [8 B header | key bytes | pad to 16]
//! ```
//!
//! # Invariants
//! hashbrown keeps at most 7/8 of its power-of-two slots full, so after a
//! resize the table is between 7/16 and 7/8 full.
//!
//! # Cost
//! Bytes per URL: 17 / load (19.4 to 38.9) for the table, plus the key's own
//! allocation, `max(32, round_up(len + 8, 16))` under glibc malloc: about
//! 110 B for a 70-byte URL. One hash and usually one probe per operation, plus
//! one allocation per new key.
//!
//! ```
//! use mgz_seen::{SeenSet, hash::HashSeen};
//! let mut s = HashSeen::new();
//! for i in 0..1000 {
//!     s.insert(format!("com.example/{i:064}").as_bytes()); // 76-byte keys
//! }
//! let per_url = s.heap_bytes() / 1000;
//! assert!((90..=140).contains(&per_url), "{per_url}");
//! ```

use std::collections::HashSet;

use crate::{Guarantee, SeenSet};

/// Bytes glibc malloc spends on a block of `len` bytes: an 8-byte header,
/// rounded up to 16, at least 32. Empty keys allocate nothing.
fn malloc_size(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        (len + 8).next_multiple_of(16).max(32)
    }
}

/// Exact set backed by `HashSet<Box<[u8]>>`.
#[derive(Debug, Default)]
pub struct HashSeen {
    set: HashSet<Box<[u8]>>,
    key_bytes: usize,
}

impl HashSeen {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SeenSet for HashSeen {
    fn insert(&mut self, key: &[u8]) -> bool {
        if self.set.contains(key) {
            return false;
        }
        self.key_bytes += malloc_size(key.len());
        self.set.insert(key.into())
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.set.contains(key)
    }

    fn len(&self) -> usize {
        self.set.len()
    }

    fn heap_bytes(&self) -> usize {
        let slot = std::mem::size_of::<Box<[u8]>>() + 1;
        let buckets = if self.set.capacity() == 0 {
            0
        } else {
            // hashbrown: capacity = 7/8 of a power-of-two bucket count (>= 8).
            (self.set.capacity() * 8 / 7).next_power_of_two()
        };
        buckets * slot + 16 + self.key_bytes
    }

    fn guarantee(&self) -> Guarantee {
        Guarantee::Exact
    }

    fn name(&self) -> &'static str {
        "hash"
    }
}
