//! The crawler-commons URLFrontier 2.6 gRPC API served from `mgz-frontier`
//! (PowerCache): what `mgz serve` runs.
//!
//! ```text
//!  client ──gRPC/HTTP2 (TLS?)──▶ TokenCheck ──▶ rpc::FrontierService ──spawn_blocking──▶ FrontierBackend
//!                                 (auth.rs)      params: defaults made explicit          (powercache.rs:
//!                                                pipeline: put streams; decode next chunk  mgz_frontier::Frontier)
//!                                                  while one is written, ≤ 8 wait for commit
//!                                 metrics.rs ◀── counters; gauges read from the store at scrape time
//! ```
//!
//! Invariants:
//! - an ack (`AckMessage`, `BatchAck`) is sent only after the durable wait of
//!   the store write that covers it returned, i.e. after the durable point of
//!   the frontier's policy (group commit by default); a store error acks
//!   `FAIL`, never `OK`;
//! - one ack per item, in the order received; a put stream ends once the client
//!   has half-closed and every item is acked;
//! - the server holds no URL state of its own: the only per-stream memory is
//!   the chunks in flight (one gathering, one being written, ≤ 8 waiting for
//!   a sync, each ≤ 8,192 items or 16,384 discovered URLs); a GetURLs answer
//!   holds at most three chunks of ≈ 16,384 leased URLs, whatever the backlog
//!   (`rpc::get`).
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

pub use backend::{Durable, FrontierBackend, Gauges, Written};
pub use error::ServiceError;
pub use logging::LogControl;
pub use server::{Server, ServerConfig, shutdown_signal};

/// Messages, client and server generated from `proto/urlfrontier.proto`.
#[allow(missing_docs, clippy::all)]
pub mod proto {
    tonic::include_proto!("urlfrontier");
}
