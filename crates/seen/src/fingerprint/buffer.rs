//! The mutable buffer of a generation: new fingerprints before they freeze.
//!
//! ```text
//! Sorted(Vec<u64>)   cap <= SORTED_MAX: 8 bytes a slot, binary search,
//!                    insert shifts at most 4 KiB
//! Table(FpTable)     bigger caps: next_power_of_two(cap · 8/7) u64 slots,
//!                    fp + 1 stored (0 = empty), linear probing, O(1) insert
//! ```
//!
//! Small sets pay for the buffer in bytes per key (the whole buffer is live
//! at the end), so up to `SORTED_MAX` slots it is a sorted vector with no
//! load-factor slack; big sets buffer `capacity / 1024` fingerprints, where
//! a shift would cost more than a hash probe. The table has as many slots
//! as hashbrown would have buckets for `cap` values (so the same load, at
//! most 7/8) but 8 bytes a slot instead of 9 (no control byte): at 10M keys
//! 8,137 slots take 131 KB instead of 147 KB. Fingerprints are uniform, so
//! a multiply-shift of them spreads the slots.

/// Largest buffer kept as a sorted vector.
pub(crate) const SORTED_MAX: usize = 512;

/// Set of fingerprints (`< 2^63`, stored `+ 1` so 0 marks an empty slot)
/// with linear probing; the caller keeps it at most 7/8 full.
#[derive(Debug)]
pub(crate) struct FpTable {
    slots: Vec<u64>,
    shift: u32,
    len: usize,
}

impl FpTable {
    /// A table of `slots` (rounded up to a power of two, at least 2).
    pub(crate) fn with_slots(slots: usize) -> Self {
        let size = slots.next_power_of_two().max(2);
        Self {
            slots: vec![0; size],
            shift: 64 - size.trailing_zeros(),
            len: 0,
        }
    }

    /// Where `fp` is, or the empty slot where it would go.
    #[inline]
    fn find(&self, fp: u64) -> usize {
        let want = fp + 1;
        let mask = self.slots.len() - 1;
        let mut i = (want.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        while self.slots[i] != 0 && self.slots[i] != want {
            i = (i + 1) & mask;
        }
        i
    }

    pub(crate) fn contains(&self, fp: u64) -> bool {
        self.slots[self.find(fp)] != 0
    }

    /// Adds `fp`; `false` when it was already there.
    pub(crate) fn insert(&mut self, fp: u64) -> bool {
        let i = self.find(fp);
        let fresh = self.slots[i] == 0;
        if fresh {
            self.slots[i] = fp + 1;
            self.len += 1;
        }
        fresh
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The fingerprints in increasing order; `clear` empties the table
    /// (keeping its slots).
    fn sorted(&mut self, clear: bool) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.len);
        for slot in &mut self.slots {
            if *slot != 0 {
                out.push(*slot - 1);
                if clear {
                    *slot = 0;
                }
            }
        }
        if clear {
            self.len = 0;
        }
        out.sort_unstable();
        out
    }

    fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 8
    }
}

/// New fingerprints of a generation.
#[derive(Debug)]
pub(crate) enum FpBuffer {
    Sorted(Vec<u64>),
    Table(FpTable),
}

impl FpBuffer {
    /// A buffer that will hold up to `cap` fingerprints.
    pub(crate) fn with_cap(cap: usize) -> Self {
        if cap <= SORTED_MAX {
            Self::Sorted(Vec::new())
        } else {
            // hashbrown's bucket count for `cap` values: load at most 7/8.
            Self::Table(FpTable::with_slots(cap * 8 / 7))
        }
    }

    pub(crate) fn contains(&self, fp: u64) -> bool {
        match self {
            Self::Sorted(v) => v.binary_search(&fp).is_ok(),
            Self::Table(t) => t.contains(fp),
        }
    }

    /// Adds `fp`, which the caller checked is absent.
    pub(crate) fn insert(&mut self, fp: u64, cap: usize) {
        match self {
            Self::Sorted(v) => {
                if v.len() == v.capacity() {
                    // Grow by half, never past `cap`: small sets pay for every slot.
                    let room = cap.saturating_sub(v.len()).max(1);
                    v.reserve_exact((v.len() / 2).max(8).min(room));
                }
                let at = v.partition_point(|&x| x < fp);
                v.insert(at, fp);
            }
            Self::Table(t) => {
                t.insert(fp);
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Sorted(v) => v.len(),
            Self::Table(t) => t.len(),
        }
    }

    /// The fingerprints in increasing order, left in place.
    pub(crate) fn sorted(&self) -> Vec<u64> {
        match self {
            Self::Sorted(v) => v.clone(),
            Self::Table(t) => {
                let mut out: Vec<u64> =
                    t.slots.iter().filter(|&&s| s != 0).map(|s| s - 1).collect();
                out.sort_unstable();
                out
            }
        }
    }

    /// The fingerprints in increasing order; the buffer is left empty.
    pub(crate) fn drain_sorted(&mut self) -> Vec<u64> {
        match self {
            Self::Sorted(v) => std::mem::take(v),
            Self::Table(t) => t.sorted(true),
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Self::Sorted(v) => v.capacity() * 8,
            Self::Table(t) => t.heap_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp_table_is_a_set() {
        let mut t = FpTable::with_slots(200);
        for v in 0..100u64 {
            assert!(!t.contains(v * 7));
            assert!(t.insert(v * 7));
        }
        assert!((0..100u64).all(|v| !t.insert(v * 7) && t.contains(v * 7)));
        assert!(t.insert(1) && t.insert((1 << 63) - 1) && !t.contains(2));
        assert_eq!(t.len(), 102);
        let got = t.sorted(true);
        assert_eq!(got.len(), 102);
        assert!(got.windows(2).all(|w| w[0] < w[1]));
        assert_eq!((t.len(), t.contains(7)), (0, false));
    }

    #[test]
    fn a_full_table_buffer_keeps_its_first_slots() {
        // 8,137 slots at 10M keys: 16,384 u64 slots, never regrown.
        let cap = 8_137;
        let mut b = FpBuffer::with_cap(cap);
        let bytes = b.heap_bytes();
        assert_eq!(bytes, 16_384 * 8);
        (0..cap as u64).for_each(|v| b.insert(v << 20, cap));
        assert_eq!(b.heap_bytes(), bytes);
        let mut tight = FpBuffer::with_cap(7 * 128);
        (0..7 * 128u64).for_each(|v| tight.insert(v.wrapping_mul(0x9E37_79B9) >> 2, 7 * 128));
        assert_eq!((tight.heap_bytes(), tight.len()), (1024 * 8, 7 * 128));
    }

    #[test]
    fn both_layouts_agree() {
        for cap in [SORTED_MAX, SORTED_MAX + 1] {
            let mut b = FpBuffer::with_cap(cap);
            let values: Vec<u64> = (0..300u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect();
            for &v in &values {
                assert!(!b.contains(v));
                b.insert(v, cap);
            }
            assert!(values.iter().all(|&v| b.contains(v)));
            let mut sorted = values.clone();
            sorted.sort_unstable();
            assert_eq!(b.drain_sorted(), sorted);
            assert_eq!(b.len(), 0);
        }
    }
}
