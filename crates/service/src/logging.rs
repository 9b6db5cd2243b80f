//! The tracing subscriber of `mgz serve` and the handle `SetLogLevel` turns.
//!
//! The filter is an `EnvFilter` behind a `reload` layer. [`LogControl`] keeps
//! the base directive and one level per target (a Rust module path, the
//! counterpart of the Java package the API speaks of) and rebuilds the filter
//! from them on each change, so later calls refine rather than replace.

use std::collections::BTreeMap;
use std::sync::Mutex;

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Registry, reload};

use crate::ServiceError;
use crate::proto::log_level_params::Level;

type Handle = reload::Handle<EnvFilter, Registry>;

/// Changes the log filter at run time.
#[derive(Debug)]
pub struct LogControl {
    handle: Option<Handle>,
    state: Mutex<Directives>,
}

#[derive(Debug, Clone)]
struct Directives {
    base: String,
    targets: BTreeMap<String, &'static str>,
}

impl Directives {
    fn render(&self) -> String {
        let mut out = self.base.clone();
        for (target, level) in &self.targets {
            out.push_str(&format!(",{target}={level}"));
        }
        out
    }
}

impl LogControl {
    /// Installs the global subscriber (stderr, `base` directives such as
    /// `"info"`). `try_init` also installs tracing-log's `LogTracer`, so
    /// crates logging through `log` (fjall: journal recovery, I/O failures)
    /// reach the same filter and output.
    pub fn install(base: &str) -> Result<Self, ServiceError> {
        let filter = EnvFilter::try_new(base).map_err(|e| ServiceError::LogLevel(e.to_string()))?;
        let (layer, handle) = reload::Layer::new(filter);
        tracing_subscriber::registry()
            .with(layer)
            .with(
                tracing_subscriber::fmt::layer()
                    .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                    .with_writer(std::io::stderr),
            )
            .try_init()
            .map_err(|e| ServiceError::LogLevel(e.to_string()))?;
        // try_init capped `log` at the base level; the reloadable filter
        // decides instead, so SetLogLevel can open fjall's debug records too.
        log::set_max_level(log::LevelFilter::Trace);
        Ok(Self::with_handle(Some(handle), base))
    }

    /// A control that records levels without a subscriber (embedding, tests).
    pub fn detached(base: &str) -> Self {
        Self::with_handle(None, base)
    }

    fn with_handle(handle: Option<Handle>, base: &str) -> Self {
        let state = Directives {
            base: base.to_owned(),
            targets: BTreeMap::new(),
        };
        Self {
            handle,
            state: Mutex::new(state),
        }
    }

    /// Sets `target` (every target when empty) to `level`.
    pub fn set(&self, target: &str, level: Level) -> Result<(), ServiceError> {
        if !target.is_empty()
            && !target
                .chars()
                .all(|c| c.is_alphanumeric() || "_:.-".contains(c))
        {
            return Err(ServiceError::InvalidArgument(format!(
                "bad log target {target:?}"
            )));
        }
        let name = level_name(level);
        let mut state = self
            .state
            .lock()
            .map_err(|_| ServiceError::LogLevel("poisoned".into()))?;
        let mut next = state.clone();
        if target.is_empty() {
            next.base = name.to_owned();
            next.targets.clear();
        } else {
            next.targets.insert(target.replace('.', "::"), name);
        }
        let filter =
            EnvFilter::try_new(next.render()).map_err(|e| ServiceError::LogLevel(e.to_string()))?;
        if let Some(handle) = &self.handle {
            handle
                .reload(filter)
                .map_err(|e| ServiceError::LogLevel(e.to_string()))?;
        }
        *state = next;
        Ok(())
    }

    /// The filter now in force, as `EnvFilter` directives.
    pub fn directives(&self) -> String {
        self.state.lock().map(|s| s.render()).unwrap_or_default()
    }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Trace => "trace",
        Level::Debug => "debug",
        Level::Info => "info",
        Level::Warn => "warn",
        Level::Error => "error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_levels_refine_the_base() {
        let c = LogControl::detached("info");
        c.set("mgz_service.rpc", Level::Debug).unwrap();
        c.set("mgz_frontier", Level::Warn).unwrap();
        assert_eq!(
            c.directives(),
            "info,mgz_frontier=warn,mgz_service::rpc=debug"
        );
        c.set("", Level::Error).unwrap();
        assert_eq!(c.directives(), "error");
    }

    #[test]
    fn rejects_targets_that_would_inject_directives() {
        let c = LogControl::detached("info");
        assert!(c.set("a,b=trace", Level::Debug).is_err());
        assert_eq!(c.directives(), "info");
    }
}
