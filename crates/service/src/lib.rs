//! The crawler-commons URLFrontier 2.6 gRPC API served from `mgz-frontier`.
#![warn(missing_docs)]

pub mod backend;
mod error;
pub mod logging;
pub mod metrics;
pub mod rpc;

pub use backend::{FrontierBackend, Gauges};
pub use error::ServiceError;

/// Messages, client and server generated from `proto/urlfrontier.proto`.
#[allow(missing_docs, clippy::all)]
pub mod proto {
    tonic::include_proto!("urlfrontier");
}
