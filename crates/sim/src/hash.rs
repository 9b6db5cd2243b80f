//! Deterministic hashing: every random choice in the sim is a pure function of
//! the seed and a few integers or strings, so nothing needs to be stored.
//!
//! `mix` is the SplitMix64 finaliser (cheap, well distributed, identical on
//! every platform); strings go through xxh3 first.

/// SplitMix64 finaliser of `x`.
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Hash of a seed and a list of integers (order matters).
pub(crate) fn h(seed: u64, parts: &[u64]) -> u64 {
    parts.iter().fold(mix(seed), |acc, &p| mix(acc ^ mix(p)))
}

/// A uniform float in [0, 1) from a hash.
pub(crate) fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// A small deterministic stream of random numbers (for generators that draw many).
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A stream seeded by `seed` and `parts`.
    pub(crate) fn new(seed: u64, parts: &[u64]) -> Self {
        Rng(h(seed, parts))
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A uniform integer in [0, n) (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A uniform float in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        unit(self.next_u64())
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_spreads() {
        let mut rng = Rng::new(7, &[1, 2]);
        let mut counts = [0u32; 4];
        for _ in 0..4000 {
            counts[rng.below(4) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn hashes_depend_on_every_part() {
        assert_ne!(h(1, &[1, 2]), h(1, &[2, 1]));
        assert_ne!(h(1, &[1]), h(2, &[1]));
    }
}
