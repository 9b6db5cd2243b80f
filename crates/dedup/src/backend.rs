//! Choosing the seen-set behind `--seen`.
//!
//! NOTE: until the backend registry of `mgz-seen` lands, only `hash` is
//! available here; the other names are recognised and refused with a clear
//! error.

use mgz_seen::SeenSet;
use mgz_seen::hash::HashSeen;

use crate::DedupError;

/// Backend names `--seen` accepts.
pub const BACKENDS: &str = "compact, fingerprint, bloom, hash";

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
    match name {
        "hash" => Ok(Box::new(HashSeen::new())),
        _ => Err(DedupError::UnknownBackend {
            name: name.to_string(),
            known: "hash",
        }),
    }
}
