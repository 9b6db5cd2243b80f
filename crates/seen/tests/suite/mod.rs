//! The `SeenSet` conformance suite, written once; `conformance!` runs it
//! against one backend. Exact backends must agree with a `HashSet` model;
//! probabilistic ones must never miss a key and keep their measured
//! false-positive rate within the stated bound.

use std::collections::HashSet;

use mgz_seen::{BackendOptions, Guarantee, SeenSet};
use proptest::prelude::*;

/// Keys the false-positive check inserts; backends are sized for this many.
pub const EXPECTED: usize = 20_000;
/// Absent keys the false-positive check looks up.
const PROBES: usize = 100_000;

/// Options every factory passes to the registry.
pub fn opts() -> BackendOptions {
    BackendOptions {
        expected: EXPECTED,
        fpr: None,
    }
}

/// Builds a fresh backend.
pub type Make = fn() -> Box<dyn SeenSet>;

fn is_exact(s: &dyn SeenSet) -> bool {
    s.guarantee() == Guarantee::Exact
}

pub fn insert_contains_len(make: Make) {
    let mut s = make();
    assert!(s.is_empty());
    assert!(!s.contains(b"com.example/"));
    assert!(s.insert(b"com.example/"));
    assert!(!s.insert(b"com.example/"), "second insert is not new");
    assert!(s.contains(b"com.example/"));
    assert!(s.insert(b"com.example/a"));
    assert!(s.insert(b"com.exampl"));
    assert_eq!(s.len(), 3);
    assert!(!s.is_empty());
    assert!(s.contains(b"com.exampl") && s.contains(b"com.example/a"));
    if is_exact(&*s) {
        assert!(!s.contains(b"com.example"), "a prefix is not a key");
        assert!(!s.contains(b"com.example/ab"), "an extension is not a key");
    }
    assert!(s.heap_bytes() > 0);
}

pub fn batch_equals_sequential(make: Make) {
    let keys: Vec<Vec<u8>> = (0..500u32)
        .map(|i| format!("org.site{}/p/{}", i % 7, i % 31).into_bytes())
        .collect();
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let (mut a, mut b) = (make(), make());
    let mut out = vec![true; 3]; // stale contents must be cleared
    a.insert_batch(&refs, &mut out);
    let seq: Vec<bool> = refs.iter().map(|k| b.insert(k)).collect();
    assert_eq!(out, seq);
    assert_eq!(a.len(), b.len());
    if is_exact(&*a) {
        assert_eq!(
            a.len(),
            7 * 31,
            "(i mod 7, i mod 31) repeats every 217 keys"
        );
    }
    assert!(refs.iter().all(|k| a.contains(k)));
}

/// Enough keys to freeze and merge runs: [`SeenSet::settle`] (a no-op for
/// most backends, waiting for background merges in others) changes no answer.
pub fn settle_keeps_every_answer(make: Make) {
    let keys: Vec<Vec<u8>> = (0..20_000u32)
        .map(|i| format!("net.host{}.www/section{}/item-{}", i % 41, i % 9, i * 3).into_bytes())
        .collect();
    let mut s = make();
    let mut out = Vec::new();
    for chunk in keys.chunks(700) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        s.insert_batch(&refs, &mut out);
    }
    let before = s.len();
    s.settle();
    assert_eq!(s.len(), before);
    assert!(keys.iter().all(|k| s.contains(k)), "a key went missing");
    assert!(!s.insert(&keys[12_345]), "a settled key is new again");
    if is_exact(&*s) {
        assert_eq!(before, keys.len());
        assert!(!s.contains(b"net.host1.www/section1/item-2"));
    }
}

pub fn empty_key(make: Make) {
    let mut s = make();
    assert!(!s.contains(b""));
    assert!(s.insert(b""));
    assert!(!s.insert(b""));
    assert!(s.contains(b""));
    assert_eq!(s.len(), 1);
    assert!(s.insert(b"a"));
    assert!(s.contains(b"") && s.contains(b"a"));
}

pub fn long_keys(make: Make) {
    let mut s = make();
    let mut a = vec![b'x'; 64 * 1024];
    let mut b = a.clone();
    *b.last_mut().unwrap() = b'y';
    assert!(s.insert(&a));
    assert!(s.insert(&b));
    assert!(!s.insert(&a));
    assert!(s.contains(&a) && s.contains(&b));
    a.pop();
    if is_exact(&*s) {
        assert!(!s.contains(&a), "64 KiB - 1 prefix is not a key");
    }
    assert_eq!(s.len(), 2);
}

pub fn binary_keys(make: Make) {
    let mut s = make();
    for b in 0..=255u8 {
        assert!(s.insert(&[b]), "byte {b}");
        assert!(s.insert(&[0, b, 255]), "byte {b} framed");
    }
    assert_eq!(s.len(), 512);
    for b in 0..=255u8 {
        assert!(s.contains(&[b]) && s.contains(&[0, b, 255]));
        if is_exact(&*s) {
            assert!(!s.contains(&[b, b, b]));
        }
    }
}

/// Fills to the expected count, then looks up absent keys: the number of
/// false positives must stay within 4 standard deviations of
/// `rate × PROBES` (binomial), and exact backends must have none.
pub fn false_positive_rate(make: Make) {
    let mut s = make();
    let key = |i: usize| format!("com.host{}/page/{i}", i % 97).into_bytes();
    for i in 0..EXPECTED {
        s.insert(&key(i));
    }
    assert!((0..EXPECTED).all(|i| s.contains(&key(i))), "false negative");
    let fp = (EXPECTED..EXPECTED + PROBES)
        .filter(|&i| s.contains(&key(i)))
        .count();
    let rate = match s.guarantee() {
        Guarantee::FalsePositive { rate } => rate,
        _ => 0.0,
    };
    let mean = rate * PROBES as f64;
    let bound = mean + 4.0 * mean.sqrt();
    assert!(fp as f64 <= bound, "{fp} false positives, bound {bound:.1}");
}

#[derive(Debug, Clone)]
pub enum Op {
    Insert(Vec<u8>),
    Contains(Vec<u8>),
}

/// Short keys over a tiny alphabet, so prefixes and duplicates are common.
/// A set that has a snapshot form restores to the same answers; truncated
/// snapshots are refused and flipped bits never panic.
pub fn snapshot_round_trip(make: Make) {
    let mut s = make();
    let keys: Vec<Vec<u8>> = (0..3000)
        .map(|i| format!("com.example/p{i}").into_bytes())
        .collect();
    for k in &keys {
        s.insert(k);
    }
    let Some(bytes) = s.snapshot() else {
        assert!(mgz_seen::restore(s.name(), &[1, 0, 0]).is_err());
        return;
    };
    let back = mgz_seen::restore(s.name(), &bytes).expect("own snapshot restores");
    assert_eq!(back.len(), s.len());
    assert!(
        keys.iter().all(|k| back.contains(k)),
        "false negative after restore"
    );
    for i in 0..3000 {
        let k = format!("org.absent/q{i}").into_bytes();
        assert_eq!(
            back.contains(&k),
            s.contains(&k),
            "answers differ after restore"
        );
    }
    for cut in [0, 1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            mgz_seen::restore(s.name(), &bytes[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    for i in (0..bytes.len()).step_by(bytes.len() / 64 + 1) {
        let mut flipped = bytes.clone();
        flipped[i] ^= 0x5a;
        let _ = mgz_seen::restore(s.name(), &flipped);
    }
}

/// A writer that takes at most 7 bytes per call and can be told to fail
/// after some bytes, to check streaming handles short writes and errors.
struct Dribble {
    got: Vec<u8>,
    fail_after: usize,
}

impl std::io::Write for Dribble {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.got.len() >= self.fail_after {
            return Err(std::io::Error::other("disk full"));
        }
        let n = buf.len().min(7);
        self.got.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `write_snapshot` streams exactly the bytes of `snapshot()`, as many as
/// `snapshot_len()` announces, and they restore; a failing writer gives an
/// error. Backends without a snapshot form say so in all three methods.
pub fn snapshot_streams_the_same_bytes(make: Make) {
    let mut s = make();
    // Enough keys that every backend's bytes span several write blocks.
    for i in 0..EXPECTED {
        s.insert(format!("com.host{}/stream/{i}", i % 97).as_bytes());
    }
    s.insert(b"");
    let mut out = Dribble {
        got: Vec::new(),
        fail_after: usize::MAX,
    };
    let Some(bytes) = s.snapshot() else {
        assert_eq!(s.snapshot_len(), None);
        assert!(!s.write_snapshot(&mut out).unwrap(), "no snapshot form");
        assert!(out.got.is_empty());
        return;
    };
    assert!(bytes.len() > 64 << 10, "{} bytes", bytes.len());
    assert_eq!(s.snapshot_len(), Some(bytes.len() as u64));
    assert!(s.write_snapshot(&mut out).unwrap());
    assert!(out.got == bytes, "streamed bytes differ from snapshot()");
    let back = mgz_seen::restore(s.name(), &out.got).expect("streamed bytes restore");
    assert_eq!(back.len(), s.len());
    assert!(
        (0..EXPECTED).all(|i| back.contains(format!("com.host{}/stream/{i}", i % 97).as_bytes()))
    );
    // Same size again (a hash set's order may differ, its bytes with it).
    assert_eq!(back.snapshot_len(), Some(bytes.len() as u64));
    let mut full = Dribble {
        got: Vec::new(),
        fail_after: bytes.len() / 2,
    };
    assert!(
        s.write_snapshot(&mut full).is_err(),
        "a write error is reported"
    );
}

pub fn ops() -> impl Strategy<Value = Vec<Op>> {
    let key = prop::collection::vec(prop::sample::select(vec![0u8, b'a', b'b', b'/', 255]), 0..8);
    let op = prop_oneof![key.clone().prop_map(Op::Insert), key.prop_map(Op::Contains)];
    prop::collection::vec(op, 0..200)
}

/// Replays `ops` against the backend and a `HashSet` model.
pub fn model(make: Make, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut s = make();
    let exact = is_exact(&*s);
    let mut model = HashSet::new();
    let mut news = 0;
    for op in ops {
        match op {
            Op::Insert(k) => {
                let new = model.insert(k.clone());
                let got = s.insert(k);
                news += usize::from(got);
                if exact {
                    prop_assert_eq!(got, new, "insert {:?}", k);
                } else {
                    prop_assert!(!got || new, "duplicate {:?} reported new", k);
                }
            }
            Op::Contains(k) => {
                let want = model.contains(k);
                let got = s.contains(k);
                if exact {
                    prop_assert_eq!(got, want, "contains {:?}", k);
                } else {
                    prop_assert!(got || !want, "false negative {:?}", k);
                }
            }
        }
    }
    prop_assert_eq!(s.len(), if exact { model.len() } else { news });
    Ok(())
}

/// Runs the whole suite against one backend:
/// `conformance!(name, || Box::new(...) as Box<dyn SeenSet>);`
#[macro_export]
macro_rules! conformance {
    ($name:ident, $make:expr) => {
        mod $name {
            use super::*;
            use mgz_seen::SeenSet;
            use proptest::prelude::*;

            fn make() -> Box<dyn SeenSet> {
                let f: fn() -> Box<dyn SeenSet> = $make;
                f()
            }

            #[test]
            fn insert_contains_len() {
                suite::insert_contains_len(make)
            }
            #[test]
            fn batch_equals_sequential() {
                suite::batch_equals_sequential(make)
            }
            #[test]
            fn settle_keeps_every_answer() {
                suite::settle_keeps_every_answer(make)
            }
            #[test]
            fn empty_key() {
                suite::empty_key(make)
            }
            #[test]
            fn long_keys() {
                suite::long_keys(make)
            }
            #[test]
            fn binary_keys() {
                suite::binary_keys(make)
            }
            #[test]
            fn snapshot_round_trip() {
                suite::snapshot_round_trip(make)
            }
            #[test]
            fn snapshot_streams_the_same_bytes() {
                suite::snapshot_streams_the_same_bytes(make)
            }
            #[test]
            fn false_positive_rate() {
                suite::false_positive_rate(make)
            }
            proptest! {
                #![proptest_config(ProptestConfig::with_cases(64))]
                #[test]
                fn agrees_with_model(ops in suite::ops()) {
                    suite::model(make, &ops)?;
                }
            }
        }
    };
}
