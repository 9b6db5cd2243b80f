//! SetLogLevel turns the live tracing filter (its own test binary: it installs
//! the global subscriber).

use mgz_service::LogControl;
use mgz_service::proto::log_level_params::Level;
use tracing::Level as T;

#[test]
fn set_log_level_changes_the_live_filter() {
    let control = LogControl::install("warn").unwrap();
    assert!(!tracing::enabled!(target: "mgz_service::rpc", T::DEBUG));
    control.set("mgz_service.rpc", Level::Debug).unwrap();
    assert!(tracing::enabled!(target: "mgz_service::rpc", T::DEBUG));
    assert!(!tracing::enabled!(target: "mgz_frontier", T::DEBUG));
    // Records of the `log` crate (fjall's) go through the same filter.
    assert!(log::log_enabled!(target: "fjall::journal", log::Level::Warn));
    assert!(!log::log_enabled!(target: "fjall::journal", log::Level::Debug));
    control.set("fjall", Level::Debug).unwrap();
    assert!(log::log_enabled!(target: "fjall::journal", log::Level::Debug));
    control.set("", Level::Error).unwrap();
    assert!(!tracing::enabled!(target: "mgz_service::rpc", T::WARN));
    assert!(tracing::enabled!(target: "mgz_service::rpc", T::ERROR));
}
