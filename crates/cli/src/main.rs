//! `mgz`: the MillionGazillion command line. Thin: parse arguments, call a
//! library, print.

use clap::{Parser, Subcommand};

mod alloc;
mod bench;
mod dedup_cmd;
mod demo;
mod sim_cmd;
mod url_cmd;

/// Counts bytes so `mgz bench` measures memory instead of estimating it.
#[global_allocator]
static ALLOC: alloc::Counting = alloc::Counting;

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
    /// Print the first occurrence of each line (or URL), in input order, in little memory.
    Dedup(dedup_cmd::DedupArgs),
    /// Canonicalise URLs or compute SURT keys, one per line.
    Url(url_cmd::UrlArgs),
    /// The synthetic web: serve it, print its seeds, ground truth or a URL stream.
    Sim(sim_cmd::SimArgs),
    /// Benchmarks: `mgz bench seen` compares the seen-set backends.
    Bench(bench::BenchArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Dedup(args) => dedup_cmd::run(args),
        Command::Url(args) => url_cmd::run(args),
        Command::Sim(args) => sim_cmd::run(args),
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("mgz: error: {err:#}");
            std::process::ExitCode::from(2)
        }
    }
}
