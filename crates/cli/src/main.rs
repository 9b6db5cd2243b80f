//! `mgz`: the MillionGazillion command line. Thin: parse arguments, call a
//! library, print.

use clap::{Parser, Subcommand};

mod bench_frontier;
mod demo;
mod frontier_cmd;
mod serve_cmd;

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
    /// Serve the URLFrontier 2.6 gRPC API from a PowerCache state directory.
    Serve(serve_cmd::ServeArgs),
    /// Talk to a URLFrontier server: put, get, stats, list-queues, list-urls, dump.
    Frontier(frontier_cmd::FrontierArgs),
    /// Benchmarks: `mgz bench frontier` measures PowerCache.
    Bench(bench_frontier::BenchArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Frontier(args) => frontier_cmd::run(args),
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
