//! Visited-URL sets.
//!
//! Every backend implements [`SeenSet`]. Keys are opaque bytes, normally
//! `mgz_url::CanonicalUrl::key_bytes()`.
//!
//! | backend | module | guarantee | bytes per URL (formula) |
//! |---|---|---|---|
//! | `hash` | [`hash`] | exact | key + ~40 |
//! | `xtrie` | [`xtrie`] | exact, plus the seed's to-do list | 32 per new byte |
//! | `tst` | [`tst`] | exact | 16 per new byte |
//! | `bloom` | [`bloom`] | false positives <= p | 1.44 log2(1/p) / 8 |
//! | `fingerprint` | [`fingerprint`] | false positives <= ε (2^-36) | 4.84 (≈ (log2(1/ε) + 2.7) / 8) |
//! | `compact` | [`compact`] | exact, enumerable (`iter()`) | 15.3 (12.3–12.7 on real lists) |
//!
//! Pick one by name with [`backend`]; [`BACKENDS`] lists the names.
#![warn(missing_docs)]

pub mod bloom;
pub mod compact;
mod error;
pub mod fingerprint;
pub mod hash;
mod registry;
pub mod tst;
pub mod xtrie;

pub use error::SeenError;
pub use registry::{BACKENDS, BackendOptions, VARIANTS, backend, restore};

/// What a backend promises about its answers.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Guarantee {
    /// `contains` is exactly right: no false positives, no false negatives.
    Exact,
    /// No false negatives; a key never inserted is reported present with
    /// probability at most `rate` per lookup.
    FalsePositive {
        /// Upper bound on the false-positive probability per lookup.
        rate: f64,
    },
}

/// A set of byte keys that answers "seen before?".
pub trait SeenSet: Send {
    /// Inserts `key`; returns `true` when it was not present before.
    fn insert(&mut self, key: &[u8]) -> bool;
    /// Whether `key` is (probably, see [`SeenSet::guarantee`]) present.
    fn contains(&self, key: &[u8]) -> bool;
    /// Number of distinct keys inserted (for probabilistic sets: inserts that returned `true`).
    fn len(&self) -> usize;
    /// Whether no key was inserted.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Heap bytes owned by the structure.
    fn heap_bytes(&self) -> usize;
    /// What the answers guarantee.
    fn guarantee(&self) -> Guarantee;
    /// Short backend name (`hash`, `compact`, ...).
    fn name(&self) -> &'static str;
    /// Inserts many keys; `out[i]` is what `insert(keys[i])` would have returned.
    /// Backends override this when batching lets them sort or prefetch.
    fn insert_batch(&mut self, keys: &[&[u8]], out: &mut Vec<bool>) {
        out.clear();
        out.extend(keys.iter().map(|k| self.insert(k)));
    }
    /// Serialises the whole set so [`restore`] can rebuild it without the
    /// keys (the frontier reloads its seen index this way). `None` when the
    /// backend has no snapshot form: callers rebuild it from the keys instead.
    /// The bytes start with the backend's own format version; integrity
    /// (checksums) is the caller's business.
    fn snapshot(&self) -> Option<Vec<u8>> {
        None
    }
}
