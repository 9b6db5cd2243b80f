//! The crate's error type.

/// What can go wrong when starting or running a synthetic web.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The configuration cannot describe a web (for example zero hosts).
    #[error("invalid sim config: {reason}")]
    Config {
        /// Why.
        reason: String,
    },
    /// Binding or accepting on a socket failed.
    #[error("sim server I/O error on {what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}
