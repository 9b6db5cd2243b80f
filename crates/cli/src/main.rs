//! `mgz`: the MillionGazillion command line. Thin: parse arguments, call a
//! library, print.

use clap::{Parser, Subcommand};

mod alloc;
mod bench;
mod code_pages;
mod crawl_cmd;
mod dedup_cmd;
mod demo;
mod frontier_cmd;
mod heap;
mod logs;
mod search_cmd;
mod serve_cmd;
mod sim_cmd;
mod size_arg;
mod status_cmd;
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
    /// Crawl from seed URLs: polite, resumable, pages into SQLite.
    Crawl(Box<crawl_cmd::CrawlArgs>),
    /// Search the pages of a crawl database (BM25).
    Search(search_cmd::SearchArgs),
    /// Serve the URLFrontier 2.6 gRPC API on PowerCache.
    Serve(serve_cmd::ServeArgs),
    /// Talk to a URLFrontier server: put, get, stats, list, dump.
    Frontier(frontier_cmd::FrontierArgs),
    /// Print the first occurrence of each line (or URL), in input order, in little memory.
    Dedup(dedup_cmd::DedupArgs),
    /// The synthetic web: serve it, print its seeds, ground truth or a URL stream.
    Sim(sim_cmd::SimArgs),
    /// Totals of a stopped crawl from its state directory.
    Status(status_cmd::StatusArgs),
    /// Canonicalise URLs or compute SURT keys, one per line.
    Url(url_cmd::UrlArgs),
    /// Benchmarks: `mgz bench seen`, `mgz bench frontier`.
    Bench(bench::BenchArgs),
}

fn main() -> std::process::ExitCode {
    heap::choose();
    // A broad crawl keeps thousands of sockets; the usual soft limit of
    // 1,024 descriptors is far below the hard one (mgz_crawl::sockets).
    mgz_crawl::sockets::raise_open_file_limit();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Crawl(args) => crawl_cmd::run(*args),
        Command::Search(args) => search_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(args),
        Command::Frontier(args) => frontier_cmd::run(args),
        Command::Dedup(args) => dedup_cmd::run(args),
        Command::Sim(args) => sim_cmd::run(args),
        Command::Status(args) => status_cmd::run(args),
        Command::Url(args) => url_cmd::run(args),
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("mgz: error: {}", with_store_cause(report(&err)));
            std::process::ExitCode::from(2)
        }
    }
}

/// `line`, with the store's first logged error when the store refused the
/// write only as "poisoned" (one of fjall's workers failed earlier, say a
/// table that a full disk had no room for, and fjall returns no cause).
fn with_store_cause(line: String) -> String {
    with_cause(line, logs::first_store_error())
}

fn with_cause(line: String, store_error: Option<String>) -> String {
    match store_error {
        Some(cause) if line.contains(POISONED) => {
            format!("{line} (the store's first error: {cause})")
        }
        _ => line,
    }
}

/// What the frontier says when fjall refused a write only as "poisoned".
const POISONED: &str = mgz_frontier::STORE_POISONED;

/// The error and its causes, `: `-joined, leaving out a cause whose text the
/// message already holds: most of our error types put their source's text
/// in their own message too, and `{:#}` printed it twice ("io: No space
/// left on device (os error 28): No space left on device (os error 28)").
fn report(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.is_empty() {
            out = text;
        } else if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
    }
    out
}

#[cfg(test)]
mod report_tests {
    use super::report;
    use anyhow::Context;

    #[test]
    fn a_poisoned_store_is_reported_with_its_first_error() {
        let line = format!(
            "frontier: frontier is poisoned after a failed durable write: {}",
            super::POISONED
        );
        let cause = "Worker #2 crashed: Storage(Io(... No space left on device ...))".to_string();
        assert_eq!(
            super::with_cause(line.clone(), Some(cause.clone())),
            format!("{line} (the store's first error: {cause})")
        );
        assert_eq!(super::with_cause(line.clone(), None), line);
        let other = "page database: database or disk is full".to_string();
        assert_eq!(super::with_cause(other.clone(), Some(cause)), other);
    }

    #[test]
    fn each_cause_is_printed_once() {
        let disk = || std::io::Error::from_raw_os_error(28);
        let full = disk().to_string();
        // A source whose text is in the message (thiserror's `{0}` + #[from]).
        let err = anyhow::Error::from(mgz_crawl::CrawlError::from(disk()));
        assert_eq!(report(&err), format!("io: {full}"));
        // Context over it: the same, once.
        let err = Err::<(), _>(mgz_crawl::CrawlError::from(disk()))
            .context("opening x")
            .unwrap_err();
        assert_eq!(report(&err), format!("opening x: io: {full}"));
        // A cause not in the message is still printed.
        let err = Err::<(), _>(disk()).context("writing y").unwrap_err();
        assert_eq!(report(&err), format!("writing y: {full}"));
    }
}
