//! The crawler-commons URLFrontier 2.6 gRPC API served from `mgz-frontier`.
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
