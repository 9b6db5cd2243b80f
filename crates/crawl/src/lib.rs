//! The MillionGazillion crawler: fetches pages politely from the PowerCache
//! frontier, extracts links and keywords, stores pages in SQLite.
#![warn(missing_docs)]

pub mod config;
mod error;
pub mod extract;
pub mod fetch;
pub mod gate;
pub mod net;
pub mod robots;
pub mod sitemap;
pub mod stats;
pub mod store;
pub mod terms;
pub mod traps;
pub mod warc;

pub use error::CrawlError;

/// The default `User-Agent`: names the project and a contact placeholder.
pub const DEFAULT_USER_AGENT: &str =
    "mgz/0.1 (MillionGazillion crawler; +https://example.invalid/milliongazillion/crawler)";
