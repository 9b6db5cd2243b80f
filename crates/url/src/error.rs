//! Typed errors for URL parsing.
//!
//! Every way an input can fail to become a crawlable [`crate::CanonicalUrl`]
//! has its own variant, so that a caller can count and report failures by
//! kind (the CLI prints the `Display` text after `ERROR\t<input>\t`).

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
    /// The URL has no host (or only dots).
    #[error("URL has no host")]
    MissingHost,
    /// A relative reference was given without a base URL.
    #[error("relative URL without a base (no scheme)")]
    RelativeWithoutBase,
    /// A control character (other than tab, CR, LF, which are removed as
    /// WHATWG specifies) appears inside the URL.
    #[error("control character 0x{byte:02X} at byte {offset}")]
    ControlCharacter {
        /// The offending byte.
        byte: u8,
        /// Its offset in the input.
        offset: usize,
    },
    /// The host contains a space (raw or percent-encoded).
    #[error("whitespace inside the host")]
    WhitespaceInHost,
    /// The port is not a number in 0..=65535.
    #[error("invalid port")]
    InvalidPort,
    /// The host failed IDNA (UTS #46) processing.
    #[error("invalid internationalised domain name")]
    InvalidIdna,
    /// The host is malformed otherwise (forbidden character, bad IP literal).
    #[error("invalid host: {reason}")]
    InvalidHost {
        /// What the parser reported.
        reason: String,
    },
    /// WHATWG parsing failed for another reason.
    #[error("invalid URL: {reason}")]
    Invalid {
        /// What the parser reported.
        reason: String,
    },
    /// Bytes given to [`crate::CanonicalUrl::from_key_bytes`] are not a key.
    #[error("malformed key bytes: {reason}")]
    InvalidKey {
        /// Which part of the key format was violated.
        reason: &'static str,
    },
}
