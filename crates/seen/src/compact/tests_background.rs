//! [`CompactSet::with_background_merges`] against a `BTreeSet` model: the
//! answers, the listing and the snapshot must not depend on when the
//! background thread finishes.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::tests::url;
use super::*;

fn listed(set: &CompactSet) -> Vec<Vec<u8>> {
    set.iter().collect()
}

fn background() -> CompactSet {
    CompactSet::new().with_background_merges()
}

#[test]
fn answers_and_listing_match_the_model_before_and_after_settling() {
    let mut set = background();
    let mut model = BTreeSet::new();
    for i in 0..40_000u64 {
        let key = url(i * 3 % 29_989);
        assert_eq!(set.insert(&key), model.insert(key.clone()), "key {i}");
        if i % 997 == 0 {
            let probe = url(i * 5 % 31_001);
            assert_eq!(set.contains(&probe), model.contains(&probe));
        }
    }
    let want: Vec<Vec<u8>> = model.iter().cloned().collect();
    assert_eq!(set.len(), model.len());
    assert_eq!(listed(&set), want);
    set.settle();
    assert!(set.pending.is_none());
    assert_eq!(listed(&set), want);
    assert!(model.iter().all(|k| set.contains(k)));
}

#[test]
fn settled_runs_keep_the_tier_bound() {
    let mut set = background();
    for i in 0..150_000u64 {
        set.insert(&i.to_be_bytes());
    }
    set.settle();
    let lens = set.run_lens();
    let tiers: Vec<u32> = lens.iter().map(|&n| tier(n)).collect();
    assert!(tiers.windows(2).all(|w| w[0] >= w[1]), "{lens:?}");
    for t in &tiers {
        assert!(tiers.iter().filter(|x| *x == t).count() < TIER, "{lens:?}");
    }
    assert_eq!(lens.iter().sum::<usize>() + set.buffer.len(), 150_000);
}

#[test]
fn a_lost_merge_is_redone_on_the_callers_thread() {
    let mut set = CompactSet::new();
    let mut model = BTreeSet::new();
    for i in 0..5_000u64 {
        let key = url(i);
        set.insert(&key);
        model.insert(key);
    }
    // A foreground set, so nothing is in flight; pretend the last two runs
    // went to a background thread that died (its sender dropped unsent).
    assert!(
        set.pending.is_none() && set.runs.len() >= 2,
        "{:?}",
        set.run_lens()
    );
    let runs_before = set.runs.len();
    let (tx, result) = mpsc::channel::<Run>();
    drop(tx);
    set.pending = Some(Pending {
        from: runs_before - 2,
        count: 2,
        result,
    });
    set.settle();
    assert!(set.pending.is_none());
    assert!(set.runs.len() < runs_before, "{:?}", set.run_lens());
    assert_eq!(listed(&set), model.iter().cloned().collect::<Vec<_>>());
}

#[test]
fn a_snapshot_taken_mid_merge_restores_the_same_keys() {
    let mut set = background();
    for i in 0..30_000u64 {
        set.insert(&url(i));
    }
    let bytes = set.to_snapshot();
    let back = CompactSet::restore(&bytes).unwrap();
    assert_eq!(listed(&back), listed(&set));
    set.settle();
    assert_eq!(set.to_snapshot(), bytes);
}

#[test]
fn many_sets_share_the_background_thread() {
    let mut sets: Vec<CompactSet> = (0..12).map(|_| background()).collect();
    let mut models: Vec<BTreeSet<Vec<u8>>> = vec![BTreeSet::new(); 12];
    for i in 0..60_000u64 {
        let s = (i * 7 % 12) as usize;
        let key = url(i % 50_000);
        assert_eq!(sets[s].insert(&key), models[s].insert(key));
    }
    for (set, model) in sets.iter_mut().zip(&models) {
        set.settle();
        assert_eq!(listed(set), model.iter().cloned().collect::<Vec<_>>());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Batches with repeats, crossing freezes and background merges, answer
    /// exactly as the model does.
    #[test]
    fn insert_batch_agrees_with_a_model(
        ids in proptest::collection::vec(0u64..6_000, 0..8_000),
        batch in 1usize..900,
    ) {
        let keys: Vec<Vec<u8>> = ids.iter().map(|&i| url(i)).collect();
        let (set, model) = super::tests::batches_against_a_model(background(), &keys, batch)?;
        prop_assert_eq!(set.len(), model.len());
        prop_assert_eq!(listed(&set), model.into_iter().collect::<Vec<_>>());
    }
}
