//! Canonical URLs for MillionGazillion.
//!
//! Every URL that enters the seen-set or the frontier goes through
//! [`CanonicalUrl::parse`] first, so that two spellings of one resource map to
//! one key. From a [`CanonicalUrl`] come:
//! - [`CanonicalUrl::key_bytes`]: the seen-set key (`com.test.www/a`), see
//!   the `key` format below and the crate README;
//! - [`CanonicalUrl::queue_key`]: host or registrable domain (PSL);
//! - [`PlainUrl::check`]: the same answers without parsing, for text that is
//!   already canonical in a plain shape (the frontier's fast path);
//! - [`surt()`]: SURT keys (`com,test)/a`); [`ia::surt`] matches the Python
//!   `surt` package byte for byte on raw text.
//!
//! ```
//! use mgz_url::{CanonicalUrl, Policy, QueueKeyKind};
//! let u = CanonicalUrl::parse("https://Docs.Example.co.uk/A/%7Eb?x#top", None, &Policy::safe())?;
//! assert_eq!(u.as_str(), "https://docs.example.co.uk/A/~b?x");
//! assert_eq!(u.key_bytes(), b"uk.co.example.docs:s/A/~b?x");
//! assert_eq!(u.queue_key(QueueKeyKind::RegistrableDomain), "example.co.uk");
//! # Ok::<(), mgz_url::UrlError>(())
//! ```
//!
//! The core does no I/O and never panics on any input (fuzzed).
#![warn(missing_docs)]

mod canonical;
mod error;
pub mod ia;
mod key;
mod percent;
mod plain;
mod policy;
mod query;
mod queue;
mod surt;

pub use canonical::CanonicalUrl;
pub use error::UrlError;
pub use plain::PlainUrl;
pub use policy::Policy;
pub use queue::{QueueKeyKind, host_queue_key};
pub use surt::{SurtOptions, surt};
