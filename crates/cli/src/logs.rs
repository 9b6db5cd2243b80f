//! Log output of commands that have no log control of their own (`mgz crawl`).
//!
//! One `tracing` subscriber on stderr, filtered by `RUST_LOG` (default:
//! warnings and errors). `try_init` also installs tracing-log's `LogTracer`
//! (tracing-subscriber's default `tracing-log` feature), so crates that log
//! through the `log` crate — fjall reporting journal recovery — come out
//! through the same subscriber. `mgz serve` installs its own subscriber
//! (`mgz_service::LogControl`, same bridge) so `SetLogLevel` can turn it.
//!
//! The store's first error is also kept ([`first_store_error`]): when one of
//! fjall's workers fails (a table that cannot be written on a full disk),
//! fjall logs the cause and then refuses every write with a bare
//! "poisoned"; the command's last line names the cause from here. The
//! frontier's own background writes (moving the discovery log, sealing a
//! segment) log their failures at error level too: fjall poisons itself
//! on some failed writes without logging them (a journal append, a clear),
//! and no caller waits for those writes to report the cause.

use std::sync::Mutex;

use tracing::field::{Field, Visit};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// The first error event the store's crates logged, if any.
static FIRST_STORE_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Installs the subscriber; a second call (or an embedding that already has
/// one) is left alone.
pub fn install(default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(fmt)
        .with(StoreErrors)
        .try_init();
}

/// The first error the store (fjall and its LSM trees) logged in this
/// process, as its message.
pub fn first_store_error() -> Option<String> {
    FIRST_STORE_ERROR
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Whether events of `target` come from the store's crates (fjall, its
/// LSM trees, and the frontier on them).
fn is_store(target: &str) -> bool {
    ["fjall", "lsm_tree", "mgz_frontier"].iter().any(|c| {
        (target.strip_prefix(c)).is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

/// Keeps the first store error (see the module docs).
struct StoreErrors;

impl<S: tracing::Subscriber> Layer<S> for StoreErrors {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if *meta.level() != tracing::Level::ERROR || !is_store(meta.target()) {
            return;
        }
        let mut first = FIRST_STORE_ERROR.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            let mut message = Message(String::new());
            event.record(&mut message);
            *first = Some(message.0);
        }
    }
}

/// The `message` field of an event.
struct Message(String);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0 = value.to_string();
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_stores_crates_count() {
        assert!(is_store("fjall"));
        assert!(is_store("fjall::worker_pool"));
        assert!(is_store("lsm_tree::compaction"));
        assert!(!is_store("fjallish"));
        assert!(is_store("mgz_frontier::dlog"));
        assert!(!is_store("mgz_crawl::run"));
        assert!(!is_store("mgz_frontiers"));
    }

    /// The first store error is kept, later ones and other targets are not.
    #[test]
    fn the_first_store_error_is_kept() {
        let subscriber = tracing_subscriber::registry().with(StoreErrors);
        tracing::subscriber::with_default(subscriber, || {
            tracing::error!(target: "mgz_crawl::run", "not the store");
            tracing::warn!(target: "fjall::journal", "a warning");
            tracing::error!(target: "fjall::worker_pool", "Worker #2 crashed: no space");
            tracing::error!(target: "fjall::db", "later");
        });
        assert_eq!(
            first_store_error().as_deref(),
            Some("Worker #2 crashed: no space")
        );
    }
}
