//! One batch over many `fingerprint` sets (the parts of a `Parted` set),
//! with every part's lookups staged together.
//!
//! ```text
//! grouped keys (part p: starts[p]..starts[p + 1]) ─xxh3─▶ hashes
//!   probes: every (key, generation, run) of every part ─contains_probes─▶ known
//!   then each part's buffers, then per part in order: add_small (fresh keys in)
//! ```
//!
//! Why: a frontier batch of 256 URLs gives each of 64 parts about 4 keys,
//! so a part's own staged lookup overlaps only the misses of those few
//! (its runs are ~0.8 MB each at 10M URLs: 48 MB in all, most lookups miss
//! the cache). Here the misses of the whole batch overlap.
//!
//! Answers equal each part's `insert_batch` on its share: the lookups only
//! read, every part's share is small (`takes_small`), and the inserts then
//! run part by part exactly as `insert_small` does them.

use xxhash_rust::xxh3::xxh3_64;

use super::ef::probes::{Probe, contains_probes};
use crate::SeenSet;

/// Inserts `grouped` (keys grouped by part, part `p`'s at
/// `starts[p]..starts[p + 1]`) into `parts`, appending the answers to
/// `fresh` in grouped order, if every part is a [`FingerprintSet`] that
/// takes its share as a small batch; otherwise changes nothing and returns
/// `false`.
pub(crate) fn insert_parts(
    parts: &mut [Box<dyn SeenSet>],
    starts: &[usize],
    grouped: &[&[u8]],
    fresh: &mut Vec<bool>,
) -> bool {
    let mut sets = Vec::with_capacity(parts.len());
    for (p, part) in parts.iter_mut().enumerate() {
        match part.as_fingerprint_mut() {
            Some(set) if set.takes_small(starts[p + 1] - starts[p]) => sets.push(set),
            _ => return false,
        }
    }
    let hashes: Vec<u64> = grouped.iter().map(|k| xxh3_64(k)).collect();
    let mut known = vec![false; grouped.len()];
    let mut probes = Vec::with_capacity(grouped.len() * 4);
    for (p, set) in sets.iter().enumerate() {
        for (i, &h) in hashes
            .iter()
            .enumerate()
            .take(starts[p + 1])
            .skip(starts[p])
        {
            for g in &set.gens {
                let value = g.fingerprint(h);
                probes.extend(g.runs().iter().map(|ef| Probe { ef, value, at: i }));
            }
        }
    }
    contains_probes(&probes, &mut known);
    drop(probes);
    let mut sub = Vec::new();
    for (p, set) in sets.iter_mut().enumerate() {
        let (from, to) = (starts[p], starts[p + 1]);
        if from == to {
            continue;
        }
        for (k, &h) in known[from..to].iter_mut().zip(&hashes[from..to]) {
            *k = *k || set.gens.iter().any(|g| g.buffer_contains(g.fingerprint(h)));
        }
        set.add_small(&hashes[from..to], &known[from..to], &mut sub);
        fresh.extend_from_slice(&sub);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parted::{Parted, Route};

    fn parts(n: usize, capacity: usize, epsilon: f64) -> Vec<Box<dyn SeenSet>> {
        (0..n)
            .map(|_| {
                let set = FingerprintSet::new(capacity, epsilon).unwrap();
                Box::new(set.with_min_buffer(64)) as Box<dyn SeenSet>
            })
            .collect()
    }

    use super::super::FingerprintSet;

    /// Only batches whose every share is small are taken, and a refused
    /// batch leaves every part as it was.
    #[test]
    fn takes_a_batch_only_when_every_part_takes_it_small() {
        let keys: Vec<Vec<u8>> = (0..40).map(|i| format!("k{i}").into_bytes()).collect();
        let grouped: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut fresh = Vec::new();
        // Part 1's share is 17 keys: over `SMALL`.
        let mut sets = parts(2, 1000, 1e-9);
        assert!(!insert_parts(&mut sets, &[0, 23, 40], &grouped, &mut fresh));
        assert!(fresh.is_empty() && sets.iter().all(|s| s.is_empty()));
        // A part that is not a fingerprint set.
        let mut mixed = parts(1, 1000, 1e-9);
        mixed.push(Box::new(crate::hash::HashSeen::new()));
        assert!(!insert_parts(
            &mut mixed,
            &[0, 20, 40],
            &grouped,
            &mut fresh
        ));
        assert!(fresh.is_empty() && mixed.iter().all(|s| s.is_empty()));
        // Shares of 16 and 16, the second repeating the first's keys.
        let again: Vec<&[u8]> = grouped[..16]
            .iter()
            .chain(&grouped[..16])
            .copied()
            .collect();
        assert!(insert_parts(&mut sets, &[0, 16, 32], &again, &mut fresh));
        assert_eq!(fresh, vec![true; 32]);
        assert!(insert_parts(&mut sets, &[0, 16, 32], &again, &mut fresh));
        assert_eq!(&fresh[32..], &[false; 32]);
    }

    /// Batches of many sizes (staged when every share is small, part by
    /// part otherwise), with repeats inside and across batches, generations
    /// filling up, and at ε = 2⁻⁸ fingerprint collisions: the same answers
    /// as one key at a time, false positives included.
    #[test]
    fn parted_batches_answer_like_one_key_at_a_time() {
        for epsilon in [1.0 / (1u64 << 36) as f64, 1.0 / 256.0] {
            let mut batched = Parted::new(parts(64, 100, epsilon), Route::Key).unwrap();
            let mut single = Parted::new(parts(64, 100, epsilon), Route::Key).unwrap();
            // 9,000 distinct keys, each met about 2.2 times.
            let keys: Vec<Vec<u8>> = (0..20_000u64)
                .map(|i| (i * 7919) % 9000)
                .map(|j| format!("com.h{}/p/{j}", j % 97).into_bytes())
                .collect();
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let (mut at, mut out) = (0, Vec::new());
            for size in [1usize, 7, 64, 256, 300, 2000].iter().cycle() {
                if at == refs.len() {
                    break;
                }
                let batch = &refs[at..(at + size).min(refs.len())];
                batched.insert_batch(batch, &mut out);
                let want: Vec<bool> = batch.iter().map(|k| single.insert(k)).collect();
                assert_eq!(out, want, "ε {epsilon}, batch at {at}");
                at += batch.len();
            }
            assert_eq!(batched.len(), single.len());
            assert!(batched.len() > 64 * 100, "generations filled up");
            for k in &refs[..500] {
                assert!(batched.contains(k));
            }
        }
    }
}
