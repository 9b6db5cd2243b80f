//! `bloom`: Bloom filters as seed 003 describes them, plus a cache-blocked
//! layout and a scalable variant (Almeida et al., 2007).
//!
//! # Sizing and hashing (all variants)
//!
//! For `n` expected keys and false-positive rate `p`:
//! `m = −n·ln p / (ln 2)²` bits and `k = −ln p / ln 2` probes (rounded, ≥ 1).
//! One xxh3-128 hash per key gives `h1` (low 64 bits) and `h2` (high 64
//! bits, forced odd); probe `i` is `h1 + i·h2`, mapped onto `[0, m)` by a
//! multiply-shift (`(x · m) >> 64`, no division).
//!
//! The set-bit count `X` is kept up to date, so the number of keys inserted
//! can be estimated as `−(m/k)·ln(1 − X/m)` ([`ClassicBloom::estimated_len`]);
//! once that estimate passes `n` the filter logs one `tracing::warn!`,
//! because its false-positive rate is now above `p` and climbing.
//!
//! # Layouts
//!
//! ```text
//!  classic: one bit array of m bits, k probes anywhere in it
//!   [u64][u64][u64] ... [u64]        k cache misses per key
//!
//!  blocked: m bits as 512-bit (64-byte, cache-line aligned) blocks;
//!   h1 picks the block, h2 the k bits inside it
//!   [ block 0: 8 x u64 ][ block 1 ] ... one cache miss per key
//! ```
//!
//! The blocked layout loads one cache line per key instead of k, but uneven
//! block loads raise its false-positive rate, so [`BlockedBloom::new`] grows
//! `m` until the analytic rate of the blocked layout is at most `p` (+5 % bits
//! at p = 1 %). `mgz bench seen --backends bloom-classic,bloom-blocked`
//! compares the two at equal false-positive rate. Measured at 10M keys
//! (docs/BENCHMARKS.md): equal insert time, classic lookups 23–30 % faster
//! (absent keys stop at the first clear bit, ~2 probes, and a present key's
//! k independent loads overlap), so `bloom` is the classic layout.
//!
//! # Invariants
//! - A key once inserted answers `contains == true` forever (no false negatives).
//! - `insert` returns true when it set at least one new bit; a new key whose
//!   bits were all set already (a false positive) returns false and is not counted.
//!
//! # Cost
//! Bytes per URL: `m / 8n = 1.44·log2(1/p) / 8`, i.e. 1.2 B at p = 1 %
//! (blocked: a few % more), independent of URL length. Time: one hash of the
//! key plus k bit probes (classic: up to k cache misses; blocked: one).
//!
//! ```
//! use mgz_seen::{SeenSet, bloom::ClassicBloom};
//! let bloom = ClassicBloom::new(1_000_000, 0.01).unwrap();
//! let bytes_per_url = bloom.heap_bytes() as f64 / 1e6;
//! assert!(bytes_per_url < 1.2); // 9.59 bits per key at p = 1 %
//! assert_eq!(bloom.hashes(), 7);
//! ```

mod blocked;
mod classic;
mod scalable;

pub use blocked::BlockedBloom;
pub use classic::ClassicBloom;
pub use scalable::ScalableBloom;

use crate::SeenError;

/// The false-positive rate `bloom` uses when none is asked for.
pub const DEFAULT_FPR: f64 = 0.01;

/// The two hashes of one key: probe `i` is `h1 + i·h2`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hashes {
    pub h1: u64,
    pub h2: u64,
}

pub(crate) fn hash(key: &[u8]) -> Hashes {
    let h = xxhash_rust::xxh3::xxh3_128(key);
    Hashes {
        h1: h as u64,
        h2: ((h >> 64) as u64) | 1,
    }
}

/// Maps a uniform 64-bit value onto `[0, n)` without division.
#[inline]
pub(crate) fn reduce(x: u64, n: u64) -> u64 {
    ((u128::from(x) * u128::from(n)) >> 64) as u64
}

/// `(m bits, k probes)` for `n` keys at rate `p` (the seed's formulas).
pub(crate) fn classic_size(
    n: usize,
    p: f64,
    backend: &'static str,
) -> Result<(u64, u32), SeenError> {
    if !(p > 0.0 && p < 1.0) {
        return Err(SeenError::InvalidFpr { fpr: p });
    }
    let ln2 = std::f64::consts::LN_2;
    let m = (-(n.max(1) as f64) * p.ln() / (ln2 * ln2)).ceil();
    // 2^48 bits = 32 TiB: anything larger is a sizing mistake, not a filter.
    if m > (1u64 << 48) as f64 {
        return Err(SeenError::TooLarge {
            expected: n as u64,
            backend,
        });
    }
    let k = (-p.ln() / ln2).round().max(1.0) as u32;
    Ok(((m as u64).max(64), k))
}

/// Bit count at which `−(m/k)·ln(1 − X/m)` passes `n`.
pub(crate) fn warn_threshold(m: u64, k: u32, n: usize) -> u64 {
    let m = m as f64;
    (m * (1.0 - (-(k as f64) * n as f64 / m).exp())).ceil() as u64
}

/// `−(m/k)·ln(1 − X/m)`: seed 003's estimate of the keys inserted.
pub(crate) fn estimate(m: u64, k: u32, set_bits: u64) -> f64 {
    let (m, x) = (m as f64, set_bits as f64);
    -(m / f64::from(k)) * (1.0 - x / m).ln()
}

/// What both layouts track besides their bits: the set-bit count, the keys
/// counted, and whether the over-capacity warning has fired.
#[derive(Debug, Clone)]
pub(crate) struct Fill {
    pub m: u64,
    pub k: u32,
    pub expected: usize,
    pub fpr: f64,
    set_bits: u64,
    warn_at: u64,
    pub warned: bool,
    pub len: usize,
}

impl Fill {
    pub fn new(m: u64, k: u32, expected: usize, fpr: f64) -> Self {
        Self {
            m,
            k,
            expected,
            fpr,
            set_bits: 0,
            warn_at: warn_threshold(m, k, expected),
            warned: false,
            len: 0,
        }
    }

    /// Records one insert that set `new_bits` bits; true when the key was new.
    pub fn record(&mut self, new_bits: u64) -> bool {
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

    /// `−(m/k)·ln(1 − X/m)`.
    pub fn estimated_len(&self) -> f64 {
        estimate(self.m, self.k, self.set_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_formulas() {
        let (m, k) = classic_size(1000, 0.01, "t").unwrap();
        assert_eq!(m, 9586); // 1000 * 4.60517 / 0.480453, rounded up
        assert_eq!(k, 7); // 6.64 rounded
        assert!(classic_size(10, 0.0, "t").is_err());
        assert!(classic_size(10, 1.0, "t").is_err());
        assert!(classic_size(10, f64::NAN, "t").is_err());
        assert!(classic_size(usize::MAX, 1e-9, "t").is_err());
    }

    #[test]
    fn estimate_inverts_threshold() {
        let (m, k) = classic_size(5000, 0.01, "t").unwrap();
        let x = warn_threshold(m, k, 5000);
        let e = estimate(m, k, x);
        assert!((e - 5000.0).abs() < 2.0, "{e}");
    }

    #[test]
    fn reduce_stays_in_range() {
        for x in [0, 1, u64::MAX / 2, u64::MAX] {
            assert!(reduce(x, 10) < 10);
        }
        assert_eq!(reduce(u64::MAX, 1000), 999);
    }
}
