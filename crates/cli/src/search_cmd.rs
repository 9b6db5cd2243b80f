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
    /// Most results shown.
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
    let hits = mgz_crawl::store::search(&args.db, &args.query.join(" "), args.limit)?;
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
