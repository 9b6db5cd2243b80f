//! Canonical URLs for MillionGazillion.
//!
//! Every URL that enters the seen-set or the frontier goes through
//! [`CanonicalUrl::parse`] first, so that two spellings of one resource map to
//! one key. See the crate README for the policy rules.
#![warn(missing_docs)]

mod canonical;
mod error;
mod policy;

pub use canonical::CanonicalUrl;
pub use error::UrlError;
pub use policy::Policy;
