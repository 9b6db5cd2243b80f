//! Behaviour tests for [`CompactSet`] against a `BTreeSet` model.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;

pub(super) fn url(i: u64) -> Vec<u8> {
    format!("com.host{}.www/dir{}/page-{}.html", i % 53, i % 7, i * 13).into_bytes()
}

fn check_against_model(set: &CompactSet, model: &BTreeSet<Vec<u8>>) {
    assert_eq!(set.len(), model.len());
    assert!(model.iter().all(|k| set.contains(k)), "false negative");
    let listed: Vec<Vec<u8>> = set.iter().collect();
    let expected: Vec<Vec<u8>> = model.iter().cloned().collect();
    assert!(
        listed == expected,
        "iter() listed {} keys, not the {} sorted keys",
        listed.len(),
        expected.len()
    );
}

#[test]
fn many_keys_across_runs_and_merges() {
    let mut set = CompactSet::new();
    let mut model = BTreeSet::new();
    for i in 0..60_000 {
        let k = url(i % 45_000);
        assert_eq!(set.insert(&k), model.insert(k));
    }
    assert!(!set.runs.is_empty(), "{:?}", set.run_lens());
    // Past TRAIN_KEYS the word dictionary is trained and runs carry word symbols.
    assert!(set.dict.as_ref().is_some_and(|d| d.len() > 0));
    check_against_model(&set, &model);
    for i in 45_000..50_000 {
        assert!(!set.contains(&url(i)), "false positive");
    }
}

/// Merges re-emit each key's carried symbols and re-tokenise a letter run
/// that the new predecessor cuts: words sharing prefixes, inserted in an
/// order that interleaves them across runs, so cuts land inside words.
#[test]
fn merges_that_cut_words_keep_every_key() {
    const WORDS: [&str; 6] = ["new", "news", "newsroom", "newsletter", "room", "roomy"];
    let key = |i: usize| {
        let (a, b) = (WORDS[i % 6], WORDS[(i / 6) % 6]);
        format!("org.site/{a}{b}/{b}{a}x{}", i / 36).into_bytes()
    };
    let mut set = CompactSet::new();
    let mut model = BTreeSet::new();
    for i in (0..40_000).map(|i| (i * 7_919) % 40_000) {
        assert_eq!(set.insert(&key(i)), model.insert(key(i)));
    }
    assert!(set.dict.as_ref().is_some_and(|d| d.len() > 0));
    check_against_model(&set, &model);
}

/// Block lookups compare a candidate key with the probe as it decodes and
/// stop at the first difference, inside a byte or a dictionary word: keys
/// that differ from others inside a word ("news" / "newt"), and near misses
/// of every kind (one byte off either way, one byte shorter or longer, a
/// word's letter changed), through `contains` and `insert_batch`.
#[test]
fn near_misses_are_told_apart_from_keys() {
    const WORDS: [&str; 5] = ["news", "newt", "room", "rooms", "roomy"];
    let key = |i: usize| format!("org.site/p{}/{}", i / 5, WORDS[i % 5]).into_bytes();
    let mut set = CompactSet::new();
    let mut model = BTreeSet::new();
    for i in (0..12_000).map(|i| (i * 7_919) % 12_000) {
        assert_eq!(set.insert(&key(i)), model.insert(key(i)));
    }
    assert!(set.dict.as_ref().is_some_and(|d| d.len() > 0));
    let mut probes: Vec<Vec<u8>> = Vec::new();
    for i in (0..12_000).step_by(3) {
        let k = key(i);
        let n = k.len();
        let mut up = k.clone();
        up[n - 1] += 1;
        let mut down = k.clone();
        down[n - 1] -= 1;
        let mut word = k.clone();
        word[n - 3] += 1; // the second letter of the last word
        probes.extend([
            k.clone(),
            up,
            down,
            k[..n - 1].to_vec(),
            [&k[..], b"0"].concat(),
            word,
        ]);
    }
    let want: Vec<bool> = probes.iter().map(|p| model.contains(p)).collect();
    let got: Vec<bool> = probes.iter().map(|p| set.contains(p)).collect();
    assert!(got == want, "contains disagrees with the model");
    let refs: Vec<&[u8]> = probes.iter().map(Vec::as_slice).collect();
    let mut out = Vec::new();
    set.insert_batch(&refs, &mut out);
    let mut seen = BTreeSet::new();
    let fresh: Vec<bool> = probes
        .iter()
        .map(|p| !model.contains(p) && seen.insert(p.clone()))
        .collect();
    assert!(out == fresh, "insert_batch disagrees with the model");
}

#[test]
fn edge_case_keys_survive_freezing_and_merging() {
    let mut set = CompactSet::new();
    let mut model = BTreeSet::new();
    let every_byte: Vec<u8> = (0..=255).collect();
    let mut keys: Vec<Vec<u8>> = vec![
        Vec::new(),
        vec![0],
        vec![0, 0],
        vec![255; 3],
        every_byte.clone(),
        every_byte.iter().rev().copied().collect(),
        vec![b'x'; 64 * 1024],
        vec![b'x'; 64 * 1024 + 1],
    ];
    // Prefix chains: each key is a prefix of the next.
    keys.extend((0..300).map(|n| b"com.example/".iter().copied().cycle().take(n).collect()));
    // Enough filler to force several flushes and a merge.
    keys.extend((0..5_000u32).map(|i| i.to_be_bytes().to_vec()));
    for k in &keys {
        assert_eq!(set.insert(k), model.insert(k.clone()));
    }
    for k in &keys {
        assert!(!set.insert(k));
    }
    check_against_model(&set, &model);
    assert!(!set.contains(&[b'x'; 64 * 1024 - 1]));
    assert!(!set.contains(b"com.example/com.example/com.example/com.example/x"));
}

#[test]
fn empty_set() {
    let set = CompactSet::new();
    assert!(set.is_empty() && !set.contains(b"") && set.iter().next().is_none());
    assert_eq!((set.name(), set.guarantee()), ("compact", Guarantee::Exact));
}

#[test]
fn tiers_bound_the_number_of_runs() {
    let mut set = CompactSet::new();
    for i in 0..100_000u64 {
        set.insert(&i.to_be_bytes());
    }
    let lens = set.run_lens();
    let tiers: Vec<u32> = lens.iter().map(|&n| tier(n)).collect();
    assert!(tiers.windows(2).all(|w| w[0] >= w[1]), "{lens:?}");
    for t in &tiers {
        assert!(tiers.iter().filter(|x| *x == t).count() < TIER, "{lens:?}");
    }
}

#[test]
fn heap_bytes_counts_runs_and_buffer() {
    let mut set = CompactSet::new();
    let before = set.heap_bytes();
    for i in 0..3_000 {
        set.insert(&url(i));
    }
    let text: usize = (0..3_000).map(|i| url(i).len()).sum();
    assert!(set.heap_bytes() > before);
    // Compressed well below the text itself.
    assert!(
        set.heap_bytes() * 10 < text * 7,
        "{} vs {text}",
        set.heap_bytes()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn agrees_with_a_model(
        ops in proptest::collection::vec(
            (any::<bool>(), proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), any::<u8>()], 0..24)),
            0..1500,
        ),
    ) {
        let mut set = CompactSet::new();
        let mut model = BTreeSet::new();
        for (insert, key) in &ops {
            if *insert {
                prop_assert_eq!(set.insert(key), model.insert(key.clone()));
            } else {
                prop_assert_eq!(set.contains(key), model.contains(key));
            }
        }
        prop_assert_eq!(set.len(), model.len());
        let listed: Vec<Vec<u8>> = set.iter().collect();
        prop_assert_eq!(listed, model.into_iter().collect::<Vec<_>>());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// Batches with repeats inside them, crossing buffer freezes and merges,
    /// answer exactly as one-by-one inserts would.
    #[test]
    fn insert_batch_agrees_with_a_model(
        ids in proptest::collection::vec(0u64..3_000, 0..4_000),
        batch in 1usize..700,
    ) {
        let keys: Vec<Vec<u8>> = ids.iter().map(|&i| url(i)).collect();
        let (set, model) = batches_against_a_model(CompactSet::new(), &keys, batch)?;
        check_against_model(&set, &model);
    }
}

/// Inserts `keys` into `set` in batches of `batch`, checking every answer
/// against a model; returns both.
pub(super) fn batches_against_a_model(
    mut set: CompactSet,
    keys: &[Vec<u8>],
    batch: usize,
) -> Result<(CompactSet, BTreeSet<Vec<u8>>), TestCaseError> {
    let mut model = BTreeSet::new();
    let mut out = Vec::new();
    for chunk in keys.chunks(batch) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        set.insert_batch(&refs, &mut out);
        let want: Vec<bool> = chunk.iter().map(|k| model.insert(k.clone())).collect();
        prop_assert_eq!(&out, &want);
    }
    Ok((set, model))
}
