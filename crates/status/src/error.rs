//! Typed errors of the status server.

use std::net::SocketAddr;

/// Why the status server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatusError {
    /// The address is not loopback and public binding was not allowed.
    #[error(
        "refusing to serve the status page on non-loopback address {addr}: \
         it shows crawl internals; allow it explicitly"
    )]
    NotLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// Binding the listener failed.
    #[error("binding status server to {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
}
