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

use crate::{Guarantee, SeenError, SeenSet};

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

/// Version byte that starts a [`HashSeen`] snapshot.
const SNAPSHOT_VERSION: u8 = 1;

impl HashSeen {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rebuilds a set from [`SeenSet::snapshot`] bytes:
    /// `version u8 | count u64 LE | (len u32 LE | key bytes) * count`.
    pub fn restore(bytes: &[u8]) -> Result<Self, SeenError> {
        let bad = |reason: &str| SeenError::BadSnapshot {
            backend: "hash".into(),
            reason: reason.into(),
        };
        let (version, mut rest) = bytes.split_first().ok_or_else(|| bad("empty"))?;
        if *version != SNAPSHOT_VERSION {
            return Err(bad(&format!(
                "format version {version}, expected {SNAPSHOT_VERSION}"
            )));
        }
        let count = take_u64(&mut rest).ok_or_else(|| bad("truncated count"))?;
        let mut set = HashSeen::new();
        for _ in 0..count {
            let len = take_u32(&mut rest).ok_or_else(|| bad("truncated length"))? as usize;
            let key = rest.get(..len).ok_or_else(|| bad("truncated key"))?;
            if !set.insert(key) {
                return Err(bad("duplicate key"));
            }
            rest = &rest[len..];
        }
        if !rest.is_empty() {
            return Err(bad("trailing bytes"));
        }
        Ok(set)
    }
}

fn take_u64(b: &mut &[u8]) -> Option<u64> {
    let (head, rest) = b.split_first_chunk::<8>()?;
    *b = rest;
    Some(u64::from_le_bytes(*head))
}

fn take_u32(b: &mut &[u8]) -> Option<u32> {
    let (head, rest) = b.split_first_chunk::<4>()?;
    *b = rest;
    Some(u32::from_le_bytes(*head))
}

impl SeenSet for HashSeen {
    fn insert(&mut self, key: &[u8]) -> bool {
        if self.set.contains(key) {
            return false;
        }
        self.key_bytes += malloc_size(key.len());
        self.set.insert(key.into())
    }

    fn snapshot(&self) -> Option<Vec<u8>> {
        crate::snapshot_vec(self)
    }

    fn snapshot_len(&self) -> Option<u64> {
        let mut len = 9u64;
        for key in &self.set {
            // Keys over 4 GiB cannot come from a URL; refuse rather than truncate.
            u32::try_from(key.len()).ok()?;
            len += 4 + key.len() as u64;
        }
        Some(len)
    }

    fn write_snapshot(&self, out: &mut dyn std::io::Write) -> std::io::Result<bool> {
        let mut w = crate::Chunked::new(out);
        w.put(&[SNAPSHOT_VERSION])?;
        w.u64(self.set.len() as u64)?;
        for key in &self.set {
            let len = u32::try_from(key.len()).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "key over 4 GiB")
            })?;
            w.put(&len.to_le_bytes())?;
            w.put(key)?;
        }
        w.finish().map(|()| true)
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
