//! `hash`: the seeds' baseline, `HashSet<Box<[u8]>>`.
//!
//! Layout: one hashbrown table of 16-byte fat pointers (plus one control byte
//! per slot, load factor <= 7/8), each pointing to its own heap allocation
//! holding the key bytes. Bytes per URL ~= 1.14 * 17 + key length + allocator
//! overhead (8-16 B): about 100 B for a 70-byte URL.

use std::collections::HashSet;

use crate::{Guarantee, SeenSet};

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
        self.key_bytes += key.len();
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
        self.set.capacity() * slot + self.key_bytes
    }

    fn guarantee(&self) -> Guarantee {
        Guarantee::Exact
    }

    fn name(&self) -> &'static str {
        "hash"
    }
}
