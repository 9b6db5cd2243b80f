//! `mgz demo`.

use std::process::ExitCode;

/// Arguments of `mgz demo`.
#[derive(clap::Args)]
pub struct DemoArgs {}

/// Runs the demo. Until the synthetic web and the crawler land, says so and fails.
pub fn run(_args: DemoArgs) -> anyhow::Result<ExitCode> {
    eprintln!(
        "mgz demo: not built yet. It needs the synthetic web (mgz-sim) and the crawler \
         (mgz-crawl), which are still in progress; see README.md."
    );
    Ok(ExitCode::from(1))
}
