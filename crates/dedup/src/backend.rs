//! Choosing the seen-set behind `--seen`, through the `mgz-seen` registry.
//!
//! | `--seen` | registry backend | guarantee |
//! |---|---|---|
//! | `compact` (default) | `compact` | exact |
//! | `fingerprint` | `fingerprint` | false positives ≤ `--fpr` (backend default 2^-36) |
//! | `bloom` with `--expected N` | `bloom` (blocked, sized for N) | false positives ≤ `--fpr` up to N lines |
//! | `bloom` without `--expected` | `bloom-scalable` | false positives ≤ `--fpr` at any size |
//! | `hash` | `hash` | exact |
//!
//! A dedupe tool rarely knows its input size in advance, so a bare `bloom`
//! is the scalable variant: a fixed filter overfilled past its N would let its
//! false-positive rate climb without bound, silently dropping lines.
//! A false positive of a probabilistic backend drops a line that was new.
//!
//! `fingerprint` without `--expected` is sized for [`FINGERPRINT_CAPACITY`]
//! lines. Guessing high is cheap and guessing low is not: `n` keys in a set
//! sized for `C >= n` pay `log2(C/n)` extra bits each, while every generation
//! past `C` stores its keys with 5 more bits (its rate is 32x tighter). So
//! 2^24 costs at most 1 extra bit per line from 8M to 16M lines, and a small
//! input pays a few bits per line (bytes in total).
//!
//! Both are the registry's split forms (`fingerprint-parts`,
//! `compact-parts`: [`mgz_seen::parted`], 64 parts): `fingerprint` routed by
//! key hash, so its merges double only 1/64 of the set at a time, which keeps
//! peak memory near the final size; `compact` routed by host so that a host's
//! URLs still compress together. `compact`'s parts merge on a background
//! thread ([`Parted::compact_background`]): the calling thread looks up,
//! buffers and freezes while the other core merges, which took the 10M-line
//! synthetic list from ~16 s to ~8.5 s of wall time at the same peak RSS
//! (docs/BENCHMARKS.md, "mgz dedup", session 11).

use mgz_seen::fingerprint::DEFAULT_EPSILON;
use mgz_seen::parted::Parted;
use mgz_seen::{BackendOptions, SeenSet};

use crate::DedupError;

/// Backend names `--seen` accepts.
pub const BACKENDS: &[&str] = &["compact", "fingerprint", "bloom", "hash"];

/// First-slice size of the scalable bloom when `--expected` is not given.
const SCALABLE_FIRST_SLICE: usize = 1 << 20;

/// Capacity of `fingerprint` when `--expected` is not given (see above).
pub const FINGERPRINT_CAPACITY: usize = 1 << 24;

/// Most threads a `compact` batch is spread over (its parts are
/// independent sets; see [`mgz_seen::parted`]).
pub const COMPACT_THREADS: usize = 4;

/// Sizing hints for probabilistic and pre-sized backends.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct SeenOptions {
    /// Expected number of distinct lines (`--expected`).
    pub expected: Option<u64>,
    /// Target false-positive rate per lookup (`--fpr`).
    pub fpr: Option<f64>,
}

impl SeenOptions {
    /// Options with the given hints.
    pub fn new(expected: Option<u64>, fpr: Option<f64>) -> Self {
        SeenOptions { expected, fpr }
    }
}

/// Builds an empty set of backend `name`.
pub fn open(name: &str, opts: &SeenOptions) -> Result<Box<dyn SeenSet>, DedupError> {
    if let Some(p) = opts.fpr
        && !(p > 0.0 && p < 1.0)
    {
        return Err(DedupError::BadOptions {
            reason: format!("--fpr must be in (0, 1), got {p}"),
        });
    }
    if !BACKENDS.contains(&name) {
        return Err(DedupError::UnknownBackend {
            name: name.to_string(),
            known: BACKENDS.join(", "),
        });
    }
    let expected = opts
        .expected
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let registry_name = match (name, expected) {
        ("bloom", None) => "bloom-scalable",
        _ => name,
    };
    let backend_opts = BackendOptions {
        expected: expected.unwrap_or(SCALABLE_FIRST_SLICE).max(1),
        fpr: opts.fpr,
    };
    match name {
        "compact" | "fingerprint" => partitioned(name, expected, opts.fpr),
        _ => Ok(mgz_seen::backend(registry_name, &backend_opts)?),
    }
}

/// `compact` and `fingerprint`, split into hash-routed parts (module docs).
fn partitioned(
    name: &str,
    expected: Option<usize>,
    fpr: Option<f64>,
) -> Result<Box<dyn SeenSet>, DedupError> {
    Ok(match name {
        "compact" => {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            Box::new(Parted::compact_background().with_threads(threads.min(COMPACT_THREADS)))
        }
        "fingerprint" => Box::new(Parted::fingerprint(
            expected.unwrap_or(FINGERPRINT_CAPACITY),
            fpr.unwrap_or(DEFAULT_EPSILON),
        )?),
        _ => {
            return Err(DedupError::UnknownBackend {
                name: name.to_string(),
                known: BACKENDS.join(", "),
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_is_known() {
        for name in BACKENDS {
            let mut set = open(name, &SeenOptions::default()).unwrap();
            assert!(set.insert(b"x"));
            assert!(!set.insert(b"x"));
        }
    }

    #[test]
    fn bloom_without_expected_is_scalable() {
        let sized = open("bloom", &SeenOptions::new(Some(1000), Some(0.01))).unwrap();
        let open_ended = open("bloom", &SeenOptions::new(None, Some(0.01))).unwrap();
        assert!(sized.heap_bytes() < open_ended.heap_bytes());
    }

    #[test]
    fn bad_names_and_rates_are_refused() {
        assert!(matches!(
            open("xtrie", &SeenOptions::default()),
            Err(DedupError::UnknownBackend { .. })
        ));
        for p in [0.0, 1.0, -0.5, f64::NAN] {
            let err = open("hash", &SeenOptions::new(None, Some(p)));
            assert!(matches!(err, Err(DedupError::BadOptions { .. })), "{p}");
        }
    }
}
