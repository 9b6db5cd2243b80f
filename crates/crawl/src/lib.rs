//! The MillionGazillion crawler: fetches pages politely from the PowerCache
//! frontier, extracts links and keywords, stores pages in SQLite.
#![warn(missing_docs)]

pub mod body_budget;
pub mod budget;
pub mod config;
mod discover;
pub mod edge;
mod error;
pub mod extract;
pub mod fetch;
pub mod gate;
pub mod health;
pub mod known;
pub mod net;
pub mod pace;
pub mod pinned;
mod progress;
pub mod queue;
pub mod robots;
pub mod robots_cache;
mod robots_fetch;
pub mod robots_store;
pub mod run;
pub mod seeds;
pub mod sitemap;
pub mod sockets;
mod state_file;
pub mod stats;
pub mod status;
pub mod store;
mod swar;
pub mod terms;
pub mod traps;
pub mod warc;
pub mod warc_tail;
mod worker;

pub use config::{CrawlConfig, Sitemaps};
pub use error::CrawlError;
pub use run::crawl;
pub use stats::Summary;
pub use worker::MAX_RETRIES;

/// The default `User-Agent`: names the project and a contact placeholder.
pub const DEFAULT_USER_AGENT: &str =
    "mgz/0.1 (MillionGazillion crawler; +https://example.invalid/milliongazillion/crawler)";
