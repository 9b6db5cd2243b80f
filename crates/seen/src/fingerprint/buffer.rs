//! The mutable buffer of a generation: new fingerprints before they freeze.
//!
//! ```text
//! Sorted(Vec<u64>)      cap <= SORTED_MAX: 8 bytes a slot, binary search,
//!                       insert shifts at most 4 KiB
//! Hashed(HashSet<u64>)  bigger caps: ~18 bytes a slot at hashbrown's load,
//!                       O(1) insert
//! ```
//!
//! Small sets pay for the buffer in bytes per key (the whole buffer is live
//! at the end), so up to `SORTED_MAX` slots it is a sorted vector with no
//! load-factor slack; big sets buffer `capacity / 1024` fingerprints, where
//! a shift would cost more than a hash probe.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// Largest buffer kept as a sorted vector.
pub(crate) const SORTED_MAX: usize = 512;

/// The largest buffer size `<= n` that a table buffer fills completely.
///
/// hashbrown holds up to 7/8 of a power of two of buckets (9 bytes each),
/// and a drained table keeps its buckets: a cap just past such a size
/// doubles the table for nothing (8,137 slots at 10M keys took 16,384
/// buckets, 147 KB, 0.018 B/key; 7,168 slots take 8,192). Sorted buffers
/// (`n <= SORTED_MAX`) have no slack and keep `n`.
pub(crate) fn fitting_cap(n: usize) -> usize {
    if n <= SORTED_MAX {
        return n;
    }
    let buckets = 1usize << (usize::BITS - 1 - (n * 8 / 7).leading_zeros());
    buckets / 8 * 7
}

/// Fingerprints are already uniform, so the table uses them as hashes.
#[derive(Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// New fingerprints of a generation.
#[derive(Debug)]
pub(crate) enum FpBuffer {
    Sorted(Vec<u64>),
    Hashed(HashSet<u64, BuildHasherDefault<PassThrough>>),
}

impl FpBuffer {
    /// A buffer that will hold up to `cap` fingerprints.
    pub(crate) fn with_cap(cap: usize) -> Self {
        if cap <= SORTED_MAX {
            Self::Sorted(Vec::new())
        } else {
            Self::Hashed(HashSet::default())
        }
    }

    pub(crate) fn contains(&self, fp: u64) -> bool {
        match self {
            Self::Sorted(v) => v.binary_search(&fp).is_ok(),
            Self::Hashed(h) => h.contains(&fp),
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
            Self::Hashed(h) => {
                h.insert(fp);
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Sorted(v) => v.len(),
            Self::Hashed(h) => h.len(),
        }
    }

    /// The fingerprints in increasing order, left in place.
    pub(crate) fn sorted(&self) -> Vec<u64> {
        let mut out: Vec<u64> = match self {
            Self::Sorted(v) => v.clone(),
            Self::Hashed(h) => h.iter().copied().collect(),
        };
        out.sort_unstable();
        out
    }

    /// The fingerprints in increasing order; the buffer is left empty.
    pub(crate) fn drain_sorted(&mut self) -> Vec<u64> {
        match self {
            Self::Sorted(v) => std::mem::take(v),
            Self::Hashed(h) => {
                let mut out: Vec<u64> = h.drain().collect();
                out.sort_unstable();
                out
            }
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Self::Sorted(v) => v.capacity() * 8,
            Self::Hashed(h) => {
                // hashbrown: one u64 and one control byte per bucket, plus a group of 16.
                let cap = h.capacity();
                let buckets = if cap == 0 {
                    0
                } else {
                    (cap * 8 / 7).next_power_of_two()
                };
                buckets * 9 + if buckets > 0 { 16 } else { 0 }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fitting_table_buffer_never_grows_past_its_first_table() {
        assert_eq!(fitting_cap(64), 64);
        assert_eq!(fitting_cap(SORTED_MAX), SORTED_MAX);
        assert_eq!(fitting_cap(8_137), 7_168);
        assert_eq!(fitting_cap(7_168), 7_168);
        assert_eq!(fitting_cap(16_384), 14_336);
        for n in [513, 900, 1_000, 5_000, 9_765, 16_384] {
            let cap = fitting_cap(n);
            assert!(cap <= n && cap * 2 > n, "{n} -> {cap}");
            let mut b = FpBuffer::with_cap(cap);
            (0..cap as u64).for_each(|v| b.insert(v << 20, cap));
            let before = b.heap_bytes();
            let FpBuffer::Hashed(h) = &b else { continue };
            // Full to the cap, the table still has its first size.
            assert!(h.capacity() < cap + cap / 7 + 1, "{n}: {}", h.capacity());
            assert!(before <= (cap * 8 / 7).next_power_of_two() * 9 + 16);
        }
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
