//! The crate's one error type.

/// What can go wrong when choosing or building a seen-set backend.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SeenError {
    /// No backend of that name is built into this crate.
    #[error("unknown seen-set backend {name:?} (built: {known})")]
    UnknownBackend {
        /// The name asked for.
        name: String,
        /// Comma-separated names that are built.
        known: String,
    },
    /// A false-positive rate outside the open interval (0, 1).
    #[error("false-positive rate {fpr} is not in (0, 1)")]
    InvalidFpr {
        /// The rate asked for.
        fpr: f64,
    },
    /// The expected number of keys is too large for the backend's sizing.
    #[error("expected key count {expected} is too large for backend {backend}")]
    TooLarge {
        /// The count asked for.
        expected: u64,
        /// The backend that refused.
        backend: &'static str,
    },
    /// Snapshot bytes that this build cannot restore (wrong backend or
    /// version, truncated, inconsistent).
    #[error("cannot restore a {backend} snapshot: {reason}")]
    BadSnapshot {
        /// Backend the snapshot was meant for.
        backend: String,
        /// What is wrong with it.
        reason: String,
    },
}
