//! The one error type of `mgz-service`.

use std::net::SocketAddr;

/// What can go wrong while starting, serving or talking to the frontier.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// The listening socket could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The TLS certificate or key could not be read or used.
    #[error("TLS setup: {0}")]
    Tls(String),
    /// The gRPC transport failed.
    #[error("gRPC transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// A request was well formed as protobuf but makes no sense (bad URL, bad key).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The URL or queue asked about is not in the frontier.
    #[error("not found: {0}")]
    NotFound(String),
    /// The frontier store failed; the request may be retried.
    #[error("frontier store: {0}")]
    Store(String),
    /// The log filter could not be changed.
    #[error("log level: {0}")]
    LogLevel(String),
    /// Any other I/O failure.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
}

impl From<ServiceError> for tonic::Status {
    fn from(err: ServiceError) -> Self {
        match err {
            ServiceError::InvalidArgument(msg) => tonic::Status::invalid_argument(msg),
            ServiceError::NotFound(msg) => tonic::Status::not_found(msg),
            ServiceError::Store(msg) => tonic::Status::unavailable(msg),
            other => tonic::Status::internal(other.to_string()),
        }
    }
}

impl From<mgz_frontier::FrontierError> for ServiceError {
    fn from(err: mgz_frontier::FrontierError) -> Self {
        use mgz_frontier::FrontierError as F;
        match err {
            F::NotFound(url) => ServiceError::NotFound(url),
            e @ F::UnknownQueue { .. } => ServiceError::NotFound(e.to_string()),
            F::InvalidArgument(msg) => ServiceError::InvalidArgument(msg),
            other => ServiceError::Store(other.to_string()),
        }
    }
}
