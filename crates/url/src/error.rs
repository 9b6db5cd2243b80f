//! Typed errors for URL parsing.

/// Why a text could not be turned into a crawlable canonical URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// The input was empty or only whitespace.
    #[error("empty URL")]
    Empty,
    /// The scheme is not `http` or `https`.
    #[error("unsupported scheme {scheme:?}: only http and https are crawlable")]
    UnsupportedScheme {
        /// The scheme found.
        scheme: String,
    },
    /// The canonical form is longer than the configured limit.
    #[error("URL is {len} bytes after canonicalisation, over the limit of {limit}")]
    TooLong {
        /// Length of the canonical form in bytes.
        len: usize,
        /// The configured limit.
        limit: usize,
    },
    /// The URL has no host.
    #[error("URL has no host")]
    MissingHost,
    /// WHATWG parsing failed (bad port, bad IDNA, invalid characters, ...).
    #[error("invalid URL: {reason}")]
    Invalid {
        /// What the parser reported.
        reason: String,
    },
}
