//! `mgz search`: BM25 search over a crawl database.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `mgz search`.
#[derive(clap::Args, Debug)]
pub struct SearchArgs {
    /// Words to look for (all must occur).
    pub query: Vec<String>,
    /// Crawl database.
    #[arg(long, default_value = "crawl.db")]
    pub db: PathBuf,
    /// Most results shown (0: every result).
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// One JSON object per line.
    #[arg(long)]
    pub json: bool,
}

/// Runs `mgz search`.
pub fn run(args: SearchArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.db.exists(),
        "no database at {} (run mgz crawl first)",
        args.db.display()
    );
    let query = args.query.join(" ");
    // The index holds words only: a query without one (nothing, or only
    // punctuation) would list no page and say "no results", as if the
    // crawl had none.
    anyhow::ensure!(
        !mgz_crawl::store::fts_query(&query).is_empty(),
        "give words to look for: mgz search WORD... (letters or digits)"
    );
    let limit = if args.limit == 0 {
        usize::MAX
    } else {
        args.limit
    };
    let hits = mgz_crawl::store::search(&args.db, &query, limit)?;
    for h in &hits {
        if args.json {
            println!("{}", serde_json::to_string(h)?);
        } else {
            println!("{}\n  {}\n  {}\n", h.title, h.url, h.snippet);
        }
    }
    if hits.is_empty() && !args.json {
        eprintln!("no results");
    }
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
