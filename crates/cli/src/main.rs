//! `mgz`: the MillionGazillion command line. Thin: parse arguments, call a
//! library, print.

use clap::{Parser, Subcommand};

mod bench_frontier;
mod crawl_cmd;
mod demo;
mod search_cmd;
mod sim_cmd;
mod url_cmd;

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
    /// The synthetic web: serve it, print its seeds, ground truth or a URL stream.
    Sim(sim_cmd::SimArgs),
    /// Canonicalise URLs or compute SURT keys, one per line.
    Url(url_cmd::UrlArgs),
    /// Crawl from seed URLs: polite, resumable, pages into SQLite.
    Crawl(Box<crawl_cmd::CrawlArgs>),
    /// Search the pages of a crawl database (BM25).
    Search(search_cmd::SearchArgs),
    /// Benchmarks: `mgz bench frontier` measures PowerCache.
    Bench(bench_frontier::BenchArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Sim(args) => sim_cmd::run(args),
        Command::Url(args) => url_cmd::run(args),
        Command::Crawl(args) => crawl_cmd::run(*args),
        Command::Search(args) => search_cmd::run(args),
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
