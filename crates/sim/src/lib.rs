//! `mgz-sim`: a deterministic synthetic web on loopback, with ground truth.
//!
//! Many virtual hosts (`www.site-17.sim`, `blog.site-2.sim`, `shop-3.sim`)
//! served by one HTTP/1.1 server that routes on the `Host` header. Every
//! answer is a pure function of (seed, host, path): nothing is stored, so
//! a web of any size costs one small record per host. The same functions
//! give the ground truth ([`truth`]) a crawler test compares against, and a
//! realistic URL stream for benchmarks ([`urls`]).
//!
//! ```text
//! SimConfig ──> World (hosts: features, page counts, Zipf CDF)
//!                 │
//!   (host, path) ─┴─> route() ──> Resource ──> render() ──> HTTP answer  (server.rs)
//!                                    └──────> links ──> 0-1 BFS ──> truth (truth.rs)
//! ```
//!
//! See README.md for the feature map and the exact rules of the truth.
#![warn(missing_docs)]

mod config;
mod error;
mod hash;
mod links;
mod log;
mod page;
mod render;
mod route;
mod server;
mod sim;
mod traps;
mod truth;
mod urls;
mod world;

pub use config::SimConfig;
pub use error::SimError;
pub use log::RequestRecord;
pub use render::Rendered;
pub use server::{MAX_HEADER_BYTES, SimServer, start};
pub use sim::{MAX_TARGET_LEN, Sim, SimResponse};
pub use truth::{MAX_SEGMENT_REPEATS, MAX_URL_LEN, TruthOptions, admissible};
pub use urls::{UrlStream, urls};

/// The seed URLs of the web `config` describes (empty when the config is invalid).
pub fn seeds(config: &SimConfig) -> Vec<String> {
    Sim::new(config).map(|s| s.seeds()).unwrap_or_default()
}

/// The sorted canonical URLs of the HTML pages a correct crawler fetches from
/// [`seeds`] within `max_depth` hops (empty when the config is invalid).
/// Sitemaps are not followed; see [`Sim::truth`] for more options.
pub fn truth(config: &SimConfig, max_depth: u32, obey_robots: bool) -> Vec<String> {
    let mut opts = TruthOptions::new(max_depth);
    opts.obey_robots = obey_robots;
    Sim::new(config).map(|s| s.truth(&opts)).unwrap_or_default()
}
