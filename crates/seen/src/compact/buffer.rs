//! The mutable part of the compact set: keys in an arena, found by a hash table.
//!
//! ```text
//! arena : [varint len][key bytes][varint len][key bytes] ...   (append only)
//! table : hashbrown RawTable of (arena offset: u32, hash >> 32: u32), 8 bytes a slot
//! ```
//!
//! Invariants: every key in the arena appears once and has one table entry;
//! the arena stays below `u32::MAX` bytes (the set flushes long before).
//! Bytes per key: key length + 1–3 (length) + ~8 / load factor (≈ 10).
//! Cost: one hash-table probe and one key comparison per lookup; no
//! allocation per key (the arena and table grow geometrically).

use hashbrown::HashTable;

use super::run::word_after;

/// Keys not yet frozen into a run.
#[derive(Debug, Default)]
pub(crate) struct KeyBuffer {
    arena: Vec<u8>,
    table: HashTable<(u32, u32)>,
}

fn table_hash(hash_hi: u32) -> u64 {
    u64::from(hash_hi).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

pub(crate) fn write_varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`, advancing it.
pub(crate) fn read_varint(bytes: &[u8], pos: &mut usize) -> usize {
    let (mut v, mut shift) = (0usize, 0);
    loop {
        let b = bytes[*pos];
        *pos += 1;
        v |= usize::from(b & 0x7F) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

impl KeyBuffer {
    fn key_at(&self, offset: u32) -> &[u8] {
        let mut pos = offset as usize;
        let len = read_varint(&self.arena, &mut pos);
        &self.arena[pos..pos + len]
    }

    /// Whether `key` (whose xxh3 is `hash`) is buffered.
    pub(crate) fn contains(&self, key: &[u8], hash: u64) -> bool {
        let hi = (hash >> 32) as u32;
        self.table
            .find(table_hash(hi), |&(off, h)| {
                h == hi && self.key_at(off) == key
            })
            .is_some()
    }

    /// Adds `key`, which the caller checked is absent.
    pub(crate) fn insert_new(&mut self, key: &[u8], hash: u64) {
        let hi = (hash >> 32) as u32;
        let offset = self.arena.len() as u32;
        write_varint(&mut self.arena, key.len());
        self.arena.extend_from_slice(key);
        self.table
            .insert_unique(table_hash(hi), (offset, hi), |&(_, h)| table_hash(h));
    }

    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub(crate) fn arena_len(&self) -> usize {
        self.arena.len()
    }

    /// The keys in increasing order. Each is sorted with its first 8 bytes
    /// as a big-endian word (zero padded), so most comparisons are one
    /// integer compare; equal words fall back to comparing the keys.
    pub(crate) fn sorted(&self) -> Vec<&[u8]> {
        let mut keys: Vec<(u64, &[u8])> = self
            .table
            .iter()
            .map(|&(off, _)| {
                let key = self.key_at(off);
                (word_after(key, 0), key)
            })
            .collect();
        // Equal words: the whole keys decide ("ab" and "ab\0" share a word).
        keys.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
        keys.into_iter().map(|(_, k)| k).collect()
    }

    /// Forgets every key and returns the memory.
    pub(crate) fn clear(&mut self) {
        self.arena = Vec::new();
        self.table = HashTable::new();
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        // hashbrown: buckets = capacity * 8 / 7 rounded to a power of two,
        // 8 bytes of entry plus one control byte each, plus a 16-byte group.
        let cap = self.table.capacity();
        let buckets = if cap == 0 {
            0
        } else {
            (cap * 8 / 7).next_power_of_two()
        };
        self.arena.capacity() + buckets * 9 + if buckets > 0 { 16 } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh3::xxh3_64;

    #[test]
    fn finds_what_it_holds_and_sorts() {
        let mut b = KeyBuffer::default();
        let big = vec![7u8; 70_000];
        let keys: [&[u8]; 4] = [b"b", b"", b"a", &big];
        for k in keys {
            assert!(!b.contains(k, xxh3_64(k)));
            b.insert_new(k, xxh3_64(k));
        }
        assert!(keys.iter().all(|k| b.contains(k, xxh3_64(k))));
        assert!(b.sorted() == vec![&b""[..], &big, b"a", b"b"], "not sorted");
        b.clear();
        assert!(b.is_empty() && !b.contains(b"a", xxh3_64(b"a")));
    }

    #[test]
    fn zero_bytes_and_short_keys_sort_as_bytes() {
        let keys: [&[u8]; 9] = [
            b"ab\0\0\0\0\0\0\x01",
            b"ab\0",
            b"ab",
            b"ab\0\0\0\0\0\0",
            b"a",
            b"ab\0\0\0\0\0\0\0",
            b"abcdefgh",
            b"abcdefg",
            b"\0",
        ];
        let mut b = KeyBuffer::default();
        for k in keys {
            b.insert_new(k, xxh3_64(k));
        }
        let mut want = keys.to_vec();
        want.sort_unstable();
        assert!(b.sorted() == want, "{:?}", b.sorted());
    }
}
