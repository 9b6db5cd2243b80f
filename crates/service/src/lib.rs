//! The crawler-commons URLFrontier 2.6 gRPC API served from `mgz-frontier`
//! (PowerCache): what `mgz serve` runs.
//!
//! ```text
//!  client ──gRPC/HTTP2 (TLS?)──▶ TokenCheck ──▶ rpc::FrontierService ──spawn_blocking──▶ FrontierBackend
//!                                 (auth.rs)      params: defaults made explicit          (powercache.rs:
//!                                                pipeline: put streams, chunked,           mgz_frontier::Frontier)
//!                                                  ≤ 8 chunks per stream waiting for group commit
//!                                 metrics.rs ◀── counters; gauges read from the store at scrape time
//! ```
//!
//! Invariants:
//! - an ack (`AckMessage`, `BatchAck`) is sent only after the store call that
//!   covers it returned, i.e. after the durable point of the frontier's policy
//!   (group commit by default); a store error acks `FAIL`, never `OK`;
//! - one ack per item, in the order received; a put stream ends once the client
//!   has half-closed and every item is acked;
//! - the server holds no URL state of its own: the only per-stream memory is
//!   the chunks in flight (≤ 8 chunks of ≤ 2048 items or 32 batches per stream).
//!
//! Wire compatibility: `proto/urlfrontier.proto` is our own text with the
//! published API's package, service, RPC and message names, field numbers and
//! types; `examples/proto_compat.rs` checks that against a copy of the published
//! file (114 items, 0 differences against URLFrontier 2.6).
#![warn(missing_docs)]

mod auth;
pub mod backend;
pub mod convert;
mod error;
pub mod json;
pub mod logging;
pub mod metrics;
mod powercache;
pub mod rpc;
pub mod server;

pub use backend::{FrontierBackend, Gauges};
pub use error::ServiceError;
pub use logging::LogControl;
pub use server::{Server, ServerConfig, shutdown_signal};

/// Messages, client and server generated from `proto/urlfrontier.proto`.
#[allow(missing_docs, clippy::all)]
pub mod proto {
    tonic::include_proto!("urlfrontier");
}
