//! `fingerprint`: a quasi-exact set storing about `log2(1/ε) + 2` bits per key.
//!
//! Each key is hashed once (xxh3, 64 bits) and mapped to a fingerprint
//! `fp = ⌊hash · U / 2^64⌋`, uniform in `0..U`. Only fingerprints are kept,
//! sorted and Elias–Fano coded (`ef`) in an LSM of runs (`lsm`):
//!
//! ```text
//! FingerprintSet
//! ├─ generation 0: U_0 = ⌈C / ε_0⌉, holds <= C fingerprints
//! │    buffer (<= C/1024; sorted Vec<u64> up to 512) ─flush─▶ runs [EF 0 ≥16×rest][EF 1]…
//! ├─ generation 1: U_1 = ⌈4C / ε_1⌉, holds <= 4C   (only once gen 0 is full)
//! └─ …            ε_g = ε · (1 − 1/32) · 32^−g,  Σ_g ε_g < ε
//! ```
//!
//! # The bound
//! For a key never inserted, its hash is independent of the stored ones
//! (modelling xxh3 as a random function), so its fingerprint in generation
//! `g` equals a given stored value with probability at most `D_g / 2^64`,
//! where `D_g = ⌈2^64 / U_g⌉` is the most hashes one fingerprint receives.
//! `U_g` is chosen as `⌈2^64 / ⌊ε_g 2^64 / C_g⌋⌉`, so `C_g D_g / 2^64 <= ε_g`.
//! By the union bound over the `n_g <= C_g` stored values and over the
//! generations, `P(false positive) <= Σ_g ε_g = ε (1 − 1/32) Σ_g 32^−g < ε`.
//! 64-bit hash collisions are included: they are one way to collide.
//! A false positive also makes `insert` return `false` for a new key, and such
//! a key is not counted by `len()`.
//! 64-bit hashes limit generation 0 to `C <= ε 2^63` keys (2^27 at 2^-36);
//! [`FingerprintSet::new`] refuses more, and once no further generation fits,
//! the last one overfills and [`SeenSet::guarantee`] reports the weaker bound.
//!
//! # Space
//! With `n = C` keys in one run: `2 + log2(U/n) = 2 + log2(1/ε) + 0.046` bits
//! (the 1/32 reserved for growth), plus the universe rounding of
//! `generation()` (<= 0.05 bits at 10M keys), the run split entropy (<= 0.3
//! bits, see `lsm`), select samples (~0.13 bits; ~0.25 in runs of <= 64K
//! values) and the buffer (~0.15 bits). At ε = 2^-36 that is about
//! 38.3–38.9 bits ≈ 4.79–4.86 bytes per key;
//! fewer keys than `C` cost `log2(C/n)` more bits each (the universe was
//! sized for `C`).
//!
//! # Cost
//! `insert` and `contains`: one hash, one buffer probe, one Elias–Fano
//! lookup per run (<= log16(C/buffer) + 1 runs, three dependent cache misses
//! each for big runs; select uses popcnt/BMI2 when the CPU has them, see
//! `ef/hw.rs`); inserts also pay merging: a run is rewritten whenever the
//! newer runs reach 1/16 of it, as bit-range copies (`ef/merge.rs`, ~0.6
//! word copies per value) plus one decode and rank per value of the smaller
//! side. `insert_batch` looks each distinct hash of a batch up once (repeats
//! inside a batch skip the runs, see `batch`) and checks the batch against the runs in stages so
//! the big runs' cache misses overlap (`EliasFano::contains_many`), then
//! hands the batch's new fingerprints to the generation together: at most
//! one merge per batch (`Generation::push_batch`). A `Parted` set of these
//! (the frontier's) looks a batch up in all its parts at once (`staged`):
//! each part gets only a few keys of a batch, too few to overlap misses.

mod batch;
mod buffer;
mod ef;
mod lsm;
mod samples;
mod snapshot;
pub(crate) mod staged;

use xxhash_rust::xxh3::xxh3_64;

use crate::{Guarantee, SeenError, SeenSet};
use lsm::Generation;

/// Default false-positive rate per lookup: 2^-36.
pub const DEFAULT_EPSILON: f64 = 1.0 / (1u64 << 36) as f64;

/// Share of ε kept for generations after the first: gen g gets ε(1−r)r^g.
const GROWTH_SHARE: f64 = 1.0 / 32.0;
/// Capacity multiplier of each further generation.
const GROWTH_FACTOR: usize = 4;

/// Quasi-exact set: no false negatives, false positives at most ε per lookup.
///
/// ```
/// use mgz_seen::{SeenSet, fingerprint::FingerprintSet};
/// let mut set = FingerprintSet::new(100_000, 1.0 / (1u64 << 36) as f64).unwrap();
/// for i in 0..100_000 {
///     assert!(set.insert(format!("com.example/{i}").as_bytes()));
/// }
/// assert!(set.contains(b"com.example/99"));
/// // Close to log2(1/ε) = 36 bits: under 5.5 bytes per key at this size.
/// assert!((set.heap_bytes() as f64 / 100_000.0) < 5.5);
/// ```
#[derive(Debug)]
pub struct FingerprintSet {
    epsilon: f64,
    capacity: usize,
    gens: Vec<Generation>,
    len: usize,
    /// No further generation fits 64-bit hashes: the last one overfills.
    saturated: bool,
    /// Smallest buffer of every generation (0: the default, capacity / 1024).
    min_buffer: usize,
    /// Whether `insert_batch` looks each distinct hash up once (see `batch`).
    dedup_batches: bool,
    /// `insert_batch` calls so far (wrapping), to retry deduplication.
    batches: u32,
}

impl FingerprintSet {
    /// A set for about `capacity` keys at false-positive rate `epsilon` per lookup.
    ///
    /// More keys than `capacity` are fine (new generations keep the bound),
    /// fewer cost `log2(capacity / n)` extra bits each.
    pub fn new(capacity: usize, epsilon: f64) -> Result<Self, SeenError> {
        if !(epsilon > 0.0 && epsilon < 1.0) {
            return Err(SeenError::InvalidFpr { fpr: epsilon });
        }
        let capacity = capacity.max(1);
        let first =
            generation(capacity, epsilon * (1.0 - GROWTH_SHARE)).ok_or(SeenError::TooLarge {
                expected: capacity as u64,
                backend: "fingerprint",
            })?;
        Ok(Self {
            epsilon,
            capacity,
            gens: vec![first],
            len: 0,
            saturated: false,
            min_buffer: 0,
            dedup_batches: true,
            batches: 0,
        })
    }

    /// Gives every generation a buffer of at least `slots` fingerprints
    /// (at most 16,384), for an empty set. A bigger buffer means fewer runs
    /// and merges (faster inserts) for ~18 bytes a slot: worth it where the
    /// set is split into many small parts whose total size matters more than
    /// each part's bytes per key (`mgz dedup`). Ignored once keys are in.
    pub fn with_min_buffer(mut self, slots: usize) -> Self {
        if self.len == 0 {
            self.min_buffer = slots.min(lsm::MAX_BUFFER);
            self.gens.iter_mut().for_each(|g| g.raise_buffer(slots));
        }
        self
    }

    /// The configured false-positive rate.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The generation that follows the last one, `None` once 64-bit hashes
    /// leave no room for it.
    fn next_generation(&self) -> Option<Generation> {
        let g = self.gens.len() as i32;
        let share = GROWTH_SHARE.powi(g) * (1.0 - GROWTH_SHARE);
        let cap = self
            .capacity
            .saturating_mul(GROWTH_FACTOR.saturating_pow(g as u32));
        // Past what 64-bit fingerprints allow, shrink the generation instead.
        let cap = cap.min((self.epsilon * share * 2f64.powi(63)) as usize);
        let mut next = generation(cap, self.epsilon * share)?;
        next.raise_buffer(self.min_buffer);
        Some(next)
    }

    fn active(&mut self) -> &mut Generation {
        let full = self.gens.last().is_some_and(Generation::is_full);
        if full && !self.saturated {
            match self.next_generation() {
                Some(next) => {
                    if let Some(last) = self.gens.last_mut() {
                        last.flush();
                    }
                    self.gens.push(next);
                }
                None => self.saturated = true,
            }
        }
        self.gens.last_mut().expect("a set always has a generation")
    }
}

/// A generation for `capacity` keys at rate `eps`, if 64-bit hashes allow it.
///
/// Multiply-shift gives each fingerprint at most `⌈2^64 / U⌉` of the 2^64
/// hashes; choosing `U = ⌈2^64 / D⌉` with `D = ⌊eps · 2^64 / capacity⌋` makes
/// that at most `D`, so `capacity · D / 2^64 <= eps` holds exactly.
fn generation(capacity: usize, eps: f64) -> Option<Generation> {
    let d = (eps * 2f64.powi(64) / capacity.max(1) as f64).floor();
    // D >= 2 keeps U <= 2^63, inside u64.
    if d < 2.0 || capacity == 0 {
        return None;
    }
    let d = d as u128;
    let universe = ((1u128 << 64).div_ceil(d)).min(u128::from(u64::MAX)) as u64;
    Some(Generation::new(universe, capacity))
}

/// Largest share of the 2^64 hashes one fingerprint of universe `u` receives.
fn max_preimage(u: u64) -> f64 {
    (1u128 << 64).div_ceil(u128::from(u)) as f64 / 2f64.powi(64)
}

impl SeenSet for FingerprintSet {
    fn insert(&mut self, key: &[u8]) -> bool {
        let hash = xxh3_64(key);
        if self.gens.iter().any(|g| g.contains(g.fingerprint(hash))) {
            return false;
        }
        let gen_ = self.active();
        let fp = gen_.fingerprint(hash);
        gen_.push_new(fp);
        self.len += 1;
        true
    }

    /// Checks the whole batch against the set as it was first (the runs'
    /// cache misses overlap, see `EliasFano::contains_many`), then inserts in
    /// order, checking each key also against what this batch added: the
    /// answers equal those of `insert` one key at a time (see `batch`).
    fn insert_batch(&mut self, keys: &[&[u8]], out: &mut Vec<bool>) {
        self.insert_hashes(keys, out);
    }

    fn contains(&self, key: &[u8]) -> bool {
        let hash = xxh3_64(key);
        self.gens.iter().any(|g| g.contains(g.fingerprint(hash)))
    }

    fn as_fingerprint_mut(&mut self) -> Option<&mut FingerprintSet> {
        Some(self)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn heap_bytes(&self) -> usize {
        let own = self.gens.capacity() * std::mem::size_of::<Generation>();
        own + self.gens.iter().map(Generation::heap_bytes).sum::<usize>()
    }

    fn guarantee(&self) -> Guarantee {
        // Once 64-bit universes run out, the last generation overfills:
        // report the bound that then holds instead of ε.
        let now: f64 = self
            .gens
            .iter()
            .map(|g| g.len() as f64 * g.preimage())
            .sum();
        Guarantee::FalsePositive {
            rate: self.epsilon.max(now),
        }
    }

    fn name(&self) -> &'static str {
        "fingerprint"
    }

    fn snapshot(&self) -> Option<Vec<u8>> {
        crate::snapshot_vec(self)
    }

    fn snapshot_len(&self) -> Option<u64> {
        Some(self.snapshot_bytes())
    }

    fn write_snapshot(&self, out: &mut dyn std::io::Write) -> std::io::Result<bool> {
        self.stream_snapshot(out).map(|()| true)
    }
}

#[cfg(test)]
mod tests;
