//! Behaviour tests for [`FingerprintSet`]: no false negatives, measured
//! false-positive rate within the bound, growth past capacity, space.

use std::collections::HashSet;

use proptest::prelude::*;

use super::*;

fn key(i: u64) -> Vec<u8> {
    format!("com.example.h{}/p/{}?q={}", i % 997, i, i.wrapping_mul(31)).into_bytes()
}

#[test]
fn rejects_bad_rates_and_impossible_capacities() {
    for bad in [0.0, 1.0, -0.5, f64::NAN, 2.0] {
        assert!(matches!(
            FingerprintSet::new(10, bad),
            Err(SeenError::InvalidFpr { .. })
        ));
    }
    let too_many = FingerprintSet::new(1 << 40, DEFAULT_EPSILON);
    assert!(matches!(too_many, Err(SeenError::TooLarge { .. })));
}

#[test]
fn edge_case_keys() {
    let mut set = FingerprintSet::new(100, DEFAULT_EPSILON).unwrap();
    let all_bytes: Vec<u8> = (0..=255).collect();
    let big = vec![0xAB; 64 * 1024];
    let keys: [&[u8]; 5] = [b"", b"a", b"ab", &all_bytes, &big];
    for k in keys {
        assert!(!set.contains(k));
        assert!(set.insert(k));
        assert!(!set.insert(k));
    }
    assert!(keys.iter().all(|k| set.contains(k)));
    assert_eq!(set.len(), 5);
    assert_eq!(set.name(), "fingerprint");
}

#[test]
fn measured_fpr_is_within_bound_and_no_false_negatives() {
    // ε = 2^-10 makes false positives frequent enough to count at small n.
    let eps = 1.0 / 1024.0;
    let n = 20_000u64;
    let mut set = FingerprintSet::new(n as usize, eps).unwrap();
    let mut accepted = 0;
    for i in 0..n {
        accepted += usize::from(set.insert(&key(i)));
    }
    assert!((0..n).all(|i| set.contains(&key(i))), "false negative");
    assert_eq!(set.len(), accepted);
    let probes = 400_000u64;
    let fp = (n..n + probes).filter(|&i| set.contains(&key(i))).count() as f64;
    // Expected about probes * n / U <= probes * ε = 390; allow 4 sigma above ε.
    let limit = probes as f64 * eps + 4.0 * (probes as f64 * eps).sqrt();
    assert!(fp <= limit, "{fp} false positives, limit {limit}");
    assert!(
        fp > 0.0,
        "a test that never sees a false positive measures nothing"
    );
    assert!(matches!(set.guarantee(), Guarantee::FalsePositive { rate } if rate == eps));
}

#[test]
fn growing_past_capacity_keeps_the_bound() {
    let eps = 1.0 / 4096.0;
    let mut set = FingerprintSet::new(1000, eps).unwrap();
    for i in 0..30_000 {
        set.insert(&key(i));
    }
    assert!(set.gens.len() >= 3, "{} generations", set.gens.len());
    assert!((0..30_000).all(|i| set.contains(&key(i))));
    let bound: f64 = set
        .gens
        .iter()
        .map(|g| g.len() as f64 * max_preimage(g.universe()))
        .sum();
    assert!(bound <= eps, "union bound {bound} > ε {eps}");
    let fp = (1_000_000..1_400_000u64)
        .filter(|&i| set.contains(&key(i)))
        .count() as f64;
    assert!(
        fp <= 400_000.0 * eps + 4.0 * (400_000.0 * eps).sqrt(),
        "{fp}"
    );
}

/// Inserts `keys` one at a time into one set and in batches of the sizes
/// `size` gives into another, both for `capacity` keys at rate `eps`:
/// (sequential set, its answers, batched set, its answers).
fn single_and_batched(
    keys: &[Vec<u8>],
    (capacity, eps): (usize, f64),
    mut size: impl FnMut() -> usize,
) -> (FingerprintSet, Vec<bool>, FingerprintSet, Vec<bool>) {
    let mut single = FingerprintSet::new(capacity, eps).unwrap();
    let want = keys.iter().map(|k| single.insert(k)).collect();
    let mut batched = FingerprintSet::new(capacity, eps).unwrap();
    let (mut got, mut out, mut at) = (Vec::new(), Vec::new(), 0);
    while at < keys.len() {
        let end = (at + size()).min(keys.len());
        let refs: Vec<&[u8]> = keys[at..end].iter().map(Vec::as_slice).collect();
        batched.insert_batch(&refs, &mut out);
        assert_eq!(out.len(), refs.len());
        got.extend_from_slice(&out);
        at = end;
    }
    (single, want, batched, got)
}

#[test]
fn insert_batch_answers_like_one_insert_at_a_time() {
    // ε = 2^-8 makes fingerprint collisions common; 500 keys of capacity
    // force new generations mid-batch; every key repeats (duplicates inside
    // and across batches).
    let eps = 1.0 / 256.0;
    let keys: Vec<Vec<u8>> = (0..12_000u64).map(|i| key(i % 7_000)).collect();
    let (single, want, batched, got) = single_and_batched(&keys, (500, eps), || 777);
    assert!(want.iter().filter(|&&w| !w).count() > 5_000);
    assert!(
        batched.gens.len() >= 3,
        "{} generations",
        batched.gens.len()
    );
    assert_eq!(got, want);
    assert_eq!(batched.len(), single.len());
    assert!(keys.iter().all(|k| batched.contains(k)));
}

#[test]
fn small_batches_answer_like_one_insert_at_a_time() {
    // Batches of 1 to SMALL + 1 keys (the stack path and just past it),
    // with repeats inside and across batches, fingerprint collisions at
    // ε = 2^-8, and generations opening between and inside batches.
    let eps = 1.0 / 256.0;
    // Every fifth key repeats the one two places before it.
    let keys: Vec<Vec<u8>> = (0..12_000u64)
        .map(|i| if i % 5 == 4 { i - 2 } else { i })
        .map(|j| key((j * 7919 + j / 4) % 4_000))
        .collect();
    for capacity in [100, 50_000] {
        let mut size = 0;
        let cycle = || {
            size = size % (super::batch::SMALL + 1) + 1;
            size
        };
        let (single, want, batched, got) = single_and_batched(&keys, (capacity, eps), cycle);
        assert!(single.len() < 4_000, "some false positives expected");
        assert_eq!(got, want, "capacity {capacity}");
        assert_eq!(batched.len(), single.len());
        if capacity == 100 {
            assert!(
                batched.gens.len() >= 3,
                "{} generations, {} keys",
                batched.gens.len(),
                batched.len()
            );
        }
        assert!(keys.iter().all(|k| batched.contains(k)));
    }
}

#[test]
fn repeats_inside_one_batch_answer_like_one_insert_at_a_time() {
    // Each key comes back within the same batch (the batch looks it up once,
    // `batch::Distinct`); ε = 2^-8 with 3,000 keys gives fingerprint
    // collisions between different keys of one batch, which must still
    // answer like sequential inserts (the second such key is a false positive).
    let eps = 1.0 / 256.0;
    let keys: Vec<Vec<u8>> = (0..20_000u64)
        .map(|i| key((i * 7 + i / 5) % 3_000))
        .collect();
    for capacity in [3_000, 100_000] {
        let (single, want, batched, got) = single_and_batched(&keys, (capacity, eps), || 1024);
        assert!(single.len() < 3_000, "some false positives expected");
        assert_eq!(got, want);
        assert_eq!(batched.len(), single.len());
    }
}

#[test]
fn generation_universe_respects_the_quantised_bound() {
    for cap in [1usize, 7, 1000, 10_000_000, 120_000_000] {
        let eps = DEFAULT_EPSILON * (1.0 - GROWTH_SHARE);
        let g = generation(cap, eps).unwrap();
        assert!(cap as f64 * max_preimage(g.universe()) <= eps, "cap {cap}");
    }
}

#[test]
fn space_near_log2_inverse_epsilon_at_capacity() {
    let n = 1 << 17;
    let mut set = FingerprintSet::new(n, DEFAULT_EPSILON).unwrap();
    for i in 0..n as u64 {
        set.insert(&i.to_le_bytes());
    }
    let bits = set.heap_bytes() as f64 * 8.0 / n as f64;
    // 36 + 2 (Elias–Fano) + growth share, run split, samples, buffer.
    assert!(bits < 39.0, "{bits} bits per key");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn agrees_with_a_hash_set_model_up_to_false_positives(
        keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..400),
        probes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..100),
    ) {
        let mut set = FingerprintSet::new(64, DEFAULT_EPSILON).unwrap();
        let mut model = HashSet::new();
        for k in &keys {
            let new = set.insert(k);
            let model_new = model.insert(k.clone());
            // A new key may collide (false positive) but a known key never looks new.
            prop_assert!(model_new || !new);
        }
        prop_assert!(keys.iter().all(|k| set.contains(k)));
        prop_assert!(set.len() <= model.len());
        // At 2^-36 a disagreement on these sizes would be a bug, not bad luck.
        prop_assert_eq!(set.len(), model.len());
        for p in &probes {
            prop_assert_eq!(set.contains(p), model.contains(p));
        }
    }

    #[test]
    fn batches_of_any_size_match_a_hash_set_model(
        ids in proptest::collection::vec(0u32..3_000, 0..6_000),
        chunk in 1usize..1_500,
        capacity in 1usize..20_000,
    ) {
        // Batches that overflow the buffer freeze with it into one run.
        let keys: Vec<Vec<u8>> = ids.iter().map(|&i| key(u64::from(i))).collect();
        let mut set = FingerprintSet::new(capacity, DEFAULT_EPSILON).unwrap();
        let mut model = HashSet::new();
        let mut out = Vec::new();
        for part in keys.chunks(chunk) {
            let refs: Vec<&[u8]> = part.iter().map(Vec::as_slice).collect();
            set.insert_batch(&refs, &mut out);
            let want: Vec<bool> = part.iter().map(|k| model.insert(k.clone())).collect();
            prop_assert_eq!(&out, &want);
        }
        prop_assert_eq!(set.len(), model.len());
        prop_assert!(keys.iter().all(|k| set.contains(k)));
        prop_assert!((3_000..3_200u64).all(|i| !set.contains(&key(i))));
        let g = &set.gens[0];
        let lens = g.run_lens();
        for i in 0..lens.len() {
            let newer: usize = lens[i + 1..].iter().sum();
            prop_assert!(lens[i] >= lsm::RATIO * newer, "{:?}", lens);
        }
    }
}
