//! Merging a few sorted values into an Elias–Fano run by copying bit ranges.
//!
//! ```text
//! big.low  : [ 0 .. r_0 ) v_0 [ r_0 .. r_1 ) v_1 ...      r_j = rank of v_j in big
//! big.high : [ 0 .. q_0 ) 1   [ q_0 .. q_1 ) 1   ...      q_j = (v_j >> l) + r_j
//! ```
//!
//! When the merged run keeps the big run's low-bit width `l` (most merges:
//! the width changes only when the length doubles), every big value keeps
//! its low bits and its high bit moves up by the number of new values before
//! it. So the output is the big run's two bit arrays with the new values'
//! bits inserted: one rank lookup per new value, then range copies of 64
//! bits at a time, instead of decoding and re-encoding every big value.
//! Cost: `k` rank lookups plus `(n + k)(l + 2) / 64` word copies, against
//! `n + k` decode and encode steps of the value-by-value merge (kept for a
//! width change).

use super::{
    EfBuilder, EliasFano, Shape, ZeroSamples, low_mask, read_bits, select_in_word, write_bits,
};

/// Ranks of increasing values in one pass over a run's high bits: the
/// cursor only moves forward, so `k` ranks cost one popcount per high word
/// plus one select in a word each, not `k` sampled selects.
struct Ranker<'a> {
    ef: &'a EliasFano,
    word: usize,
    /// Zeros in `high[..word]`.
    zeros_before: u64,
}

impl Ranker<'_> {
    /// Number of values of the run below `value`; values must not decrease
    /// from one call to the next.
    fn rank(&mut self, value: u64) -> u64 {
        let ef = self.ef;
        let bucket = value >> ef.low_bits;
        if ef.len == 0 || bucket >= ef.high_len - ef.len as u64 {
            return ef.len as u64;
        }
        let mut pos = if bucket == 0 {
            0
        } else {
            self.zero(bucket - 1) + 1
        };
        let want = value & low_mask(ef.low_bits);
        while ef.bit(pos) && ef.low(pos - bucket) < want {
            pos += 1;
        }
        pos - bucket
    }

    /// Bit position of zero number `k`, which must exist.
    fn zero(&mut self, k: u64) -> u64 {
        if *super::HW_SELECT {
            // SAFETY: `hw::available()` found popcnt and BMI2 on this CPU,
            // the only requirement of the `target_feature` function.
            let [word, before, pos] =
                unsafe { super::hw::zero_from(&self.ef.high, self.word, self.zeros_before, k) };
            (self.word, self.zeros_before) = (word as usize, before);
            return pos;
        }
        loop {
            let inv = !self.ef.high[self.word];
            let c = u64::from(inv.count_ones());
            if k < self.zeros_before + c {
                let bit = select_in_word(inv, (k - self.zeros_before) as u32);
                return self.word as u64 * 64 + u64::from(bit);
            }
            self.zeros_before += c;
            self.word += 1;
        }
    }
}

impl EliasFano {
    /// `self ∪ small`: `small` strictly increases, is disjoint from `self`
    /// and below `universe` (the universe `self` was built for).
    pub(crate) fn merged_with(&self, small: &[u64], universe: u64) -> EliasFano {
        let total = self.len + small.len();
        let shape = Shape::of(total, universe);
        if shape.low_bits != self.low_bits || self.len == 0 {
            return self.merged_by_value(small, total, universe);
        }
        let l = u64::from(self.low_bits);
        let mut low = vec![0u64; shape.low_words];
        let mut high = vec![0u64; shape.high_words];
        // Big values and big high bits already copied.
        let (mut done_i, mut done_p) = (0u64, 0u64);
        let mut ranks = Ranker {
            ef: self,
            word: 0,
            zeros_before: 0,
        };
        for (j, &v) in (0u64..).zip(small) {
            let r = ranks.rank(v);
            let q = (v >> l) + r;
            copy_bits(&self.low, done_i * l, r * l, &mut low, (done_i + j) * l);
            if l > 0 {
                write_bits(
                    &mut low,
                    (r + j) * l,
                    self.low_bits,
                    v & low_mask(self.low_bits),
                );
            }
            copy_bits(&self.high, done_p, q, &mut high, done_p + j);
            high[((q + j) / 64) as usize] |= 1 << ((q + j) % 64);
            (done_i, done_p) = (r, q);
        }
        let k = small.len() as u64;
        let n = self.len as u64;
        copy_bits(&self.low, done_i * l, n * l, &mut low, (done_i + k) * l);
        copy_bits(&self.high, done_p, self.high_len, &mut high, done_p + k);
        let mut ef = EliasFano {
            len: total,
            low_bits: self.low_bits,
            low,
            high,
            high_len: shape.high_len,
            zsamp: ZeroSamples::default(),
        };
        ef.build_samples();
        ef
    }

    /// The two-way merge decoding and re-encoding every value.
    fn merged_by_value(&self, small: &[u64], total: usize, universe: u64) -> EliasFano {
        let mut b = EfBuilder::new(total, universe);
        let mut old = self.iter();
        let mut next = old.next();
        for &v in small {
            while let Some(u) = next.filter(|&u| u < v) {
                b.push(u);
                next = old.next();
            }
            b.push(v);
        }
        if let Some(u) = next {
            b.push(u);
        }
        old.for_each(|u| b.push(u));
        b.finish()
    }
}

/// ORs bits `from..to` of `src` into `dst` starting at bit `at` (`dst`'s
/// bits there are zero): a partial first word, then whole destination
/// words, each one shifted read of two source words.
fn copy_bits(src: &[u64], mut from: u64, to: u64, dst: &mut [u64], mut at: u64) {
    let head = ((64 - at % 64) % 64).min(to.saturating_sub(from));
    if head > 0 {
        write_bits(dst, at, head as u32, read_bits(src, from, head as u32));
        from += head;
        at += head;
    }
    if from >= to {
        return;
    }
    let whole = ((to - from) / 64) as usize;
    let (s, off) = ((from / 64) as usize, (from % 64) as u32);
    let out = &mut dst[(at / 64) as usize..][..whole];
    if off == 0 {
        out.copy_from_slice(&src[s..s + whole]);
    } else {
        // Reading 64 bits from an unaligned offset touches the next word.
        for (o, pair) in out.iter_mut().zip(src[s..].windows(2)) {
            *o = (pair[0] >> off) | (pair[1] << (64 - off));
        }
    }
    let rest = ((to - from) % 64) as u32;
    if rest > 0 {
        let done = whole as u64 * 64;
        write_bits(dst, at + done, rest, read_bits(src, from + done, rest));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::build;
    use super::*;

    /// Splits pseudo-random values into a big and a small part, merges.
    fn check(n: usize, every: usize, universe: u64, seed: u64) {
        let mut x = seed | 1;
        let mut all: Vec<u64> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % universe
            })
            .collect();
        all.sort_unstable();
        all.dedup();
        let pick = |keep: bool| -> Vec<u64> {
            let chosen = all
                .iter()
                .enumerate()
                .filter(|(i, _)| (i % every == 0) == keep);
            chosen.map(|(_, &v)| v).collect()
        };
        let (small, big) = (pick(true), pick(false));
        let run = build(&big, universe);
        let merged = run.merged_with(&small, universe);
        assert_eq!(merged.iter().collect::<Vec<_>>(), all);
        let want = build(&all, universe);
        assert_eq!(merged.words(), want.words());
        assert!(all.iter().all(|&v| merged.contains(v)));
        let mut ranks = Ranker {
            ef: &want,
            word: 0,
            zeros_before: 0,
        };
        for (i, &v) in all.iter().enumerate() {
            assert_eq!(ranks.rank(v), i as u64);
            assert_eq!(ranks.rank(v), i as u64, "same value twice");
        }
    }

    #[test]
    fn bit_copy_merge_equals_a_fresh_build() {
        for (n, every, universe, seed) in [
            (10_000, 9, 1 << 40, 1),
            (5_000, 2, 1 << 20, 2),
            (3_000, 50, 1 << 13, 3),
            (700, 700, u64::MAX, 4),
            (64, 1, 1 << 30, 5),
            (1, 1, 10, 6),
            (2_000, 3, 2_500, 7),
        ] {
            check(n, every, universe, seed);
        }
    }

    #[test]
    fn copy_bits_matches_a_bit_by_bit_copy() {
        let src: Vec<u64> = (1..=8u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let get = |w: &[u64], i: u64| w[(i / 64) as usize] >> (i % 64) & 1;
        for (from, to, at) in [
            (0, 512, 0),
            (3, 500, 70),
            (64, 128, 1),
            (5, 5, 9),
            (17, 300, 128),
        ] {
            let mut dst = vec![0u64; 10];
            copy_bits(&src, from, to, &mut dst, at);
            for i in 0..640u64 {
                let want = if (at..at + to - from).contains(&i) {
                    get(&src, from + i - at)
                } else {
                    0
                };
                assert_eq!(get(&dst, i), want, "{from} {to} {at} bit {i}");
            }
        }
    }

    #[test]
    fn merging_nothing_or_into_nothing() {
        let run = build(&[3, 9, 200], 1000);
        assert_eq!(run.merged_with(&[], 1000).words(), run.words());
        let empty = build(&[], 1000);
        let got = empty.merged_with(&[1, 5], 1000);
        assert_eq!(got.iter().collect::<Vec<_>>(), vec![1, 5]);
    }
}
