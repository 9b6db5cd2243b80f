//! Backends by name, so tools (`mgz bench seen`) and configs can pick one.
//!
//! Adding a backend is one line in [`BACKENDS`] and one arm in [`backend`].

use crate::bloom::{BlockedBloom, ClassicBloom, ScalableBloom};
use crate::compact::CompactSet;
use crate::fingerprint::{DEFAULT_EPSILON, FingerprintSet};
use crate::parted::Parted;
use crate::{SeenError, SeenSet, hash::HashSeen, tst::Tst, xtrie::XTrie};

/// Names [`backend`] accepts for the main backends, in report order.
pub const BACKENDS: &[&str] = &["hash", "xtrie", "tst", "bloom", "fingerprint", "compact"];

/// Extra names [`backend`] accepts: layout variants kept for measurement.
pub const VARIANTS: &[&str] = &[
    "bloom-classic",
    "bloom-blocked",
    "bloom-scalable",
    "fingerprint-parts",
    "compact-parts",
];

/// Sizing hints for [`backend`]; exact backends ignore them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackendOptions {
    /// How many distinct keys the set should hold at its stated guarantee.
    pub expected: usize,
    /// Target false-positive rate for probabilistic backends; `None` takes
    /// the backend's own default ([`crate::bloom::DEFAULT_FPR`] for `bloom`).
    pub fpr: Option<f64>,
}

impl Default for BackendOptions {
    fn default() -> Self {
        Self {
            expected: 1 << 20,
            fpr: None,
        }
    }
}

/// Builds the backend called `name`.
///
/// ```
/// use mgz_seen::{backend, BackendOptions, SeenError, BACKENDS};
/// for name in BACKENDS {
///     let mut set = backend(name, &BackendOptions::default()).unwrap();
///     assert!(set.insert(b"com.example/"));
///     assert!(set.contains(b"com.example/"));
/// }
/// assert!(matches!(
///     backend("nope", &BackendOptions::default()),
///     Err(SeenError::UnknownBackend { .. })
/// ));
/// ```
pub fn backend(name: &str, opts: &BackendOptions) -> Result<Box<dyn SeenSet>, SeenError> {
    let fpr = opts.fpr.unwrap_or(crate::bloom::DEFAULT_FPR);
    Ok(match name {
        "hash" => Box::new(HashSeen::new()),
        "xtrie" => Box::new(XTrie::new()),
        "tst" => Box::new(Tst::new()),
        // Classic is the default: at 10M keys and equal FPR it inserted as
        // fast as the blocked layout and looked up faster (docs/BENCHMARKS.md).
        "bloom" | "bloom-classic" => Box::new(ClassicBloom::new(opts.expected, fpr)?),
        "bloom-blocked" => Box::new(BlockedBloom::new(opts.expected, fpr)?),
        "bloom-scalable" => Box::new(ScalableBloom::new(opts.expected, fpr)?),
        "fingerprint" => Box::new(FingerprintSet::new(
            opts.expected,
            opts.fpr.unwrap_or(DEFAULT_EPSILON),
        )?),
        "compact" => Box::new(CompactSet::new()),
        "fingerprint-parts" => Box::new(Parted::fingerprint(
            opts.expected,
            opts.fpr.unwrap_or(DEFAULT_EPSILON),
        )?),
        "compact-parts" => Box::new(Parted::compact()),
        _ => {
            return Err(SeenError::UnknownBackend {
                name: name.to_string(),
                known: BACKENDS.join(", "),
            });
        }
    })
}

/// Rebuilds a set of backend `name` from bytes made by its
/// [`SeenSet::snapshot`]. Malformed bytes give [`SeenError::BadSnapshot`],
/// never a panic; a backend without a snapshot form gives the same error.
///
/// ```
/// use mgz_seen::{backend, restore, BackendOptions};
/// let mut set = backend("hash", &BackendOptions::default()).unwrap();
/// set.insert(b"com.example/a");
/// let bytes = set.snapshot().unwrap();
/// let back = restore("hash", &bytes).unwrap();
/// assert!(back.contains(b"com.example/a") && back.len() == 1);
/// assert!(restore("hash", &bytes[..bytes.len() - 1]).is_err());
/// ```
pub fn restore(name: &str, bytes: &[u8]) -> Result<Box<dyn SeenSet>, SeenError> {
    match name {
        "hash" => Ok(Box::new(HashSeen::restore(bytes)?)),
        "fingerprint" => Ok(Box::new(FingerprintSet::restore(bytes)?)),
        "compact" => Ok(Box::new(CompactSet::restore(bytes)?)),
        "fingerprint-parts" | "compact-parts" | "hash-parts" => {
            let inner = name.trim_end_matches("-parts");
            Ok(Box::new(Parted::restore(inner, bytes)?))
        }
        _ => Err(SeenError::BadSnapshot {
            backend: name.to_string(),
            reason: "this backend has no snapshot form".into(),
        }),
    }
}
