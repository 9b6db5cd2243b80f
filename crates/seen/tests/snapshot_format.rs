//! The snapshot bytes are a stored format (the frontier's `seen.snap`):
//! these checksums were taken from the `Vec`-building writers before the
//! streaming ones replaced them (mgz-seen at 67fd007), so any change to
//! the bytes, whether written by `snapshot()` or streamed, fails here.

use mgz_seen::fingerprint::{DEFAULT_EPSILON, FingerprintSet};
use mgz_seen::{BackendOptions, SeenSet, backend};
use xxhash_rust::xxh3::xxh3_64;

/// A deterministic set of backend `name` (fingerprint: ε 2^-12 over 300
/// keys, so 5,000 keys make several generations, runs and a buffer).
fn filled(name: &str) -> Box<dyn SeenSet> {
    let opts = BackendOptions {
        expected: 300,
        fpr: Some(1.0 / 4096.0),
    };
    let mut s = backend(name, &opts).unwrap();
    for i in 0..5_000u32 {
        s.insert(format!("org.example.www{}/{}/{}", i % 13, i % 37, i * 7).as_bytes());
    }
    s.insert(b"");
    s
}

/// (xxh3, length) of the snapshot, checking the streamed bytes are the same.
fn digest(s: &dyn SeenSet) -> (u64, usize) {
    let bytes = s.snapshot().unwrap();
    let mut streamed = Vec::new();
    assert!(s.write_snapshot(&mut streamed).unwrap());
    assert!(streamed == bytes);
    (xxh3_64(&bytes), bytes.len())
}

#[test]
fn fingerprint_bytes_are_unchanged() {
    assert_eq!(
        digest(&*filled("fingerprint")),
        (3_487_421_507_291_284_130, 14_430)
    );
    // Default ε with a raised buffer (version 2's min_buffer field).
    let mut f = FingerprintSet::new(100_000, DEFAULT_EPSILON)
        .unwrap()
        .with_min_buffer(1000);
    for i in 0..30_000u32 {
        f.insert(format!("net.other/{i}").as_bytes());
    }
    assert_eq!(digest(&f), (2_360_535_904_934_394_749, 149_006));
}

#[test]
fn compact_bytes_are_unchanged() {
    assert_eq!(
        digest(&*filled("compact")),
        (12_331_359_997_496_574_500, 31_654)
    );
}

#[test]
fn hash_bytes_are_unchanged() {
    // One key: a HashSet's order is random, so more keys are not comparable.
    let mut h = backend("hash", &BackendOptions::default()).unwrap();
    h.insert(b"org.example/a");
    let mut want = vec![1, 1, 0, 0, 0, 0, 0, 0, 0, 13, 0, 0, 0];
    want.extend_from_slice(b"org.example/a");
    assert_eq!(h.snapshot().unwrap(), want);
    let mut streamed = Vec::new();
    assert!(h.write_snapshot(&mut streamed).unwrap());
    assert_eq!(streamed, want);
}
