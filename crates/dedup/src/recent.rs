//! A small exact cache of recently seen keys, in front of the seen-set.
//!
//! Link dumps repeat locally: every page of a site repeats its navigation
//! links, so most duplicates were seen a few hundred lines earlier. Compressed
//! sets answer "present" slowly (`compact` decodes a block to confirm a key),
//! so a direct-mapped cache of recent keys answers those repeats first.
//!
//! ```text
//!   slot = xxh3(key) & (SLOTS - 1)
//!   hashes: [u64; SLOTS]          full hash of the cached key (0 = empty)
//!   lens:   [u8;  SLOTS]          its length (keys over WIDTH bytes are not cached)
//!   bytes:  [u8;  SLOTS * WIDTH]  its bytes
//! ```
//!
//! Invariant: the cache holds only keys already inserted into the set, and
//! sets never forget, so a hit is a true repeat: exact backends stay exact,
//! and probabilistic ones can only get fewer false positives. A miss says
//! nothing and goes to the set.
//!
//! Memory: SLOTS x (WIDTH + 9) = 4096 x 137 B ≈ 548 KiB, fixed.
//! Cost: one xxh3 and at most one compare per key.

use xxhash_rust::xxh3::xxh3_64;

const SLOTS: usize = 4096;
const WIDTH: usize = 128;

/// Direct-mapped cache of recent keys (see the module docs).
pub(crate) struct Recent {
    hashes: Vec<u64>,
    lens: Vec<u8>,
    bytes: Vec<u8>,
}

impl Recent {
    pub(crate) fn new() -> Self {
        Recent {
            hashes: vec![0; SLOTS],
            lens: vec![0; SLOTS],
            bytes: vec![0; SLOTS * WIDTH],
        }
    }

    /// The hash to pass to [`Recent::contains`] and [`Recent::remember`];
    /// never 0, which marks an empty slot.
    pub(crate) fn hash(key: &[u8]) -> u64 {
        xxh3_64(key) | 1
    }

    /// Whether `key` (with hash `h`) is in the cache.
    pub(crate) fn contains(&self, key: &[u8], h: u64) -> bool {
        let slot = h as usize & (SLOTS - 1);
        self.hashes[slot] == h
            && usize::from(self.lens[slot]) == key.len()
            && &self.bytes[slot * WIDTH..][..key.len()] == key
    }

    /// Caches `key`, which must already be in the set.
    pub(crate) fn remember(&mut self, key: &[u8], h: u64) {
        if key.len() > WIDTH.min(usize::from(u8::MAX)) {
            return;
        }
        let slot = h as usize & (SLOTS - 1);
        self.hashes[slot] = h;
        self.lens[slot] = key.len() as u8;
        self.bytes[slot * WIDTH..][..key.len()].copy_from_slice(key);
    }

    /// Heap bytes of the cache.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.hashes.len() * 8 + self.lens.len() + self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_exact_keys_only() {
        let mut cache = Recent::new();
        let (a, b) = (b"com.example/a".as_slice(), b"com.example/b".as_slice());
        assert!(!cache.contains(a, Recent::hash(a)));
        cache.remember(a, Recent::hash(a));
        assert!(cache.contains(a, Recent::hash(a)));
        assert!(!cache.contains(b, Recent::hash(b)));
        // Same slot and hash but other bytes (a forged hash) is still a miss.
        assert!(!cache.contains(b, Recent::hash(a)));
        assert!(!cache.contains(b"", Recent::hash(a)));
    }

    #[test]
    fn long_keys_are_not_cached_and_empty_keys_are() {
        let mut cache = Recent::new();
        let long = vec![b'x'; WIDTH + 1];
        cache.remember(&long, Recent::hash(&long));
        assert!(!cache.contains(&long, Recent::hash(&long)));
        cache.remember(b"", Recent::hash(b""));
        assert!(cache.contains(b"", Recent::hash(b"")));
    }
}
