//! Elias–Fano coding of a strictly increasing sequence of `u64` below a universe `U`.
//!
//! ```text
//! value x_i (i = 0..n)  =  [ high: x_i >> l ][ low: l bits ]      l = floor(log2(U / n))
//!
//! low   : n * l bits, packed little-endian in u64 words      | x_0.low | x_1.low | ...
//! high  : bit (x_i >> l) + i is set; n ones and (U-1 >> l)+1 zeros
//!         e.g. highs 0,0,2,3  ->  1 1 0 0 1 0 1 0 ...  (the k-th zero closes bucket k)
//! zsamp : position of zero number j * 2^shift (64 or 128), for select0 (`samples`)
//! ```
//!
//! Invariants: values strictly increase and are `< universe`; the high
//! bit-vector has exactly `n` ones; `zsamp[j]` is the bit position of zero
//! number `j << shift`; bit positions fit in `u32` (n < 2^30, checked
//! by the caller through [`MAX_LEN`]).
//!
//! Space: `n * l + n + (U >> l) + 1` bits, i.e. `2 + log2(U / n)` bits per
//! value when `U / n` is a power of two (between that and 2.09 bits more
//! otherwise), plus ~`16 / 2^shift` bits per zero for the select samples.
//!
//! Cost: `contains` = one sample read, a popcount scan of ~`2^shift / 64`
//! words, then about `1 + n / (U >> l)` (≈ 2) low-bit comparisons.
//! Building and iterating are sequential, a few ns per value.

mod hw;
mod merge;
pub(crate) mod probes;

use super::samples::{DENSE_MAX, ZeroSamples};

/// Whether `select0` may use the `popcnt`/BMI2 variant (see `hw`).
static HW_SELECT: std::sync::LazyLock<bool> = std::sync::LazyLock::new(hw::available);

/// Runs smaller than this are looked up one value at a time (cache-resident).
const STAGED_MIN_BYTES: usize = 256 << 10;

/// Most values one sequence may hold (bit positions stay below 2^32).
pub(crate) const MAX_LEN: usize = 1 << 30;

/// An immutable Elias–Fano coded sorted set of `u64`.
#[derive(Debug, Clone)]
pub(crate) struct EliasFano {
    len: usize,
    low_bits: u32,
    low: Vec<u64>,
    high: Vec<u64>,
    high_len: u64,
    zsamp: ZeroSamples,
}

/// Appends values in increasing order; [`EfBuilder::finish`] seals them.
pub(crate) struct EfBuilder {
    ef: EliasFano,
    pushed: usize,
    last: Option<u64>,
    universe: u64,
}

fn low_bits_for(len: usize, universe: u64) -> u32 {
    let ratio = universe / (len.max(1) as u64);
    if ratio <= 1 {
        0
    } else {
        63 - ratio.leading_zeros()
    }
}

/// Sizes of the sequence of `len` values below a universe.
pub(crate) struct Shape {
    low_bits: u32,
    high_len: u64,
    /// `u64` words of packed low bits.
    pub(crate) low_words: usize,
    /// `u64` words of high bits.
    pub(crate) high_words: usize,
}

impl Shape {
    pub(crate) fn of(len: usize, universe: u64) -> Self {
        let low_bits = low_bits_for(len, universe);
        let high_len = len as u64 + ((universe.max(1) - 1) >> low_bits) + 1;
        Self {
            low_bits,
            high_len,
            low_words: (len as u64 * u64::from(low_bits)).div_ceil(64) as usize,
            high_words: high_len.div_ceil(64) as usize,
        }
    }
}

impl EfBuilder {
    /// A builder for exactly `len` values, each `< universe`.
    pub(crate) fn new(len: usize, universe: u64) -> Self {
        debug_assert!(len <= MAX_LEN);
        let shape = Shape::of(len, universe);
        let ef = EliasFano {
            len,
            low_bits: shape.low_bits,
            low: vec![0; shape.low_words],
            high: vec![0; shape.high_words],
            high_len: shape.high_len,
            zsamp: ZeroSamples::default(),
        };
        Self {
            ef,
            pushed: 0,
            last: None,
            universe,
        }
    }

    /// Appends `value`; values must strictly increase and stay below the universe.
    pub(crate) fn push(&mut self, value: u64) {
        debug_assert!(self.last.is_none_or(|last| last < value));
        debug_assert!(value < self.universe.max(1) && self.pushed < self.ef.len);
        let i = self.pushed as u64;
        let l = self.ef.low_bits;
        if l > 0 {
            write_bits(&mut self.ef.low, i * u64::from(l), l, value & low_mask(l));
        }
        let pos = (value >> l) + i;
        self.ef.high[(pos / 64) as usize] |= 1 << (pos % 64);
        self.pushed += 1;
        self.last = Some(value);
    }

    /// Seals the sequence and builds the select samples.
    pub(crate) fn finish(mut self) -> EliasFano {
        debug_assert_eq!(self.pushed, self.ef.len);
        self.ef.build_samples();
        self.ef
    }
}

pub(crate) fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn write_bits(words: &mut [u64], at: u64, bits: u32, value: u64) {
    let (w, off) = ((at / 64) as usize, (at % 64) as u32);
    words[w] |= value << off;
    if off + bits > 64 {
        words[w + 1] |= value >> (64 - off);
    }
}

fn read_bits(words: &[u64], at: u64, bits: u32) -> u64 {
    let (w, off) = ((at / 64) as usize, (at % 64) as u32);
    let mut v = words[w] >> off;
    if off + bits > 64 {
        v |= words[w + 1] << (64 - off);
    }
    v & low_mask(bits)
}

/// `SELECT_IN_BYTE[b][r]`: position of the `r`-th set bit of byte `b`.
const SELECT_IN_BYTE: [[u8; 8]; 256] = select_in_byte_table();

const fn select_in_byte_table() -> [[u8; 8]; 256] {
    let mut t = [[8u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut r, mut i) = (0, 0);
        while i < 8 {
            if (b >> i) & 1 == 1 {
                t[b][r] = i as u8;
                r += 1;
            }
            i += 1;
        }
        b += 1;
    }
    t
}

const ONES_PER_BYTE: u64 = 0x0101_0101_0101_0101;
const HIGH_PER_BYTE: u64 = 0x8080_8080_8080_8080;

/// Byte `i` of the result: ones in bytes `0..=i` of `word` (the top byte is
/// the popcount). The build targets plain x86-64, where `count_ones` is a
/// software popcount too, so `select0` computes this once per word.
fn byte_prefix(word: u64) -> u64 {
    let mut s = word - ((word >> 1) & 0x5555_5555_5555_5555);
    s = (s & 0x3333_3333_3333_3333) + ((s >> 2) & 0x3333_3333_3333_3333);
    s = (s + (s >> 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    // At most 64 per byte: no carries between bytes.
    s.wrapping_mul(ONES_PER_BYTE)
}

/// Position of the `r`-th set bit (0-based) of `word`; `r < word.count_ones()`.
pub(crate) fn select_in_word(word: u64, r: u32) -> u32 {
    select_with_prefix(word, byte_prefix(word), r)
}

/// [`select_in_word`] given `prefix = byte_prefix(word)`. Branch-free: the
/// target byte by comparing every prefix with `r` at once, then a table.
fn select_with_prefix(word: u64, prefix: u64, r: u32) -> u32 {
    // High bit of byte i set iff prefix_i <= r (0x80 + r - prefix_i never borrows).
    let le = (((u64::from(r) * ONES_PER_BYTE) | HIGH_PER_BYTE) - prefix) & HIGH_PER_BYTE;
    // Count those bits by one multiply (at most 8: fits the top byte).
    let byte = ((le >> 7).wrapping_mul(ONES_PER_BYTE) >> 56) as u32;
    let before = if byte == 0 {
        0
    } else {
        (prefix >> (8 * (byte - 1))) & 0xFF
    };
    let bits = ((word >> (8 * byte)) & 0xFF) as usize;
    byte * 8 + u32::from(SELECT_IN_BYTE[bits][(u64::from(r) - before) as usize])
}

impl EliasFano {
    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Heap bytes owned.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.low.capacity() * 8 + self.high.capacity() * 8 + self.zsamp.heap_bytes()
    }

    /// The packed low-bits and high-bits words, for snapshots.
    pub(crate) fn words(&self) -> (&[u64], &[u64]) {
        (&self.low, &self.high)
    }

    /// Rebuilds a sequence of `len` values below `universe` from its packed
    /// words (see [`EliasFano::words`]). `None` unless the words have the
    /// sizes `EfBuilder` gives, the high bits hold exactly `len` ones inside
    /// `high_len`, and the values strictly increase below `universe`:
    /// whatever the words, later lookups, merges and iteration cannot panic.
    pub(crate) fn from_words(
        len: usize,
        universe: u64,
        low: Vec<u64>,
        high: Vec<u64>,
    ) -> Option<Self> {
        if len > MAX_LEN {
            return None;
        }
        let shape = Shape::of(len, universe);
        if low.len() != shape.low_words || high.len() != shape.high_words {
            return None;
        }
        let tail = shape.high_len % 64;
        let last_ok = tail == 0 || high.last().is_none_or(|&w| w >> tail == 0);
        let ones: u64 = high.iter().map(|w| u64::from(w.count_ones())).sum();
        if !last_ok || ones != len as u64 {
            return None;
        }
        let mut ef = Self {
            len,
            low_bits: shape.low_bits,
            low,
            high,
            high_len: shape.high_len,
            zsamp: ZeroSamples::default(),
        };
        let mut last: Option<u64> = None;
        for v in ef.iter() {
            if v >= universe || last.is_some_and(|p| p >= v) {
                return None;
            }
            last = Some(v);
        }
        ef.build_samples();
        Some(ef)
    }

    fn build_samples(&mut self) {
        let shift = if self.len <= DENSE_MAX { 6 } else { 7 };
        self.zsamp = ZeroSamples::build(&self.high, self.high_len, shift);
    }

    /// Bit position of zero number `k` (0-based) in `high`.
    fn select0(&self, k: u64) -> u64 {
        if *HW_SELECT {
            // SAFETY: `hw::available()` found popcnt and BMI2 on this CPU,
            // the only requirement of the `target_feature` function.
            return unsafe { hw::select0(self, k) };
        }
        self.select0_soft(k)
    }

    /// [`EliasFano::select0`] in baseline x86-64 instructions.
    fn select0_soft(&self, k: u64) -> u64 {
        let (start, mut rest) = self.zsamp.locate(k);
        let mut w = (start / 64) as usize;
        let mut inv = !self.high[w] & (u64::MAX << (start % 64));
        loop {
            let prefix = byte_prefix(inv);
            let c = prefix >> 56;
            if rest < c {
                let bit = select_with_prefix(inv, prefix, rest as u32);
                return w as u64 * 64 + u64::from(bit);
            }
            rest -= c;
            w += 1;
            inv = !self.high[w];
        }
    }

    fn low(&self, i: u64) -> u64 {
        let l = self.low_bits;
        if l == 0 {
            0
        } else {
            read_bits(&self.low, i * u64::from(l), l)
        }
    }

    fn bit(&self, pos: u64) -> bool {
        pos < self.high_len && self.high[(pos / 64) as usize] >> (pos % 64) & 1 == 1
    }

    /// Whether `value` is in the sequence.
    pub(crate) fn contains(&self, value: u64) -> bool {
        if *HW_SELECT {
            // SAFETY: `hw::available()` found popcnt and BMI2 on this CPU,
            // the only requirement of the `target_feature` function.
            return unsafe { hw::contains(self, value) };
        }
        self.bucket(value)
            .is_some_and(|b| self.scan(self.bucket_start(b), b, value))
    }

    /// The high-bits bucket of `value`, if the sequence can hold it.
    #[inline]
    fn bucket(&self, value: u64) -> Option<u64> {
        let bucket = value >> self.low_bits;
        let zeros = self.high_len - self.len as u64;
        (self.len > 0 && bucket < zeros).then_some(bucket)
    }

    /// Bit position in `high` where `bucket`'s ones start.
    fn bucket_start(&self, bucket: u64) -> u64 {
        if bucket == 0 {
            0
        } else {
            self.select0(bucket - 1) + 1
        }
    }

    /// Sample entry and high word `bucket_start(bucket)` will read first.
    fn sample_of(&self, bucket: u64) -> u64 {
        let k = bucket.saturating_sub(1);
        self.zsamp.locate(k).0
    }

    /// Looks up many values at once: `found[i] |= contains(values[i])`.
    ///
    /// Staged so the cache misses of different values overlap: first every
    /// select sample is prefetched, then every first high word, then each
    /// bucket start is selected and its low-bits word prefetched, then the
    /// scans run (`probes`).
    /// Big runs cost ~3 misses a value; in one pass they are paid in parallel.
    /// Values already found are skipped. Runs small enough to stay in cache
    /// gain nothing from staging and take the plain loop.
    pub(crate) fn contains_many(&self, values: &[u64], found: &mut [bool]) {
        if self.heap_bytes() < STAGED_MIN_BYTES {
            if *HW_SELECT {
                // SAFETY: `hw::available()` found popcnt and BMI2 on this CPU,
                // the only requirement of the `target_feature` function.
                unsafe { hw::contains_each(self, values, found) };
                return;
            }
            for (f, &v) in found.iter_mut().zip(values) {
                *f = *f || self.contains(v);
            }
            return;
        }
        self.contains_staged(values, found);
    }

    /// The staged form of [`EliasFano::contains_many`], for any size: the
    /// many-sequence staged lookup (`probes`) over this one.
    fn contains_staged(&self, values: &[u64], found: &mut [bool]) {
        let probes: Vec<probes::Probe<'_>> = (values.iter().enumerate())
            .map(|(at, &value)| probes::Probe {
                ef: self,
                value,
                at,
            })
            .collect();
        probes::contains_probes(&probes, found);
    }

    /// Whether `value` (in `bucket`, whose ones start at `pos`) is stored.
    /// The bucket's values are the run of ones from `pos`, read a word at a
    /// time (bits past `high_len` are zero).
    #[inline]
    fn scan(&self, mut pos: u64, bucket: u64, value: u64) -> bool {
        let want = value & low_mask(self.low_bits);
        let mut i = pos - bucket;
        while let Some(&word) = self.high.get((pos / 64) as usize) {
            let room = 64 - pos % 64;
            let ones = u64::from((!(word >> (pos % 64))).trailing_zeros()).min(room);
            for _ in 0..ones {
                let got = self.low(i);
                if got >= want {
                    return got == want;
                }
                i += 1;
            }
            if ones < room {
                return false;
            }
            pos += ones;
        }
        false
    }

    /// The values in increasing order.
    pub(crate) fn iter(&self) -> EfIter<'_> {
        EfIter {
            ef: self,
            word: 0,
            cur: self.high.first().copied().unwrap_or(0),
            i: 0,
        }
    }
}

/// Sequential decoder over an [`EliasFano`].
pub(crate) struct EfIter<'a> {
    ef: &'a EliasFano,
    word: usize,
    cur: u64,
    i: u64,
}

impl Iterator for EfIter<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.i >= self.ef.len as u64 {
            return None;
        }
        while self.cur == 0 {
            self.word += 1;
            self.cur = self.ef.high[self.word];
        }
        let pos = self.word as u64 * 64 + u64::from(self.cur.trailing_zeros());
        self.cur &= self.cur - 1;
        let high = pos - self.i;
        let value = (high << self.ef.low_bits) | self.ef.low(self.i);
        self.i += 1;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let rest = self.ef.len - self.i as usize;
        (rest, Some(rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of `values` (sorted, below `universe`); shared with `merge`'s tests.
    pub(super) fn build(values: &[u64], universe: u64) -> EliasFano {
        let mut b = EfBuilder::new(values.len(), universe);
        values.iter().for_each(|&v| b.push(v));
        b.finish()
    }

    fn check(values: &[u64], universe: u64) {
        let ef = build(values, universe);
        assert_eq!(ef.iter().collect::<Vec<_>>(), values);
        let probes: Vec<u64> = values
            .iter()
            .flat_map(|&v| [v, v.saturating_sub(1), v.saturating_add(1)])
            .chain([0, universe.saturating_sub(1), u64::MAX])
            .collect();
        let one: Vec<bool> = probes.iter().map(|&p| ef.contains(p)).collect();
        let mut many = vec![false; probes.len()];
        ef.contains_many(&probes, &mut many);
        assert_eq!(many, one);
        // Some already found: they stay found, the rest are answered.
        let mut staged: Vec<bool> = (0..probes.len()).map(|i| i % 3 == 1).collect();
        ef.contains_staged(&probes, &mut staged);
        let want: Vec<bool> = one
            .iter()
            .enumerate()
            .map(|(i, &o)| o || i % 3 == 1)
            .collect();
        assert_eq!(staged, want);
        for &v in values {
            assert!(ef.contains(v), "missing {v}");
            if v > 0 && values.binary_search(&(v - 1)).is_err() {
                assert!(!ef.contains(v - 1));
            }
            if v + 1 < universe && values.binary_search(&(v + 1)).is_err() {
                assert!(!ef.contains(v + 1));
            }
        }
    }

    #[test]
    fn select_in_word_matches_a_naive_scan() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let random = (0..200).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        });
        let fixed = [1u64, u64::MAX, 0x8000_0000_0000_0001, 0xF0F0_0000_1234_5678];
        for word in fixed.into_iter().chain(random) {
            let ones: Vec<u32> = (0..64).filter(|b| word >> b & 1 == 1).collect();
            for (r, &pos) in ones.iter().enumerate() {
                assert_eq!(select_in_word(word, r as u32), pos, "{word:x} {r}");
            }
        }
    }

    #[test]
    fn empty_and_tiny() {
        check(&[], 10);
        check(&[0], 1);
        check(&[5], 10);
        check(&[0, 1, 2, 3], 4);
        assert!(!build(&[], 10).contains(3));
    }

    #[test]
    fn dense_sparse_and_extremes() {
        let dense: Vec<u64> = (0..5000).map(|i| i * 3).collect();
        check(&dense, 15_000);
        let sparse: Vec<u64> = (0..3000u64).map(|i| i * (u64::MAX / 3001)).collect();
        check(&sparse, u64::MAX);
        check(&[0, u64::MAX - 1], u64::MAX);
    }

    #[test]
    fn random_values_round_trip_and_absent_values_miss() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut values: Vec<u64> = (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x >> 20
            })
            .collect();
        values.sort_unstable();
        values.dedup();
        check(&values, 1 << 44);
        let ef = build(&values, 1 << 44);
        let misses = (0..20_000u64)
            .map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 20)
            .filter(|v| values.binary_search(v).is_err())
            .filter(|&v| ef.contains(v))
            .count();
        assert_eq!(misses, 0);
    }

    #[test]
    fn space_is_two_plus_log_ratio_bits() {
        let values: Vec<u64> = (0..1u64 << 16).map(|i| i << 20).collect();
        let ef = build(&values, 1 << 36);
        let bits = (ef.low.len() + ef.high.len()) as f64 * 64.0 / values.len() as f64;
        assert!((bits - 22.0).abs() < 0.01, "{bits} bits per value");
    }
}
