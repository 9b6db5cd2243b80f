//! Log output of commands that have no log control of their own (`mgz crawl`).
//!
//! One `tracing` subscriber on stderr, filtered by `RUST_LOG` (default:
//! warnings and errors). `try_init` also installs tracing-log's `LogTracer`
//! (tracing-subscriber's default `tracing-log` feature), so crates that log
//! through the `log` crate — fjall reporting journal recovery — come out
//! through the same subscriber. `mgz serve` installs its own subscriber
//! (`mgz_service::LogControl`, same bridge) so `SetLogLevel` can turn it.

use tracing_subscriber::EnvFilter;

/// Installs the subscriber; a second call (or an embedding that already has
/// one) is left alone.
pub fn install(default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
