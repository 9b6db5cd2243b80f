//! The seed's layout: one flat bit array, k probes anywhere in it.

use super::{Fill, Hashes, classic_size, hash, reduce};
use crate::{Guarantee, SeenError, SeenSet};

/// A classic Bloom filter (seed 003).
#[derive(Debug, Clone)]
pub struct ClassicBloom {
    bits: Vec<u64>,
    fill: Fill,
}

impl ClassicBloom {
    /// A filter for `expected` keys at false-positive rate `fpr` in (0, 1).
    pub fn new(expected: usize, fpr: f64) -> Result<Self, SeenError> {
        let (m, k) = classic_size(expected, fpr, "bloom-classic")?;
        Ok(Self {
            bits: vec![0; m.div_ceil(64) as usize],
            fill: Fill::new(m, k, expected, fpr),
        })
    }

    /// Stops the over-capacity warning (a scalable filter's slices are
    /// replaced, not overfilled, when they reach their count).
    pub(crate) fn silence(&mut self) {
        self.fill.warned = true;
    }

    /// Number of probes per key.
    pub fn hashes(&self) -> u32 {
        self.fill.k
    }

    /// Number of bits.
    pub fn bits(&self) -> u64 {
        self.fill.m
    }

    /// Seed 003's estimate of the keys inserted, from the set-bit count.
    pub fn estimated_len(&self) -> f64 {
        self.fill.estimated_len()
    }

    /// Whether the estimate has passed the expected count (and warned).
    pub fn over_capacity(&self) -> bool {
        self.fill.warned
    }

    fn probe(&self, h: Hashes, i: u32) -> (usize, u64) {
        let bit = reduce(
            h.h1.wrapping_add(u64::from(i).wrapping_mul(h.h2)),
            self.fill.m,
        );
        ((bit / 64) as usize, 1u64 << (bit % 64))
    }

    pub(crate) fn insert_hashed(&mut self, h: Hashes) -> bool {
        let mut new_bits = 0;
        for i in 0..self.fill.k {
            let (w, mask) = self.probe(h, i);
            new_bits += u64::from(self.bits[w] & mask == 0);
            self.bits[w] |= mask;
        }
        self.fill.record(new_bits)
    }

    pub(crate) fn contains_hashed(&self, h: Hashes) -> bool {
        (0..self.fill.k).all(|i| {
            let (w, mask) = self.probe(h, i);
            self.bits[w] & mask != 0
        })
    }
}

impl SeenSet for ClassicBloom {
    fn insert(&mut self, key: &[u8]) -> bool {
        self.insert_hashed(hash(key))
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.contains_hashed(hash(key))
    }

    fn len(&self) -> usize {
        self.fill.len
    }

    fn heap_bytes(&self) -> usize {
        self.bits.capacity() * 8
    }

    fn guarantee(&self) -> Guarantee {
        Guarantee::FalsePositive {
            rate: self.fill.fpr,
        }
    }

    fn name(&self) -> &'static str {
        "bloom"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_tracks_inserts_and_warns_past_n() {
        let mut b = ClassicBloom::new(2000, 0.01).unwrap();
        for i in 0..2000u32 {
            b.insert(&i.to_le_bytes());
        }
        let e = b.estimated_len();
        // The estimator's standard error here is well under 2 %.
        assert!((e - 2000.0).abs() < 100.0, "estimate {e}");
        for i in 2000..2200u32 {
            b.insert(&i.to_le_bytes());
        }
        assert!(b.over_capacity());
    }

    #[test]
    fn under_capacity_does_not_warn() {
        let mut b = ClassicBloom::new(2000, 0.01).unwrap();
        for i in 0..1800u32 {
            b.insert(&i.to_le_bytes());
        }
        assert!(!b.over_capacity());
    }
}
