//! Snapshot form of a [`CompactSet`]: its keys in order, front-coded.
//!
//! ```text
//! version u8 (= 1) | varint count | count × ( varint shared | varint suffix_len | suffix bytes )
//! ```
//!
//! Each key is `shared` bytes of the previous key (the first key: none)
//! followed by its suffix; keys strictly increase, so a snapshot lists every
//! key once. About (2 + suffix) bytes per key: plainer than the set itself
//! (no Huffman, no dictionary) so that restore can check every byte, and the
//! restored set is built the way inserts build it (same layout, same bytes).
//!
//! Restore refuses, with [`SeenError::BadSnapshot`] and never a panic: a
//! wrong version, a truncated entry or count, `shared` past the previous
//! key, keys out of order or repeated, a varint over 64 bits, trailing bytes.

use super::CompactSet;
use crate::{Chunked, SeenError};
use xxhash_rust::xxh3::xxh3_64;

/// Version byte that starts a compact snapshot.
const VERSION: u8 = 1;

fn bad(reason: &str) -> SeenError {
    SeenError::BadSnapshot {
        backend: "compact".into(),
        reason: reason.into(),
    }
}

fn put_varint(out: &mut Vec<u8>, v: usize) {
    super::buffer::write_varint(out, v);
}

/// Reads a varint from the front of `bytes`; `None` when truncated or over 64 bits.
fn take_varint(bytes: &mut &[u8]) -> Option<usize> {
    let (mut v, mut shift) = (0u64, 0u32);
    loop {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        if shift > 63 || (shift == 63 && b > 1) {
            return None;
        }
        v |= u64::from(b & 0x7F) << shift;
        if b < 0x80 {
            return usize::try_from(v).ok();
        }
        shift += 7;
    }
}

impl CompactSet {
    /// The snapshot bytes (see the module docs).
    pub(crate) fn to_snapshot(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = self.stream_snapshot(&mut out);
        out
    }

    /// Writes the snapshot bytes key by key, as the set's iterator decodes
    /// them: nothing the size of the set is allocated.
    pub(crate) fn stream_snapshot(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut w = Chunked::new(out);
        let mut entry = vec![VERSION];
        put_varint(&mut entry, self.len);
        let mut prev: Vec<u8> = Vec::new();
        for key in self.iter() {
            let shared = prev.iter().zip(&key).take_while(|(a, b)| a == b).count();
            put_varint(&mut entry, shared);
            put_varint(&mut entry, key.len() - shared);
            w.put(&entry)?;
            w.put(&key[shared..])?;
            entry.clear();
            prev = key;
        }
        w.put(&entry)?;
        w.finish()
    }

    /// Rebuilds a set from [`CompactSet::to_snapshot`] bytes.
    pub fn restore(bytes: &[u8]) -> Result<Self, SeenError> {
        let (&version, mut rest) = bytes.split_first().ok_or_else(|| bad("empty"))?;
        if version != VERSION {
            return Err(bad(&format!(
                "format version {version}, expected {VERSION}"
            )));
        }
        let count = take_varint(&mut rest).ok_or_else(|| bad("truncated count"))?;
        let mut set = CompactSet::new();
        let mut key: Vec<u8> = Vec::new();
        for i in 0..count {
            let shared = take_varint(&mut rest).ok_or_else(|| bad("truncated entry"))?;
            let len = take_varint(&mut rest).ok_or_else(|| bad("truncated entry"))?;
            if shared > key.len() {
                return Err(bad("shared prefix longer than the previous key"));
            }
            let suffix = rest.get(..len).ok_or_else(|| bad("truncated key"))?;
            rest = &rest[len..];
            let in_order = i == 0
                || suffix
                    .first()
                    .is_some_and(|&b| key.get(shared).is_none_or(|&p| b > p));
            if !in_order {
                return Err(bad("keys out of order or repeated"));
            }
            key.truncate(shared);
            key.extend_from_slice(suffix);
            // In order and distinct: new to the set, no lookup needed.
            set.add_new(&key, xxh3_64(&key));
        }
        if !rest.is_empty() {
            return Err(bad("trailing bytes"));
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SeenSet;

    fn sample() -> CompactSet {
        let mut set = CompactSet::new();
        for i in 0..6_000u32 {
            set.insert(format!("org.example.www/{}/{}", i % 37, i * 7).as_bytes());
        }
        set.insert(b"");
        set.insert(&[0xFF; 300]);
        set
    }

    #[test]
    fn round_trip_keeps_every_key_and_the_order() {
        let set = sample();
        let back = CompactSet::restore(&set.to_snapshot()).expect("restores");
        assert_eq!(back.len(), set.len());
        assert!(back.iter().eq(set.iter()));
        assert!(back.contains(b"") && !back.contains(b"org.example.www/0/1"));
        let empty = CompactSet::restore(&CompactSet::new().to_snapshot()).expect("empty");
        assert!(empty.is_empty());
    }

    #[test]
    fn malformed_snapshots_are_refused() {
        let bytes = sample().to_snapshot();
        for cut in [0, 1, 2, bytes.len() / 2, bytes.len() - 1] {
            assert!(CompactSet::restore(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(CompactSet::restore(&longer).is_err(), "trailing byte");
        assert!(CompactSet::restore(&[2, 0]).is_err(), "version");
        // Two equal keys, then a key below its predecessor.
        assert!(CompactSet::restore(&[1, 2, 0, 1, b'a', 1, 0]).is_err());
        assert!(CompactSet::restore(&[1, 2, 0, 1, b'b', 0, 1, b'a']).is_err());
        // Shared prefix past the previous key; a varint over 64 bits.
        assert!(CompactSet::restore(&[1, 2, 0, 1, b'a', 5, 1, b'b']).is_err());
        assert!(
            CompactSet::restore(&[
                1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F
            ])
            .is_err()
        );
        assert!(CompactSet::restore(&[1, 2, 0, 0, 0, 1, b'a']).is_ok());
    }
}
