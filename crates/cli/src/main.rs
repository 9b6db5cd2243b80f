//! `mgz`: the MillionGazillion command line. Thin: parse arguments, call a
//! library, print.

use clap::{Parser, Subcommand};

mod bench_frontier;
mod demo;

/// MillionGazillion: a crawl frontier that remembers every URL in little memory.
#[derive(Parser)]
#[command(name = "mgz", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Crawl a synthetic web on loopback end to end (the first thing to run).
    Demo(demo::DemoArgs),
    /// Benchmarks: `mgz bench frontier` measures PowerCache.
    Bench(bench_frontier::BenchArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Bench(args) => bench_frontier::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("mgz: error: {err:#}");
            std::process::ExitCode::from(2)
        }
    }
}
