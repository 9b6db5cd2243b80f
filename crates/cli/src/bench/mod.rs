//! `mgz bench ...`: measurements run in one process, with the counting
//! allocator ([`crate::alloc`]) installed.

use std::process::ExitCode;

mod baseline;
mod clock;
mod frontier;
pub mod r#gen;
mod keys;
mod peers;
mod probes;
mod report;
mod seen;

/// Arguments of `mgz bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: BenchCommand,
}

/// What to measure.
#[derive(clap::Subcommand)]
enum BenchCommand {
    /// Seen-set backends side by side on the same URLs: memory, insert and lookup time, errors.
    Seen(seen::SeenArgs),
    /// PowerCache: put (50% duplicates), get + complete, close and reopen.
    Frontier(frontier::FrontierArgs),
}

/// Runs one benchmark.
pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    crate::alloc::enable();
    match args.command {
        BenchCommand::Seen(a) => seen::run(a),
        BenchCommand::Frontier(a) => frontier::run(a),
    }
}
