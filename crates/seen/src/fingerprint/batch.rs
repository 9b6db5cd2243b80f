//! `insert_batch` for [`FingerprintSet`]: look the whole batch up first,
//! then insert in order, catching repeats within the batch.
//!
//! ```text
//! keys ─xxh3─▶ hashes ─Distinct─▶ distinct hashes, of[i] (index of key i's hash)
//!   distinct hashes ─per generation: fingerprint, contains_many─▶ known[u]
//!   for i in order: fresh = !known[of[i]] && fp not added earlier in this batch;
//!                   then known[of[i]] = true (a repeat of the hash is never new)
//!   the fresh fingerprints ─push_batch─▶ buffer, or one merge with it (`lsm`)
//! ```
//!
//! A key repeated within the batch (same 64-bit hash, so the same
//! fingerprint in every generation) is looked up once: on repeat-heavy link
//! lists (the PostgreSQL hrefs: ~63 % of a 1,024-key batch repeats a key of
//! the same batch) that skips most Elias–Fano probes for one probe of an
//! 8 KiB table per key. A batch that repeats under 1/8 of its keys turns
//! this off (it costs ~15 ns a key where nothing repeats, e.g. the
//! Wikipedia list) until one of every 16 batches finds repeats again.
//!
//! "Added earlier" is a small `FpTable` (see `buffer`) of the active
//! generation's fingerprints (2 u64 slots per key of the batch not found in
//! the set, at most ~16 KiB for 1,024 keys, freed after the batch) when no generation can open during the batch, which
//! is all but a handful of batches in a set's life. Otherwise (the active
//! generation may fill mid-batch) a `HashSet` of (generation, fingerprint)
//! pairs does the same for any number of generations. Either way the answers
//! equal those of `insert` one key at a time, false positives included.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use xxhash_rust::xxh3::xxh3_64;

use super::FingerprintSet;
use super::buffer::FpTable;

/// Fingerprints are already uniform, so the table uses them as hashes.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Largest batch answered by [`FingerprintSet::insert_small`].
pub(super) const SMALL: usize = 16;

impl FingerprintSet {
    pub(super) fn insert_hashes(&mut self, keys: &[&[u8]], out: &mut Vec<bool>) {
        let last = self.gens.len() - 1;
        if keys.len() <= SMALL && (self.saturated || self.gens[last].room() >= keys.len()) {
            return self.insert_small(keys, out);
        }
        let hashes = keys.iter().map(|k| xxh3_64(k));
        let probe = self.batches.is_multiple_of(DEDUP_PROBE_EVERY);
        let batch = if self.dedup_batches || probe {
            let batch = Distinct::of(hashes);
            // Worth it again only while batches repeat >= 1/8 of their keys.
            self.dedup_batches = batch.hashes.len() * 8 <= keys.len() * 7;
            batch
        } else {
            Distinct::each(hashes)
        };
        self.batches = self.batches.wrapping_add(1);
        let known = self.known(&batch.hashes);
        out.clear();
        let last = self.gens.len() - 1;
        if self.saturated || self.gens[last].room() >= keys.len() {
            self.insert_one_generation(&batch, known, out);
        } else {
            let old: Vec<bool> = batch.of.iter().map(|&u| known[u as usize]).collect();
            let hashes: Vec<u64> = batch.of.iter().map(|&u| batch.hashes[u as usize]).collect();
            self.insert_any_generation(&hashes, &old, out);
        }
    }

    /// A batch of at most [`SMALL`] keys that all land in the last
    /// generation (what each part of a `Parted` set gets from a frontier
    /// batch of 256 URLs over 64 parts): the same answers as
    /// `insert_one_generation`, with the batch's hashes, fingerprints and
    /// answers in arrays on the stack and repeats found by comparing
    /// fingerprints pairwise, instead of six heap buffers and two tables
    /// per call.
    fn insert_small(&mut self, keys: &[&[u8]], out: &mut Vec<bool>) {
        let n = keys.len();
        let mut hashes = [0u64; SMALL];
        let mut fps = [0u64; SMALL];
        let mut known = [false; SMALL];
        for (h, k) in hashes.iter_mut().zip(keys) {
            *h = xxh3_64(k);
        }
        for g in &self.gens {
            for (f, &h) in fps.iter_mut().zip(&hashes[..n]) {
                *f = g.fingerprint(h);
            }
            g.contains_many(&fps[..n], &mut known[..n]);
        }
        self.add_small(&hashes[..n], &known[..n], out);
    }

    /// Whether [`FingerprintSet::insert_small`] takes a batch of `n` keys.
    pub(super) fn takes_small(&self, n: usize) -> bool {
        let last = self.gens.len() - 1;
        n <= SMALL && (self.saturated || self.gens[last].room() >= n)
    }

    /// The second half of a small batch (see [`FingerprintSet::takes_small`]):
    /// `known[i]` says whether the key of `hashes[i]` is in the set. A key is
    /// new when the set lacks it and no new key before it in the batch had
    /// its fingerprint (equal keys have equal fingerprints).
    pub(super) fn add_small(&mut self, hashes: &[u64], known: &[bool], out: &mut Vec<bool>) {
        let gen_ = self.gens.last_mut().expect("a set always has a generation");
        let mut fresh = [0u64; SMALL];
        let mut added = 0;
        out.clear();
        for (&h, &was) in hashes.iter().zip(known) {
            let fp = gen_.fingerprint(h);
            let new = !was && !fresh[..added].contains(&fp);
            if new {
                fresh[added] = fp;
                added += 1;
            }
            out.push(new);
        }
        self.len += added;
        gen_.push_batch(&mut fresh[..added]);
    }

    /// `old[i]`: whether `hashes[i]` is in the set as it is now.
    fn known(&self, hashes: &[u64]) -> Vec<bool> {
        let mut old = vec![false; hashes.len()];
        let mut fps = vec![0; hashes.len()];
        for g in &self.gens {
            fps.iter_mut()
                .zip(hashes)
                .for_each(|(f, &h)| *f = g.fingerprint(h));
            g.contains_many(&fps, &mut old);
        }
        old
    }

    /// Every insert of the batch lands in the current last generation.
    /// `known[u]`: whether distinct hash `u` is in the set (updated as the
    /// batch's keys go in).
    fn insert_one_generation(
        &mut self,
        batch: &Distinct,
        mut known: Vec<bool>,
        out: &mut Vec<bool>,
    ) {
        // Sized for the keys that may be new, not the whole batch.
        let mut added = FpTable::with_slots(2 * known.iter().filter(|&&was| !was).count());
        let gen_ = self.gens.last_mut().expect("a set always has a generation");
        let mut fresh_fps = Vec::with_capacity(known.len());
        for &u in &batch.of {
            let u = u as usize;
            let fresh = !known[u] && added.insert(gen_.fingerprint(batch.hashes[u]));
            if fresh {
                fresh_fps.push(gen_.fingerprint(batch.hashes[u]));
            }
            known[u] = true;
            out.push(fresh);
        }
        self.len += fresh_fps.len();
        gen_.push_batch(&mut fresh_fps);
    }

    /// A generation may open mid-batch: track (generation, fingerprint).
    fn insert_any_generation(&mut self, hashes: &[u64], old: &[bool], out: &mut Vec<bool>) {
        let mut added: HashSet<(usize, u64), BuildHasherDefault<PassThrough>> = HashSet::default();
        for (&hash, &was) in hashes.iter().zip(old) {
            // Generations opened during the batch hold only keys in `added`.
            let fresh = !was
                && !(0..self.gens.len()).any(|i| {
                    let fp = self.gens[i].fingerprint(hash);
                    added.contains(&(i, fp))
                });
            if fresh {
                let gen_ = self.active();
                let fp = gen_.fingerprint(hash);
                gen_.push_new(fp);
                added.insert((self.gens.len() - 1, fp));
                self.len += 1;
            }
            out.push(fresh);
        }
    }
}

/// Batches without in-batch deduplication between two that try it again.
const DEDUP_PROBE_EVERY: u32 = 16;

/// The distinct hashes of a batch, in first-seen order, and for each key
/// the index of its hash among them (an open-addressing table of `u32`
/// indices, at most half full, freed after the batch).
struct Distinct {
    hashes: Vec<u64>,
    of: Vec<u32>,
}

impl Distinct {
    /// Every hash its own entry (no table): for batches that repeat little.
    /// Repeats are then caught by the `added` fingerprints, as before.
    fn each(all: impl ExactSizeIterator<Item = u64>) -> Self {
        let hashes: Vec<u64> = all.collect();
        let of = (0..hashes.len() as u32).collect();
        Self { hashes, of }
    }

    fn of(all: impl ExactSizeIterator<Item = u64>) -> Self {
        let size = (2 * all.len()).next_power_of_two().max(2);
        let (mask, shift) = (size - 1, 64 - size.trailing_zeros());
        let mut slots = vec![u32::MAX; size];
        let mut hashes = Vec::with_capacity(all.len());
        let of = all
            .map(|h| {
                // xxh3 output is uniform: its top bits index the table.
                let mut i = (h >> shift) as usize;
                loop {
                    match slots[i] {
                        u32::MAX => {
                            slots[i] = hashes.len() as u32;
                            hashes.push(h);
                            return slots[i];
                        }
                        u if hashes[u as usize] == h => return u,
                        _ => i = (i + 1) & mask,
                    }
                }
            })
            .collect();
        Self { hashes, of }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_maps_each_key_to_its_first_occurrence() {
        let all = [5u64, 0, u64::MAX, 5, 0, 7, u64::MAX, 5];
        let d = Distinct::of(all.iter().copied());
        assert_eq!(d.hashes, vec![5, 0, u64::MAX, 7]);
        assert_eq!(d.of, vec![0, 1, 2, 0, 1, 3, 2, 0]);
        let none = Distinct::of(std::iter::empty());
        assert!(none.hashes.is_empty() && none.of.is_empty());
    }
}
