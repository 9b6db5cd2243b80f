//! Scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison 2007): when
//! a slice holds its share of keys, add a slice twice as large at a tighter
//! rate, so the total false-positive rate stays bounded however many keys come.
//!
//! ```text
//!  slice 0: n0 keys at P0      slice 1: 2·n0 at P0·r     slice 2: 4·n0 at P0·r²  ...
//!  [ classic bloom ]           [ classic bloom      ]    [ classic bloom          ]
//!  a key is present if any slice says so; new keys go to the last slice
//! ```
//!
//! With `r = 1/2` and `P0 = p·(1 − r)`, the union bound gives a total rate
//! `≤ Σ P0·rⁱ = P0/(1 − r) = p`. Bytes per URL: about 1.44·log2(1/p)/8 plus
//! one bit per tightening step and up to 2× for the half-empty last slice.
//! Lookups hash once and probe every slice: O(slices) = O(log(n/n0)).
//!
//! ```
//! use mgz_seen::{SeenSet, bloom::ScalableBloom};
//! let mut s = ScalableBloom::new(1_000, 0.01).unwrap();
//! for i in 0..15_000u32 {
//!     s.insert(&i.to_le_bytes()); // 15x the first slice's count
//! }
//! assert!(s.slices() >= 4 && s.fpr_bound() <= 0.01);
//! let fp = (15_000..65_000u32).filter(|i| s.contains(&i.to_le_bytes())).count();
//! assert!(fp < 500 + 90, "{fp}"); // p = 1 % of 50,000 lookups, + 4 sd
//! ```

use super::{ClassicBloom, Hashes, hash};
use crate::{Guarantee, SeenError, SeenSet};

/// Each slice's rate is this times the previous one's.
pub const TIGHTENING: f64 = 0.5;
/// Each slice holds this many times the previous one's keys.
pub const GROWTH: usize = 2;

/// A Bloom filter that grows past its expected count with a bounded rate.
#[derive(Debug, Clone)]
pub struct ScalableBloom {
    slices: Vec<ClassicBloom>,
    /// Keys the last slice takes before the next one is added.
    capacity: usize,
    /// Rate of the last slice.
    slice_fpr: f64,
    fpr: f64,
    len: usize,
}

impl ScalableBloom {
    /// A filter whose first slice holds `expected` keys, with a total
    /// false-positive rate at most `fpr` at any size.
    pub fn new(expected: usize, fpr: f64) -> Result<Self, SeenError> {
        if !(fpr > 0.0 && fpr < 1.0) {
            return Err(SeenError::InvalidFpr { fpr });
        }
        let capacity = expected.max(64);
        let slice_fpr = fpr * (1.0 - TIGHTENING);
        let mut first = ClassicBloom::new(capacity, slice_fpr)?;
        first.silence();
        Ok(Self {
            slices: vec![first],
            capacity,
            slice_fpr,
            fpr,
            len: 0,
        })
    }

    /// Number of slices so far.
    pub fn slices(&self) -> usize {
        self.slices.len()
    }

    /// The bound the slices' rates add up to, `Σ P0·rⁱ` so far (≤ the target).
    pub fn fpr_bound(&self) -> f64 {
        let p0 = self.fpr * (1.0 - TIGHTENING);
        (0..self.slices.len())
            .map(|i| p0 * TIGHTENING.powi(i as i32))
            .sum()
    }

    fn contains_hashed(&self, h: Hashes) -> bool {
        self.slices.iter().any(|s| s.contains_hashed(h))
    }

    fn grow(&mut self) -> Result<(), SeenError> {
        let capacity = self.capacity.saturating_mul(GROWTH);
        let slice_fpr = self.slice_fpr * TIGHTENING;
        let mut slice = ClassicBloom::new(capacity, slice_fpr)?;
        slice.silence();
        self.slices.push(slice);
        self.capacity = capacity;
        self.slice_fpr = slice_fpr;
        Ok(())
    }
}

impl SeenSet for ScalableBloom {
    fn insert(&mut self, key: &[u8]) -> bool {
        let h = hash(key);
        if self.contains_hashed(h) {
            return false;
        }
        let full = self.slices.last().is_none_or(|s| s.len() >= self.capacity);
        if full && self.grow().is_err() {
            // A slice too large to size: keep filling the last one; its
            // estimate-based warning fires, the rate degrades gracefully.
            tracing::warn!("scalable bloom cannot grow further");
        }
        let Some(last) = self.slices.last_mut() else {
            return false;
        };
        let new = last.insert_hashed(h);
        self.len += usize::from(new);
        new
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hashed(hash(key))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn heap_bytes(&self) -> usize {
        let slices: usize = self.slices.iter().map(SeenSet::heap_bytes).sum();
        slices + self.slices.capacity() * std::mem::size_of::<ClassicBloom>()
    }

    fn guarantee(&self) -> Guarantee {
        Guarantee::FalsePositive { rate: self.fpr }
    }

    fn name(&self) -> &'static str {
        "bloom-scalable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_with_tightening_slices() {
        let mut b = ScalableBloom::new(1000, 0.01).unwrap();
        for i in 0..7000u32 {
            b.insert(&i.to_le_bytes());
        }
        // 1000 + 2000 + 4000 = 7000 keys fill three slices (less a few
        // false positives that were never added), so 3 or 4 slices exist.
        assert!((3..=4).contains(&b.slices()), "{}", b.slices());
        assert!(b.fpr_bound() <= 0.01);
        assert!((0..7000u32).all(|i| b.contains(&i.to_le_bytes())));
    }
}
