//! Select samples of an Elias–Fano high bit-vector: the bit position of
//! every `2^shift`-th zero (`shift` = 6 or 7), so `select0` scans ~1–2 words.
//!
//! ```text
//! Narrow:  base[s] : u32 position of sample s * SUPER            (1 per SUPER samples)
//!          off[j]  : u16 position of sample j − base[j / SUPER]
//! Wide  :  pos[j]  : u32                                          (fallback)
//! ```
//!
//! With hashed values a high vector has at most one one per zero, so SUPER
//! samples span at most `2 · SUPER · 128` = 32 Ki bits and the offsets
//! fit in 16 bits: 16 bits per 128 zeros ≈ 0.13 bits per value, the space
//! of 32-bit samples every 256 zeros with half the scan. Runs of at most
//! [`DENSE_MAX`] values (cache-resident, where select's word walk is the
//! cost, not misses) sample every 64 zeros: ~0.25 bits per value, +0.016
//! B/key, for fewer words walked and fewer mispredicted loop exits. A vector
//! whose offsets do not fit (skewed values, e.g. a crafted snapshot) keeps
//! 32-bit positions instead, so every input stays correct.

/// Runs of at most this many values sample every 64 zeros, bigger ones every 128.
pub(crate) const DENSE_MAX: usize = 1 << 16;

/// Samples per 32-bit base.
const SUPER: usize = 128;

/// Positions of zero number `j << shift`, `j = 0, 1, ...`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ZeroSamples {
    shift: u32,
    pos: Positions,
}

#[derive(Debug, Clone, Default)]
enum Positions {
    /// 16-bit offsets from a 32-bit base every `SUPER` samples.
    Narrow { base: Vec<u32>, off: Vec<u16> },
    /// Not built yet (a sequence always has zero number 0 once built).
    #[default]
    Empty,
    /// Plain 32-bit positions, when an offset does not fit 16 bits.
    Wide(Vec<u32>),
}

impl ZeroSamples {
    /// Samples of the first `high_len` bits of `high`, one every
    /// `2^shift` zeros (`shift` <= 7 keeps narrow offsets in 16 bits).
    pub(crate) fn build(high: &[u64], high_len: u64, shift: u32) -> Self {
        debug_assert!(shift <= 7);
        let pos = positions(high, high_len, 1 << shift);
        let base: Vec<u32> = pos.iter().step_by(SUPER).copied().collect();
        let off: Option<Vec<u16>> = pos
            .iter()
            .enumerate()
            .map(|(j, &p)| u16::try_from(p - base[j / SUPER]).ok())
            .collect();
        let pos = match off {
            Some(mut off) if !pos.is_empty() => {
                off.shrink_to_fit();
                Positions::Narrow { base, off }
            }
            Some(_) => Positions::Empty,
            None => Positions::Wide(pos),
        };
        Self { shift, pos }
    }

    /// The sampled zero at or before zero number `k`: its bit position and
    /// how many zeros after it zero `k` is. Zero `k` must exist.
    #[inline]
    pub(crate) fn locate(&self, k: u64) -> (u64, u64) {
        let j = (k >> self.shift) as usize;
        let start = match &self.pos {
            Positions::Narrow { base, off } => u64::from(base[j / SUPER]) + u64::from(off[j]),
            Positions::Wide(pos) => u64::from(pos[j]),
            Positions::Empty => 0,
        };
        (start, k & ((1 << self.shift) - 1))
    }

    /// Prefetches what [`ZeroSamples::locate`] reads for zero number `k`.
    #[inline]
    pub(crate) fn prefetch(&self, k: u64) {
        let j = (k >> self.shift) as usize;
        match &self.pos {
            Positions::Narrow { base, off } => {
                super::ef::probes::prefetch(base, j / SUPER);
                super::ef::probes::prefetch(off, j);
            }
            Positions::Wide(pos) => super::ef::probes::prefetch(pos, j),
            Positions::Empty => {}
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        match &self.pos {
            Positions::Narrow { base, off } => base.capacity() * 4 + off.capacity() * 2,
            Positions::Wide(pos) => pos.capacity() * 4,
            Positions::Empty => 0,
        }
    }
}

/// Every `every`-th zero's bit position.
fn positions(high: &[u64], high_len: u64, every: u64) -> Vec<u32> {
    let mut out = Vec::new();
    let mut zeros = 0u64;
    for (w, &word) in high.iter().enumerate() {
        let valid = (high_len.saturating_sub(w as u64 * 64)).min(64) as u32;
        let inv = !word & super::ef::low_mask(valid);
        let count = u64::from(inv.count_ones());
        // Record every zero whose number is a multiple of `every`.
        let mut next = zeros.div_ceil(every) * every;
        while next < zeros + count {
            let bit = super::ef::select_in_word(inv, (next - zeros) as u32);
            out.push((w as u64 * 64 + u64::from(bit)) as u32);
            next += every;
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
            for shift in [6, 7] {
                let len = high.len() as u64 * 64;
                let pos = positions(&high, len, 1 << shift);
                let s = ZeroSamples::build(&high, len, shift);
                assert_eq!(matches!(s.pos, Positions::Narrow { .. }), narrow);
                assert!(pos.iter().enumerate().all(|(j, &p)| {
                    let k = (j as u64) << shift;
                    s.locate(k) == (u64::from(p), 0) && s.locate(k + 1).0 == u64::from(p)
                }));
            }
        }
    }
}
