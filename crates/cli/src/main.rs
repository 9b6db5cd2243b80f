//! `mgz`: the MillionGazillion command line. Thin: parse arguments, call a
//! library, print.

use clap::{Parser, Subcommand};

mod alloc;
mod bench;
mod demo;

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
    /// Benchmarks: `mgz bench seen` compares the seen-set backends.
    Bench(bench::BenchArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
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
