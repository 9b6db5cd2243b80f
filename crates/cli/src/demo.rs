//! `mgz demo`: the synthetic web from `mgz-sim` on a free loopback port,
//! crawled end to end with loopback-scaled politeness, then the summary,
//! the seen-set cost against a `HashSet<String>` of the same URLs, and an
//! example search.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use mgz_crawl::net::ResolveRule;
use mgz_crawl::traps::Scope;
use mgz_crawl::{CrawlConfig, Sitemaps};

/// Arguments of `mgz demo`.
#[derive(clap::Args)]
pub struct DemoArgs {
    /// Keep state and database here (default: a temporary directory).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Hosts of the synthetic web.
    #[arg(long, default_value_t = 300)]
    pub hosts: u32,
    /// Pages of the synthetic web.
    #[arg(long, default_value_t = 30_000)]
    pub pages: u32,
    /// Link depth crawled.
    #[arg(long, default_value_t = 12)]
    pub max_depth: u32,
    /// Milliseconds between two requests to one host.
    #[arg(long, default_value_t = 5)]
    pub delay: u64,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Seen-set backend of the frontier (fingerprint, compact, hash, ...).
    #[arg(long, default_value = "fingerprint")]
    pub seen: String,
    /// Serve the live status page on this loopback address while the demo crawls.
    #[arg(long, value_name = "ADDR")]
    pub status: Option<std::net::SocketAddr>,
}

fn sim_config(args: &DemoArgs) -> mgz_sim::SimConfig {
    // Loopback scale: the web's Crawl-delay and stalls shrink with our delay.
    mgz_sim::SimConfig {
        hosts: args.hosts,
        pages: args.pages,
        crawl_delay_secs: 0.01,
        robots_timeout_ms: 300,
        slow_ms: 20,
        ..Default::default()
    }
}

fn crawl_config(
    args: &DemoArgs,
    sim: &mgz_sim::SimConfig,
    resolve: &str,
    dir: &Path,
) -> anyhow::Result<CrawlConfig> {
    let mut cfg = CrawlConfig {
        seeds: mgz_sim::seeds(sim),
        state_dir: dir.join("state"),
        db: dir.join("pages.db"),
        max_depth: args.max_depth,
        scope: Scope::Any,
        concurrency: 128,
        per_host: 4,
        delay: Duration::from_millis(args.delay),
        sitemaps: Sitemaps::Robots,
        robots_retry: Duration::from_secs(2),
        robots_retries: 1,
        backoff: Duration::from_millis(500),
        strict_depth: false,
        // Links cut by --max-depth are kept only where a rerun can use them.
        keep_edge: args.state.is_some(),
        seen_backend: args.seen.clone(),
        status: args.status,
        ..CrawlConfig::default()
    };
    cfg.fetch.resolve = vec![ResolveRule::parse(resolve)?];
    cfg.fetch.allow_private = true;
    cfg.fetch.read_timeout = Duration::from_secs(2);
    cfg.fetch.total_timeout = Duration::from_secs(5);
    // As `mgz crawl` keeps them: across the delay, not 30 s.
    crate::crawl_cmd::keep_idle(&mut cfg.fetch, cfg.delay, cfg.per_host);
    Ok(cfg)
}

/// Runs the demo.
pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    crate::alloc::limit_arenas();
    let temp;
    let dir = match &args.state {
        Some(d) => d.clone(),
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&dir)?;
    let sim = sim_config(&args);
    let rt = crate::crawl_cmd::crawl_runtime()?;
    let summary = rt.block_on(async {
        let server = mgz_sim::start(sim.clone(), "127.0.0.1:0".parse()?, None).await?;
        eprintln!(
            "mgz demo: synthetic web of {} hosts / {} pages on {}",
            sim.hosts,
            sim.pages,
            server.addr()
        );
        let cfg = crawl_config(&args, &sim, &server.resolve_spec(), &dir)?;
        let stop = Arc::new(AtomicBool::new(false));
        let summary = crate::crawl_cmd::on_a_worker(cfg, stop).await?;
        server.shutdown();
        anyhow::Ok(summary)
    })?;
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
        return Ok(ExitCode::SUCCESS);
    }
    crate::crawl_cmd::print_summary(&summary);
    seen_cost(&dir.join("state/frontier"), summary.seen_bytes)?;
    example_search(&dir.join("pages.db"), args.state.is_some())?;
    Ok(ExitCode::SUCCESS)
}

/// Heap bytes of a `HashSet<String>` holding `urls`: hashbrown's buckets
/// (a power of two ≥ 8/7 of the capacity, each a 24-byte `String` plus one
/// control byte) and every string's own allocation.
fn hashset_bytes(urls: &std::collections::HashSet<String>) -> usize {
    let buckets = (urls.capacity() * 8 / 7).next_power_of_two().max(4);
    buckets * (std::mem::size_of::<String>() + 1) + urls.iter().map(String::capacity).sum::<usize>()
}

fn seen_cost(frontier_dir: &Path, seen_bytes: u64) -> anyhow::Result<()> {
    let f = mgz_frontier::Frontier::open(frontier_dir, mgz_frontier::FrontierOptions::default())
        .map_err(|e| anyhow::anyhow!("reopening the frontier: {e}"))?;
    let mut urls = std::collections::HashSet::new();
    let mut start = 0;
    loop {
        let q = mgz_frontier::UrlQuery {
            start,
            size: 10_000,
            ..Default::default()
        };
        let page = f.list_urls(&q).map_err(|e| anyhow::anyhow!("{e}"))?;
        if page.is_empty() {
            break;
        }
        start += page.len() as u64;
        urls.extend(page.into_iter().map(|r| r.url));
    }
    let n = urls.len().max(1);
    let hs = hashset_bytes(&urls);
    println!(
        "seen-set cost      {} URLs: {} bytes ({:.1} B/URL) vs HashSet<String> {} bytes ({:.1} B/URL), {:.1}x",
        urls.len(),
        seen_bytes,
        seen_bytes as f64 / n as f64,
        hs,
        hs as f64 / n as f64,
        hs as f64 / seen_bytes.max(1) as f64
    );
    Ok(())
}

/// Runs and prints an example search of the demo's database at `db`. When
/// the database is in the demo's temporary directory (`kept` false), it is
/// removed when the demo exits: the command shown would then fail if copied,
/// so the output says so and how to keep it.
fn example_search(db: &Path, kept: bool) -> anyhow::Result<()> {
    let query = "politeness";
    let hits = mgz_crawl::store::search(db, query, 3)?;
    println!("\nexample: mgz search {query:?} --db {}", db.display());
    for h in hits {
        println!("  {}\n    {}\n    {}", h.title, h.url, h.snippet);
    }
    if !kept {
        println!("\n{}", TEMPORARY_NOTE);
    }
    Ok(())
}

/// Printed after the example search when the demo's state was temporary.
const TEMPORARY_NOTE: &str = "The demo's state and database were in a temporary directory, \
removed now. To keep them and search again: mgz demo --state DIR, then \
mgz search QUERY --db DIR/pages.db";
