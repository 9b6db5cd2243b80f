//! The seed's layout: one flat bit array, k probes anywhere in it.

use super::{Hashes, classic_size, estimate, hash, reduce, warn_threshold};
use crate::{Guarantee, SeenError, SeenSet};

/// A classic Bloom filter (seed 003).
#[derive(Debug, Clone)]
pub struct ClassicBloom {
    bits: Vec<u64>,
    m: u64,
    k: u32,
    expected: usize,
    fpr: f64,
    set_bits: u64,
    warn_at: u64,
    warned: bool,
    len: usize,
}

impl ClassicBloom {
    /// A filter for `expected` keys at false-positive rate `fpr` in (0, 1).
    pub fn new(expected: usize, fpr: f64) -> Result<Self, SeenError> {
        let (m, k) = classic_size(expected, fpr, "bloom-classic")?;
        Ok(Self {
            bits: vec![0; m.div_ceil(64) as usize],
            m,
            k,
            expected,
            fpr,
            set_bits: 0,
            warn_at: warn_threshold(m, k, expected),
            warned: false,
            len: 0,
        })
    }

    /// Number of probes per key.
    pub fn hashes(&self) -> u32 {
        self.k
    }

    /// Number of bits.
    pub fn bits(&self) -> u64 {
        self.m
    }

    /// Seed 003's estimate of the keys inserted, from the set-bit count.
    pub fn estimated_len(&self) -> f64 {
        estimate(self.m, self.k, self.set_bits)
    }

    /// Whether the estimate has passed the expected count (and warned).
    pub fn over_capacity(&self) -> bool {
        self.warned
    }

    fn probe(&self, h: Hashes, i: u32) -> (usize, u64) {
        let bit = reduce(h.h1.wrapping_add(u64::from(i).wrapping_mul(h.h2)), self.m);
        ((bit / 64) as usize, 1u64 << (bit % 64))
    }

    pub(crate) fn insert_hashed(&mut self, h: Hashes) -> bool {
        let mut new_bits = 0;
        for i in 0..self.k {
            let (w, mask) = self.probe(h, i);
            new_bits += u64::from(self.bits[w] & mask == 0);
            self.bits[w] |= mask;
        }
        self.set_bits += new_bits;
        if new_bits == 0 {
            return false;
        }
        self.len += 1;
        if !self.warned && self.set_bits >= self.warn_at {
            self.warned = true;
            tracing::warn!(
                estimate = self.estimated_len(),
                expected = self.expected,
                "bloom filter holds more keys than it was sized for; false-positive rate now above target"
            );
        }
        true
    }

    pub(crate) fn contains_hashed(&self, h: Hashes) -> bool {
        (0..self.k).all(|i| {
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
        self.len
    }

    fn heap_bytes(&self) -> usize {
        self.bits.capacity() * 8
    }

    fn guarantee(&self) -> Guarantee {
        Guarantee::FalsePositive { rate: self.fpr }
    }

    fn name(&self) -> &'static str {
        "bloom-classic"
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
