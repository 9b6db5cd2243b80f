//! Library peers measured beside our backends in the same run:
//! `fastbloom` (a blocked Bloom filter) and `qfilter` (a quotient filter,
//! the fingerprint-set peer), wrapped as `SeenSet`s.

use mgz_seen::{Guarantee, SeenSet};

/// `fastbloom::BloomFilter` at a given false-positive rate.
pub struct FastBloom {
    filter: fastbloom::BloomFilter,
    fpr: f64,
    len: usize,
}

impl FastBloom {
    /// Sized for `expected` keys at `fpr`.
    pub fn new(expected: usize, fpr: f64) -> Self {
        let filter = fastbloom::BloomFilter::with_false_pos(fpr).expected_items(expected.max(1));
        Self {
            filter,
            fpr,
            len: 0,
        }
    }
}

impl SeenSet for FastBloom {
    fn insert(&mut self, key: &[u8]) -> bool {
        // fastbloom returns whether the key was (maybe) there already.
        let new = !self.filter.insert(key);
        self.len += usize::from(new);
        new
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.filter.contains(key)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn heap_bytes(&self) -> usize {
        self.filter.num_bits() / 8
    }

    fn guarantee(&self) -> Guarantee {
        Guarantee::FalsePositive { rate: self.fpr }
    }

    fn name(&self) -> &'static str {
        "fastbloom"
    }
}

/// `qfilter::Filter`, sized for the input at a given rate.
pub struct QFilter {
    filter: qfilter::Filter,
    fpr: f64,
    /// Inserts refused because the filter was full (should stay 0).
    pub refused: usize,
}

impl QFilter {
    /// Sized for `capacity` keys at `fpr`.
    pub fn new(capacity: usize, fpr: f64) -> anyhow::Result<Self> {
        let filter = qfilter::Filter::new(capacity.max(1) as u64, fpr)
            .map_err(|e| anyhow::anyhow!("qfilter: {e:?}"))?;
        Ok(Self {
            filter,
            fpr,
            refused: 0,
        })
    }
}

impl SeenSet for QFilter {
    fn insert(&mut self, key: &[u8]) -> bool {
        match self.filter.insert(key) {
            Ok(new) => new,
            Err(_) => {
                self.refused += 1;
                false
            }
        }
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.filter.contains(key)
    }

    fn len(&self) -> usize {
        self.filter.len() as usize
    }

    fn heap_bytes(&self) -> usize {
        self.filter.memory_usage()
    }

    fn guarantee(&self) -> Guarantee {
        Guarantee::FalsePositive { rate: self.fpr }
    }

    fn name(&self) -> &'static str {
        "qfilter"
    }
}
