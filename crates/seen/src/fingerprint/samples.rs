//! Select samples of an Elias–Fano high bit-vector: the bit position of
//! every `ZERO_SAMPLE`-th zero, so `select0` scans at most ~2 words.
//!
//! ```text
//! Narrow:  base[s] : u32 position of sample s * SUPER            (1 per SUPER samples)
//!          off[j]  : u16 position of sample j − base[j / SUPER]
//! Wide  :  pos[j]  : u32                                          (fallback)
//! ```
//!
//! With hashed values a high vector has at most one one per zero, so SUPER
//! samples span about `2 · SUPER · ZERO_SAMPLE` = 32 Ki bits and the offsets
//! fit in 16 bits: 16 bits per 128 zeros ≈ 0.13–0.25 bits per value, the
//! space of 32-bit samples every 256 zeros with half the scan (every 64
//! zeros measured ~10 % faster lookups but cost 0.03 B/key, too much for
//! the 5 B/key limit on a 2,846-key set). A vector
//! whose offsets do not fit (skewed values, e.g. a crafted snapshot) keeps
//! 32-bit positions instead, so every input stays correct.

/// Zeros between two samples.
pub(crate) const ZERO_SAMPLE: u64 = 128;

/// Samples per 32-bit base.
const SUPER: usize = 128;

/// Positions of zero number `j * ZERO_SAMPLE`, `j = 0, 1, ...`.
#[derive(Debug, Clone, Default)]
pub(crate) enum ZeroSamples {
    /// 16-bit offsets from a 32-bit base every `SUPER` samples.
    Narrow { base: Vec<u32>, off: Vec<u16> },
    /// Not built yet (a sequence always has zero number 0 once built).
    #[default]
    Empty,
    /// Plain 32-bit positions, when an offset does not fit 16 bits.
    Wide(Vec<u32>),
}

impl ZeroSamples {
    /// Samples of the first `high_len` bits of `high`.
    pub(crate) fn build(high: &[u64], high_len: u64) -> Self {
        let pos = positions(high, high_len);
        let base: Vec<u32> = pos.iter().step_by(SUPER).copied().collect();
        let off: Option<Vec<u16>> = pos
            .iter()
            .enumerate()
            .map(|(j, &p)| u16::try_from(p - base[j / SUPER]).ok())
            .collect();
        match off {
            Some(mut off) if !pos.is_empty() => {
                off.shrink_to_fit();
                Self::Narrow { base, off }
            }
            Some(_) => Self::Empty,
            None => Self::Wide(pos),
        }
    }

    /// Position of zero number `j * ZERO_SAMPLE`; `j` must have a sample.
    #[inline]
    pub(crate) fn get(&self, j: usize) -> u64 {
        match self {
            Self::Narrow { base, off } => u64::from(base[j / SUPER]) + u64::from(off[j]),
            Self::Wide(pos) => u64::from(pos[j]),
            Self::Empty => 0,
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Self::Narrow { base, off } => base.capacity() * 4 + off.capacity() * 2,
            Self::Wide(pos) => pos.capacity() * 4,
            Self::Empty => 0,
        }
    }
}

/// Every sampled zero's bit position.
fn positions(high: &[u64], high_len: u64) -> Vec<u32> {
    let mut out = Vec::new();
    let mut zeros = 0u64;
    for (w, &word) in high.iter().enumerate() {
        let valid = (high_len.saturating_sub(w as u64 * 64)).min(64) as u32;
        let inv = !word & super::ef::low_mask(valid);
        let count = u64::from(inv.count_ones());
        // Record every zero whose number is a multiple of ZERO_SAMPLE.
        let mut next = zeros.div_ceil(ZERO_SAMPLE) * ZERO_SAMPLE;
        while next < zeros + count {
            let bit = super::ef::select_in_word(inv, (next - zeros) as u32);
            out.push((w as u64 * 64 + u64::from(bit)) as u32);
            next += ZERO_SAMPLE;
        }
        zeros += count;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_and_wide_agree_with_the_positions() {
        // Dense zeros (narrow) and a vector with a long run of ones (wide).
        let dense = vec![0xAAAA_AAAA_AAAA_AAAAu64; 2000];
        let mut skewed = vec![0u64; 600];
        skewed.extend(std::iter::repeat_n(u64::MAX, 3000));
        skewed.extend(vec![0u64; 600]);
        for (high, narrow) in [(dense, true), (skewed, false)] {
            let len = high.len() as u64 * 64;
            let pos = positions(&high, len);
            let s = ZeroSamples::build(&high, len);
            assert_eq!(matches!(s, ZeroSamples::Narrow { .. }), narrow);
            assert!(
                pos.iter()
                    .enumerate()
                    .all(|(j, &p)| s.get(j) == u64::from(p))
            );
        }
    }
}
