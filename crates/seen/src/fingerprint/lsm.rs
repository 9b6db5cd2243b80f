//! One generation of the fingerprint set: a mutable buffer plus
//! Elias–Fano runs, all fingerprints drawn from one universe `U`.
//!
//! ```text
//! buffer : FpBuffer (capacity / 1024 fingerprints, 64 to 16,384; sorted Vec when small)
//! runs   : [ run 0 (oldest, largest) ][ run 1 ] ... [ run k (newest) ]
//!          invariant: runs[i].len() >= RATIO * (runs[i+1].len() + ... + runs[k].len())
//! ```
//!
//! Every fingerprint lives in exactly one place (an insert first checks all
//! of them), so a merge is a disjoint union and its size is known up front.
//! The ratio invariant keeps at most `log_RATIO(n / buffer_cap) + 1` runs and
//! at most `1 / (RATIO + 1)` of the values outside run 0: splitting `n` values
//! into runs of fractions `p_i` costs `H(p)` extra bits per value over one run
//! (each run pays `log2(U / n_i)`), at most ~0.3 bits at `RATIO = 16`.
//! A value is rewritten about `RATIO / 2` times per level it passes through,
//! but a rewrite inside the big run is a bit-range copy (`ef/merge.rs`),
//! about 0.6 word copies per value; a decode and re-encode happens only once
//! per level, when a value's run is the smaller side of a merge. With those
//! copies `RATIO = 16` is no slower than 8 and 0.05 B/key smaller at 1M.
//!
//! Batches: `insert_batch` hands a batch's new fingerprints over together
//! (`push_batch`); when they overflow the buffer, buffer and batch freeze
//! into one run, so a 1,024-key batch costs at most one merge however small
//! the buffer (64 slots below 64K keys, where bytes per key leave no room
//! for more). One key at a time, a merge follows every `buffer_cap` keys.

use super::buffer::FpBuffer;
use super::ef::{EfBuilder, EliasFano, MAX_LEN};

/// Largest buffer, in fingerprints.
pub(crate) const MAX_BUFFER: usize = 16_384;

/// How much bigger each run is than all newer runs together.
pub(crate) const RATIO: usize = 16;

/// Fingerprints of one universe: a buffer and Elias–Fano runs.
#[derive(Debug)]
pub(crate) struct Generation {
    universe: u64,
    /// `max_preimage(universe)`, kept so `guarantee` costs no division.
    preimage: f64,
    capacity: usize,
    buffer_cap: usize,
    buffer: FpBuffer,
    runs: Vec<EliasFano>,
    len: usize,
}

impl Generation {
    /// An empty generation holding up to `capacity` fingerprints below `universe`.
    pub(crate) fn new(universe: u64, capacity: usize) -> Self {
        // ~1/1024 of the capacity: the buffer costs ~0.15 bit per value.
        let buffer_cap = (capacity / 1024).clamp(64, MAX_BUFFER);
        Self {
            universe,
            preimage: super::max_preimage(universe),
            capacity,
            buffer_cap,
            buffer: FpBuffer::with_cap(buffer_cap),
            runs: Vec::new(),
            len: 0,
        }
    }

    pub(crate) fn universe(&self) -> u64 {
        self.universe
    }

    /// Largest share of hashes that map to one fingerprint (see
    /// `max_preimage`).
    pub(crate) fn preimage(&self) -> f64 {
        self.preimage
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_full(&self) -> bool {
        self.len >= self.capacity
    }

    /// Maps a 64-bit hash to this generation's fingerprint, uniform in `0..U`.
    pub(crate) fn fingerprint(&self, hash: u64) -> u64 {
        ((u128::from(hash) * u128::from(self.universe)) >> 64) as u64
    }

    /// Makes the buffer hold at least `slots` (up to [`MAX_BUFFER`]); only
    /// while the buffer is empty (the layout may change with the size).
    pub(crate) fn raise_buffer(&mut self, slots: usize) {
        if self.buffer.len() == 0 && slots > self.buffer_cap {
            self.buffer_cap = slots.min(MAX_BUFFER);
            self.buffer = FpBuffer::with_cap(self.buffer_cap);
        }
    }

    /// Fingerprints this generation can still take before it is full.
    pub(crate) fn room(&self) -> usize {
        self.capacity.saturating_sub(self.len)
    }

    /// Largest run first: a present value is most likely there (ratio
    /// invariant), so a repeat usually costs one probe; the buffer last.
    pub(crate) fn contains(&self, fp: u64) -> bool {
        self.runs.iter().any(|r| r.contains(fp)) || self.buffer.contains(fp)
    }

    /// `found[i] |= contains(fps[i])`, with the runs' cache misses overlapped.
    pub(crate) fn contains_many(&self, fps: &[u64], found: &mut [bool]) {
        for run in &self.runs {
            run.contains_many(fps, found);
        }
        for (f, &fp) in found.iter_mut().zip(fps) {
            *f = *f || self.buffer.contains(fp);
        }
    }

    /// Whether `fp` is in the buffer (not yet in a run).
    pub(crate) fn buffer_contains(&self, fp: u64) -> bool {
        self.buffer.contains(fp)
    }

    /// Adds `fp`, which the caller checked is absent.
    pub(crate) fn push_new(&mut self, fp: u64) {
        self.buffer.insert(fp, self.buffer_cap);
        self.len += 1;
        if self.buffer.len() >= self.buffer_cap {
            self.flush();
        }
    }

    /// Adds the new fingerprints of one batch (absent from the generation
    /// and distinct; the caller checked, and the generation has room). When
    /// they do not fit the buffer, buffer and batch freeze together into one
    /// run (one merge per batch instead of one per `buffer_cap` keys); what
    /// stays buffered between calls is still below `buffer_cap`.
    pub(crate) fn push_batch(&mut self, fps: &mut [u64]) {
        self.len += fps.len();
        if self.buffer.len() + fps.len() < self.buffer_cap {
            fps.iter()
                .for_each(|&fp| self.buffer.insert(fp, self.buffer_cap));
            return;
        }
        fps.sort_unstable();
        let buffered = self.buffer.drain_sorted();
        self.freeze(merge_sorted(&buffered, fps));
    }

    /// Freezes the buffer into a run and restores the ratio invariant.
    pub(crate) fn flush(&mut self) {
        if self.buffer.len() > 0 {
            let fps = self.buffer.drain_sorted();
            self.freeze(fps);
        }
    }

    /// Makes the sorted `fps` a run, or merges them straight into the runs
    /// the ratio invariant says they join.
    fn freeze(&mut self, fps: Vec<u64>) {
        let from = self.merge_from(fps.len());
        let run = if from == self.runs.len() {
            let mut b = EfBuilder::new(fps.len(), self.universe);
            fps.iter().for_each(|&v| b.push(v));
            b.finish()
        } else {
            let tail = self.runs.split_off(from);
            merge(&tail, fps, self.universe)
        };
        self.runs.push(run);
        // A tiny set pays for every slot: keep no spare run headers (~100 B each).
        self.runs.shrink_to_fit();
    }

    /// The oldest run that must absorb everything newer (and `incoming`
    /// buffered values) for the ratio invariant to hold; `runs.len()` if none.
    fn merge_from(&self, incoming: usize) -> usize {
        let mut newer = incoming;
        let mut from = self.runs.len();
        for (i, run) in self.runs.iter().enumerate().rev() {
            let n = run.len();
            if n < RATIO * newer && n + newer <= MAX_LEN {
                from = i;
            }
            newer += n;
        }
        from
    }

    /// How many fingerprints are buffered (not in a run yet).
    pub(crate) fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// The runs, oldest first.
    pub(crate) fn runs(&self) -> &[EliasFano] {
        &self.runs
    }

    /// The buffered fingerprints (sorted) and the runs, oldest first.
    pub(crate) fn parts(&self) -> (Vec<u64>, &[EliasFano]) {
        (self.buffer.sorted(), &self.runs)
    }

    /// Refills this empty generation with `buffer` (strictly increasing,
    /// below the universe, fewer than the buffer's cap) and `runs`.
    /// `None` when they do not fit; the runs' own checks are the caller's.
    pub(crate) fn refill(&mut self, buffer: &[u64], runs: Vec<EliasFano>) -> Option<()> {
        let sorted = buffer.windows(2).all(|w| w[0] < w[1]);
        let below = buffer.last().is_none_or(|&v| v < self.universe);
        if !sorted || !below || buffer.len() >= self.buffer_cap || self.len > 0 {
            return None;
        }
        buffer
            .iter()
            .for_each(|&fp| self.buffer.insert(fp, self.buffer_cap));
        self.len = buffer.len() + runs.iter().map(EliasFano::len).sum::<usize>();
        self.runs = runs;
        Some(())
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        let buffer = self.buffer.heap_bytes();
        let runs: usize = self.runs.iter().map(EliasFano::heap_bytes).sum();
        buffer + runs + self.runs.capacity() * std::mem::size_of::<EliasFano>()
    }

    #[cfg(test)]
    pub(crate) fn run_lens(&self) -> Vec<usize> {
        self.runs.iter().map(EliasFano::len).collect()
    }
}

/// The sorted union of two disjoint sorted vectors.
fn merge_sorted(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Disjoint sorted union of `runs` and the sorted `fps` into one run.
/// `runs[0]` is the largest (ratio invariant): the rest are decoded and
/// sorted together with `fps` (they are small), then inserted into it
/// (`EliasFano::merged_with`).
fn merge(runs: &[EliasFano], mut fps: Vec<u64>, universe: u64) -> EliasFano {
    let Some((big, newer)) = runs.split_first() else {
        let mut b = EfBuilder::new(fps.len(), universe);
        fps.iter().for_each(|&v| b.push(v));
        return b.finish();
    };
    if !newer.is_empty() {
        fps.extend(newer.iter().flat_map(EliasFano::iter));
        fps.sort_unstable();
    }
    big.merged_with(&fps, universe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_keep_the_ratio_invariant_and_every_value() {
        let mut g = Generation::new(1 << 40, 1 << 20);
        let values: Vec<u64> = (1..=100_000u64)
            .map(|i| (i * 0x9E37_79B9) % (1 << 40))
            .collect();
        for &v in &values {
            assert!(!g.contains(v));
            g.push_new(v);
        }
        let lens = g.run_lens();
        for i in 0..lens.len() {
            let newer: usize = lens[i + 1..].iter().sum();
            assert!(lens[i] >= RATIO * newer, "{lens:?}");
        }
        assert!(values.iter().all(|&v| g.contains(v)));
        assert_eq!(g.len(), values.len());
    }
}
