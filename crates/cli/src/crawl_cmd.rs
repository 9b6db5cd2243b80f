//! `mgz crawl`: argument parsing and printing around `mgz_crawl::crawl`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use mgz_crawl::net::ResolveRule;
use mgz_crawl::traps::TrapLimits;
use mgz_crawl::{CrawlConfig, Sitemaps, Summary};

/// Arguments of `mgz crawl`.
#[derive(clap::Args, Debug)]
pub struct CrawlArgs {
    /// Seed URLs (depth 0).
    #[arg(value_name = "SEED")]
    pub seed: Vec<String>,
    /// File with more seed URLs, one a line (`#` starts a comment).
    #[arg(long = "seeds", visible_alias = "seeds-file", value_name = "FILE")]
    pub seeds_file: Option<PathBuf>,
    /// State directory: rerun with the same one to resume (default: a temporary directory).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// SQLite database of pages.
    #[arg(long, default_value = "crawl.db")]
    pub db: PathBuf,
    /// Deepest link depth fetched (seeds are 0).
    #[arg(long, default_value_t = 5)]
    pub max_depth: u32,
    /// Serve a live status page (`/`, `/status.json`, `/metrics`) on this loopback address.
    #[arg(long, value_name = "ADDR")]
    pub status: Option<std::net::SocketAddr>,
    /// Require this bearer token (or `?token=`) on the status page.
    #[arg(long, value_name = "TOKEN", requires = "status")]
    pub status_token: Option<String>,
    /// Stop cleanly after this many seconds, as Ctrl-C does (fetches in
    /// flight finish, everything is flushed, the summary is printed, exit 0);
    /// rerun with the same --state to go on, in another window of time
    /// (0 = no limit).
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub max_time: u64,
    /// Stop after this many page responses (0 = no limit), counting those of
    /// earlier runs with the same --state: a rerun goes on from there.
    #[arg(long, default_value_t = 0)]
    pub max_pages: u64,
    /// host | domain | any.
    #[arg(long, default_value = "host")]
    pub scope: String,
    /// Only URLs matching this regex.
    #[arg(long)]
    pub include: Option<String>,
    /// No URL matching this regex.
    #[arg(long)]
    pub exclude: Option<String>,
    /// Fetches in flight overall (at least 1).
    #[arg(long, default_value_t = 32,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub concurrency: usize,
    /// Sockets kept open for reuse at most, across all hosts (0: as many
    /// as the open-file limit allows); past it a request asks the server
    /// to close its connection. Each idle connection holds ~47 KB.
    #[arg(long, default_value_t = mgz_crawl::fetch::DEFAULT_MAX_CONNECTIONS, value_name = "N")]
    pub max_connections: usize,
    /// Fetches in flight per host (at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub per_host: u32,
    /// Milliseconds between two requests to one host (raised to Crawl-delay).
    #[arg(long, default_value_t = 1000)]
    pub delay: u64,
    /// After each response, wait at least this times the server's response
    /// time before the host's next request (at most 30 s; 0: off). A slow
    /// server is asked less often; --delay 0 turns it off too.
    #[arg(long, default_value_t = mgz_crawl::gate::DEFAULT_FACTOR, value_name = "F", value_parser = delay_factor)]
    pub delay_factor: f64,
    /// What --per-host, --delay and a 429/503 back-off apply to: host, or
    /// domain (all hosts of a registrable domain together: a.example.com
    /// and b.example.com share one delay and one in-flight cap).
    #[arg(long, default_value = "host", value_parser = ["host", "domain"])]
    pub politeness: String,
    /// User-Agent header; its first word is the robots.txt product token.
    #[arg(long, default_value = mgz_crawl::DEFAULT_USER_AGENT)]
    pub user_agent: String,
    /// Send this e-mail address as the `From` header of every request
    /// (RFC 9110 asks robots to): a site owner can then write to you rather
    /// than block the crawler. One address, e.g. `crawl-ops@example.org`.
    #[arg(long, value_name = "EMAIL")]
    pub from: Option<String>,
    /// Seen-set backend of the frontier: fingerprint (quasi-exact, 2^-36, ~5 B/URL),
    /// compact (exact, ~15 B/URL), hash, bloom, xtrie, tst.
    #[arg(long, default_value = "fingerprint")]
    pub seen: String,
    /// Canonicalisation policy: safe | aggressive.
    #[arg(long, default_value = "safe")]
    pub policy: String,
    /// Write WARC/1.1 request and response records here.
    #[arg(long)]
    pub warc: Option<PathBuf>,
    /// Map host patterns to addresses, like curl: `*.sim=127.0.0.1:8080`.
    #[arg(long)]
    pub resolve: Vec<String>,
    /// Allow loopback, private, link-local and metadata addresses.
    #[arg(long)]
    pub allow_private: bool,
    /// Send every request through this HTTP(S) proxy (`http://host:port`).
    /// Without it the crawl connects directly and ignores `http_proxy` and
    /// the like. Through a proxy the SSRF guard checks IP-literal URLs only
    /// (the proxy resolves host names) and `--resolve` does not apply.
    #[arg(long, value_name = "URL")]
    pub proxy: Option<String>,
    /// Also trust the certificate authorities in this PEM file (repeatable),
    /// on top of the built-in (Mozilla) roots: an intranet's own CA. A file
    /// that cannot be read or holds no valid certificate stops the crawl
    /// before it starts. A site whose certificate is not trusted is recorded
    /// as a `tls` error, without retries.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Vec<PathBuf>,
    /// Accept any TLS certificate (expired, self-signed, for another name),
    /// as archiving crawlers do for sites whose certificates lapsed. The
    /// connection is still encrypted, but no longer authenticated.
    #[arg(long)]
    pub insecure: bool,
    /// Do not read robots.txt.
    #[arg(long)]
    pub ignore_robots: bool,
    /// Keep no visible text: store links, title and meta tags only (an
    /// empty text column, no top terms; `mgz search` matches title,
    /// description and meta keywords). About half the CPU per page: for archiving
    /// (--warc) and link graphs (with --links).
    #[arg(long)]
    pub no_text: bool,
    /// Store each page's outgoing links in the database's `links` table
    /// (src, dst: canonical URLs), for link graphs; pages marked nofollow
    /// record none.
    #[arg(long)]
    pub links: bool,
    /// Also read /sitemap.xml of every host.
    #[arg(long, conflicts_with = "no_sitemaps")]
    pub sitemaps: bool,
    /// Read no sitemaps at all (not even those robots.txt names).
    #[arg(long)]
    pub no_sitemaps: bool,
    /// Seconds before an unreachable robots.txt (5xx, timeout) is asked again.
    #[arg(long, default_value_t = 60)]
    pub robots_retry: u64,
    /// How often an unreachable robots.txt is retried before its URLs are dropped.
    #[arg(long, default_value_t = 2)]
    pub robots_retries: u32,
    /// MiB of parsed robots.txt files kept in memory (estimated; a rule
    /// with `$` costs tens of KiB); past it, files are read back from the
    /// state's robots.db and parsed again when their host comes up.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub robots_memory: u64,
    /// MiB of response bodies held at once past each one's first 256 KiB
    /// (a fetch waits for room before its body grows further; one at a
    /// time may exceed it, so a body larger than the budget still comes).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    pub body_memory: u64,
    /// Give a host up for the run after this many network failures in a row
    /// (connect errors, timeouts) over at least five minutes; 0: never.
    #[arg(long, default_value_t = 10)]
    pub max_host_failures: u32,
    /// Seconds a crawl with only retries left waits with none due (a long
    /// Retry-After) before it ends, leaving them in --state for a later run.
    #[arg(long, default_value_t = 600)]
    pub max_retry_wait: u64,
    /// Largest response body read (decompressed), e.g. 10M, 512K (at least
    /// 1K): a longer one is cut there and its page stored with the note
    /// `truncated`. robots.txt has its own cap (500 KiB), sitemaps theirs (50 MB).
    #[arg(long, default_value = "10M", value_name = "SIZE", value_parser = body_cap)]
    pub max_body: u64,
    /// Seconds allowed for one whole request, body included.
    #[arg(long, default_value_t = 60, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
    /// Seconds allowed for a connection (TCP and TLS) to be made.
    #[arg(long, default_value_t = 10, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3_600))]
    pub connect_timeout: u64,
    /// Most URLs queued per host over the whole crawl (0 = no limit); the
    /// rest are counted as traps cut (`host_budget`).
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub max_host_urls: u64,
    /// Longest URL queued, in bytes of its canonical form.
    #[arg(long, default_value_t = 2048, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(16..=1 << 20))]
    pub max_url_length: u64,
    /// Most path segments of a URL queued (`/a/b/c` has 3).
    #[arg(long, default_value_t = 32, value_name = "N")]
    pub max_path_depth: usize,
    /// Skip breadth-first waves: faster when a few hosts hold most pages,
    /// but a page may be reached at more than its least depth.
    #[arg(long)]
    pub loose_depth: bool,
    /// Print one JSON object at the end.
    #[arg(long)]
    pub json: bool,
}

/// Most `--delay-factor` accepts: past it every slow host waits the cap.
const MAX_DELAY_FACTOR: f64 = 100.0;

/// `--delay-factor`: a number from 0 to [`MAX_DELAY_FACTOR`] (not NaN).
fn delay_factor(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if (0.0..=MAX_DELAY_FACTOR).contains(&f) => Ok(f),
        Ok(_) => Err(format!("{s:?}: from 0 to {MAX_DELAY_FACTOR}")),
        Err(e) => Err(format!("{s:?}: {e}")),
    }
}

/// `--max-body`: a size of at least 1 KiB (a smaller cap would store
/// nothing but truncated fragments).
fn body_cap(s: &str) -> Result<u64, String> {
    match crate::size_arg::parse_size(s)? {
        n if n < 1024 => Err(format!("{s:?}: at least 1K")),
        n => Ok(n),
    }
}

/// Refuses a crawl given no seed at all. A seeds file is not read here: it
/// may be a pipe (`--seeds <(…)`), readable once; the crawl refuses one with
/// no seed line before it makes anything.
fn check_seeds(args: &CrawlArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        !args.seed.is_empty() || args.seeds_file.is_some(),
        "no seed URLs: give SEED... or --seeds FILE"
    );
    Ok(())
}

fn regex(p: &Option<String>) -> anyhow::Result<Option<regex::Regex>> {
    p.as_deref()
        .map(regex::Regex::new)
        .transpose()
        .context("bad --include/--exclude regex")
}

/// Most idle connections kept per host, whatever `--per-host` says.
const MAX_IDLE_PER_HOST: usize = 16;

/// How many idle connections a crawl keeps and for how long (`mgz crawl`
/// and `mgz demo`).
///
/// Reuse a connection across the per-host delay, not much longer
/// (`fetch::IDLE_SLACK`): across thousands of hosts idle sockets (fds,
/// ~47 KB of buffers each) would otherwise pile up.
/// One idle connection per request allowed in flight (`--per-host`), up
/// to 16: with fewer, every request past the kept ones opens a new
/// connection (382 connects for 1,169 pages at `--per-host 16` with 4
/// kept), which cost 13 % of the crawl's CPU and 14 % of its wall time on
/// the PostgreSQL-docs benchmark (docs/BENCHMARKS.md, session 8). With
/// many hosts the cap hardly matters: a host keeps only as many idle
/// connections as it had requests in flight, and all hosts together
/// have at most `--concurrency`.
pub fn keep_idle(fetch: &mut mgz_crawl::fetch::FetchConfig, delay: Duration, per_host: u32) {
    fetch.idle_per_host = (per_host as usize).min(MAX_IDLE_PER_HOST);
    fetch.idle_timeout = mgz_crawl::fetch::idle_timeout(delay);
}

/// Builds the crawl configuration (state dir must be decided by the caller).
pub fn config(args: &CrawlArgs, state_dir: PathBuf) -> anyhow::Result<CrawlConfig> {
    check_seeds(args)?;
    let mut cfg = CrawlConfig {
        seeds: args.seed.clone(),
        seeds_file: args.seeds_file.clone(),
        state_dir,
        db: args.db.clone(),
        warc: args.warc.clone(),
        max_depth: args.max_depth,
        max_pages: args.max_pages,
        scope: args.scope.parse()?,
        include: regex(&args.include)?,
        exclude: regex(&args.exclude)?,
        concurrency: args.concurrency.max(1),
        per_host: args.per_host.max(1),
        delay: Duration::from_millis(args.delay),
        delay_factor: args.delay_factor,
        politeness: match args.politeness.as_str() {
            "domain" => mgz_url::QueueKeyKind::RegistrableDomain,
            _ => mgz_url::QueueKeyKind::Host,
        },
        seen_backend: args.seen.clone(),
        ignore_robots: args.ignore_robots,
        keep_text: !args.no_text,
        store_links: args.links,
        strict_depth: !args.loose_depth,
        robots_retry: Duration::from_secs(args.robots_retry),
        robots_retries: args.robots_retries,
        robots_cache_bytes: usize::try_from(args.robots_memory << 20).unwrap_or(usize::MAX),
        max_host_failures: args.max_host_failures,
        max_retry_wait: Duration::from_secs(args.max_retry_wait),
        sitemaps: match (args.sitemaps, args.no_sitemaps) {
            (true, _) => Sitemaps::RobotsAndGuess,
            (_, true) => Sitemaps::Off,
            _ => Sitemaps::Robots,
        },
        status: args.status,
        status_token: args.status_token.clone(),
        after_setup: Some(release_code_pages),
        ..CrawlConfig::default()
    };
    cfg.policy = match args.policy.as_str() {
        "safe" => mgz_url::Policy::safe(),
        "aggressive" => mgz_url::Policy::aggressive(),
        other => anyhow::bail!("--policy {other:?}: expected safe or aggressive"),
    };
    cfg.traps = TrapLimits {
        max_url_len: usize::try_from(args.max_url_length).unwrap_or(usize::MAX),
        max_path_depth: args.max_path_depth,
        host_budget: match args.max_host_urls {
            0 => u64::MAX,
            n => n,
        },
        ..TrapLimits::default()
    };
    cfg.fetch.max_body = usize::try_from(args.max_body).unwrap_or(usize::MAX);
    cfg.fetch.max_connections = args.max_connections;
    cfg.fetch.total_timeout = Duration::from_secs(args.timeout);
    cfg.lease = mgz_crawl::config::lease_for(cfg.delay, cfg.fetch.total_timeout);
    cfg.fetch.connect_timeout = Duration::from_secs(args.connect_timeout);
    cfg.fetch.user_agent = args.user_agent.clone();
    cfg.fetch.allow_private = args.allow_private;
    cfg.fetch.proxy = args.proxy.clone();
    cfg.fetch.ca_certs = args.ca_cert.clone();
    cfg.fetch.accept_invalid_certs = args.insecure;
    cfg.fetch.from = args.from.clone();
    cfg.fetch.body_budget = usize::try_from(args.body_memory << 20).unwrap_or(usize::MAX);
    keep_idle(
        &mut cfg.fetch,
        Duration::from_millis(args.delay),
        args.per_host,
    );
    cfg.fetch.resolve = args
        .resolve
        .iter()
        .map(|r| ResolveRule::parse(r))
        .collect::<Result<_, _>>()?;
    Ok(cfg)
}

/// Drops the start-up code pages once the crawl is set up (see
/// [`crate::code_pages`]). `crates/cli/link/profile.sh` splits its callgrind
/// counts into set-up and crawl where this function is entered, by its
/// name: keep it a function of its own under this name.
fn release_code_pages() {
    crate::code_pages::release();
}

/// Blocking threads of a crawl's runtime: frontier calls and page parses.
/// Parses are limited to one per core by the crawler; frontier calls are
/// short (no fsync: OS-buffer durability). More threads than this bought no
/// speed and cost memory (stacks, one malloc arena each).
pub const BLOCKING_THREADS: usize = 8;

/// The tokio runtime a crawl runs on: one worker per core (the default) and
/// [`BLOCKING_THREADS`] instead of tokio's 512.
pub fn crawl_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(BLOCKING_THREADS)
        .enable_all()
        .build()
}

/// How often a crawl gives memory it no longer uses back to the OS:
/// glibc's free heap pages ([`crate::alloc::trim`]) and the executable's code
/// pages, which fault back in as they run ([`crate::code_pages::release_again`]).
/// Page bodies, parser buffers and rows come and go by the thousand; the
/// holes they leave kept ~6 MB free inside the arenas at the end of the
/// 1,169-page benchmark crawl against ~2.3 MB in use (`mallinfo2`), and RSS
/// grew with them. A trim walks the arenas once, a release zaps the code's
/// page-table entries (each well under a millisecond here); the peak RSS of
/// that crawl fell by ~0.6 and ~0.9 MB, CPU unchanged (docs/BENCHMARKS.md).
/// The first gap; later ones grow with a round's cost ([`housekeeping_gap`]).
pub const HOUSEKEEPING_EVERY: Duration = Duration::from_millis(100);

/// Longest gap between two housekeeping rounds (see [`housekeeping_gap`]).
pub const HOUSEKEEPING_MAX: Duration = Duration::from_secs(10);

/// The gap before the next round after one that took `cost`: at least
/// [`HOUSEKEEPING_EVERY`], and 100 times the round's cost, so housekeeping
/// takes at most ~1 % of a core even when a large crawl's heap makes a trim
/// slow (up to [`HOUSEKEEPING_MAX`]).
pub fn housekeeping_gap(cost: Duration) -> Duration {
    (cost * 100).clamp(HOUSEKEEPING_EVERY, HOUSEKEEPING_MAX)
}

/// Rounds of housekeeping: trim the heap (unless `MGZ_MALLOC=default` keeps
/// glibc's behaviour) and release the code pages again.
async fn housekeeping() {
    let trim = crate::alloc::tuned();
    let mut gap = HOUSEKEEPING_EVERY;
    loop {
        tokio::time::sleep(gap).await;
        let started = std::time::Instant::now();
        if trim {
            crate::alloc::trim();
        }
        crate::code_pages::release_again();
        gap = housekeeping_gap(started.elapsed());
    }
}

/// Runs `cfg` on a fresh runtime; Ctrl-C or SIGTERM (what `docker stop`,
/// systemd and Kubernetes send) stops cleanly, a second one exits at once.
///
/// With `max_time`, the crawl is stopped as by a Ctrl-C once that much time
/// has passed (`--max-time`).
pub fn run_crawl(cfg: CrawlConfig, max_time: Option<Duration>) -> anyhow::Result<Summary> {
    let rt = crawl_runtime()?;
    rt.block_on(async move {
        tokio::spawn(housekeeping());
        let stop = Arc::new(AtomicBool::new(false));
        if let Some(limit) = max_time {
            let flag = stop.clone();
            tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                eprintln!(
                    "mgz crawl: --max-time {} s reached: stopping (in-flight fetches finish; rerun with the same --state to go on)",
                    limit.as_secs()
                );
                flag.store(true, Ordering::Relaxed);
            });
        }
        let flag = stop.clone();
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::spawn(async move {
            if stop_signal(&mut term).await.is_some() {
                eprintln!(
                    "\nmgz crawl: stopping (in-flight fetches finish; Ctrl-C again to abort)"
                );
                flag.store(true, Ordering::Relaxed);
                if let Some(code) = stop_signal(&mut term).await {
                    std::process::exit(i32::from(code));
                }
            }
        });
        on_a_worker(cfg, stop).await
    })
}

/// Runs the crawl as a task of the runtime, not on the thread that called
/// `block_on`: its dispatcher and the fetch tasks it spawns then wake each
/// other through the workers' own queues instead of across threads (the
/// calling thread made a third of the crawl's futex calls). A small gain:
/// the 1,169-page nginx crawl's CPU 0.44 → 0.43 s, wall 0.26 s both
/// (medians of 20 pairs, `crates/crawl/bench/ab.sh`; docs/BENCHMARKS.md,
/// session 50).
pub async fn on_a_worker(cfg: CrawlConfig, stop: Arc<AtomicBool>) -> anyhow::Result<Summary> {
    let crawl = tokio::spawn(mgz_crawl::crawl(cfg, stop));
    Ok(crawl
        .await
        .map_err(|e| anyhow::anyhow!("crawl task: {e}"))??)
}

/// The next Ctrl-C or SIGTERM, as the exit code a shell gives a process
/// killed by it (130, 143); `None` if signals cannot be received.
async fn stop_signal(term: &mut tokio::signal::unix::Signal) -> Option<u8> {
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.is_ok().then_some(130),
        r = term.recv() => r.map(|()| 143),
    }
}

/// The traps count, with the limits that cut any: `12 (host_budget=9
/// url_length=3)`, so the flag to change is plain.
fn traps_cut(s: &Summary) -> String {
    let kinds: Vec<String> = (s.traps_by_kind.iter())
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    match kinds.is_empty() {
        true => s.traps_cut.to_string(),
        false => format!("{} ({})", s.traps_cut, kinds.join(" ")),
    }
}

/// Prints the summary for humans.
pub fn print_summary(s: &Summary) {
    println!("pages fetched      {}", s.pages_fetched);
    println!("pages stored       {}", s.pages_stored);
    println!("bytes              {}", s.bytes);
    println!("duplicates skipped {}", s.duplicates_skipped);
    println!("robots excluded    {}", s.robots_excluded);
    println!("traps cut          {}", traps_cut(s));
    let errors: Vec<String> = s.errors.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!(
        "errors             {}",
        if errors.is_empty() {
            "none".into()
        } else {
            errors.join(" ")
        }
    );
    println!(
        "elapsed            {:.1} s ({:.0} pages/s)",
        s.elapsed_s, s.pages_per_s
    );
    println!("peak RSS           {:.1} MB", s.peak_rss_bytes as f64 / 1e6);
    println!(
        "seen set           {} ({} bytes)",
        s.seen_backend, s.seen_bytes
    );
    if s.edge_links > 0 {
        println!(
            "links kept         {} past --max-depth (a rerun with a larger --max-depth follows them)",
            s.edge_links
        );
    }
}

/// With `MGZ_DEBUG_RSS=FILE` set, copies `/proc/self/smaps` (what each
/// mapping holds resident, and `VmHWM` via `status` appended) to FILE at the
/// end of the crawl: how the peak RSS of the wget2 benchmark was taken apart.
fn dump_smaps() {
    let Some(path) = std::env::var_os("MGZ_DEBUG_RSS") else {
        return;
    };
    let read = |p| std::fs::read_to_string(p).unwrap_or_default();
    let text = read("/proc/self/smaps") + &read("/proc/self/status") + &malloc_stats();
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!("mgz crawl: MGZ_DEBUG_RSS: {e}");
    }
}

/// glibc's arena statistics as one line (empty on other C libraries).
fn malloc_stats() -> String {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: mallinfo2 only reads glibc's arena statistics.
        let mi = unsafe { libc::mallinfo2() };
        format!(
            "mallinfo2 arena={} mmap={} in_use={} free={} top_pad={}\n",
            mi.arena, mi.hblkhd, mi.uordblks, mi.fordblks, mi.keepcost
        )
    }
    #[cfg(not(target_env = "gnu"))]
    String::new()
}

/// Runs `mgz crawl`.
pub fn run(args: CrawlArgs) -> anyhow::Result<ExitCode> {
    crate::alloc::limit_arenas();
    crate::logs::install("warn");
    let temp;
    let state = match &args.state {
        Some(d) => d.clone(),
        None => {
            temp = tempfile::tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let mut cfg = config(&args, state)?;
    // Links cut by --max-depth are kept only where a rerun can use them.
    cfg.keep_edge = args.state.is_some();
    let max_time = (args.max_time > 0).then(|| Duration::from_secs(args.max_time));
    let summary = run_crawl(cfg, max_time)?;
    dump_smaps();
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print_summary(&summary);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use mgz_crawl::fetch::FetchConfig;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CrawlArgs,
    }

    fn seeds_of(argv: &[&str]) -> Vec<String> {
        let cli = Cli::try_parse_from(argv).unwrap();
        let cfg = config(&cli.args, PathBuf::from("state")).unwrap();
        let mut seeds = mgz_crawl::seeds::Seeds::open(&cfg, None).unwrap();
        seeds.next_texts(100).unwrap()
    }

    #[test]
    fn housekeeping_takes_at_most_a_hundredth_of_the_time() {
        let ms = Duration::from_millis;
        assert_eq!(housekeeping_gap(ms(0)), HOUSEKEEPING_EVERY);
        assert_eq!(
            housekeeping_gap(Duration::from_micros(300)),
            HOUSEKEEPING_EVERY
        );
        assert_eq!(housekeeping_gap(ms(5)), ms(500));
        assert_eq!(housekeeping_gap(ms(500)), HOUSEKEEPING_MAX);
    }

    #[test]
    fn retry_host_failure_text_proxy_and_memory_flags_reach_the_config() {
        let parse = |argv: &[&str]| {
            let cli = Cli::try_parse_from(argv).unwrap();
            config(&cli.args, PathBuf::from("state")).unwrap()
        };
        let default = parse(&["mgz", "http://a.test/"]);
        assert_eq!(default.max_host_failures, 10);
        assert_eq!(default.max_retry_wait, Duration::from_secs(600));
        assert!(default.keep_text);
        assert!(!default.store_links);
        let set = parse(&[
            "mgz",
            "http://a.test/",
            "--max-host-failures",
            "0",
            "--max-retry-wait",
            "5",
            "--no-text",
            "--links",
            "--proxy",
            "http://proxy.example:3128",
            "--ca-cert",
            "our-ca.pem",
            "--ca-cert",
            "their-ca.pem",
        ]);
        assert!(default.fetch.ca_certs.is_empty());
        assert!(!default.fetch.accept_invalid_certs);
        assert_eq!(default.fetch.from, None);
        let from = parse(&["mgz", "http://a.test/", "--from", "ops@example.org"]);
        assert_eq!(from.fetch.from.as_deref(), Some("ops@example.org"));
        assert!(
            parse(&["mgz", "http://a.test/", "--insecure"])
                .fetch
                .accept_invalid_certs
        );
        assert_eq!(
            set.fetch.ca_certs,
            [PathBuf::from("our-ca.pem"), PathBuf::from("their-ca.pem")]
        );
        assert!(!set.keep_text);
        assert!(set.store_links);
        assert_eq!(default.fetch.proxy, None);
        assert_eq!(
            set.fetch.proxy.as_deref(),
            Some("http://proxy.example:3128")
        );
        assert_eq!(set.max_host_failures, 0);
        assert_eq!(set.max_retry_wait, Duration::from_secs(5));
        assert!(Cli::try_parse_from(["mgz", "--max-retry-wait", "soon"]).is_err());
        assert_eq!(
            default.robots_cache_bytes,
            mgz_crawl::robots_cache::CACHE_BUDGET
        );
        let more = parse(&["mgz", "http://a.test/", "--robots-memory", "256"]);
        assert_eq!(more.robots_cache_bytes, 256 << 20);
        assert_eq!(
            default.fetch.body_budget,
            mgz_crawl::fetch::DEFAULT_BODY_BUDGET
        );
        let bodies = parse(&["mgz", "http://a.test/", "--body-memory", "16"]);
        assert_eq!(bodies.fetch.body_budget, 16 << 20);
        for bad in ["0", "-1", "lots", "9999999999"] {
            for flag in ["--robots-memory", "--body-memory"] {
                assert!(
                    Cli::try_parse_from(["mgz", flag, bad]).is_err(),
                    "{flag} {bad}"
                );
            }
        }
    }

    #[test]
    fn body_timeout_and_trap_flags_reach_the_config() {
        let parse = |argv: &[&str]| {
            let cli = Cli::try_parse_from(argv).unwrap();
            config(&cli.args, PathBuf::from("state")).unwrap()
        };
        // Without the flags, the library's defaults (the 10 MB body cap).
        let default = parse(&["mgz", "http://a.test/"]);
        let (fetch, traps) = (FetchConfig::default(), TrapLimits::default());
        assert_eq!(default.fetch.max_body, fetch.max_body);
        assert_eq!(default.fetch.max_body, 10 << 20);
        assert_eq!(default.fetch.total_timeout, fetch.total_timeout);
        assert_eq!(default.fetch.connect_timeout, fetch.connect_timeout);
        assert_eq!(default.traps.max_url_len, traps.max_url_len);
        assert_eq!(default.traps.max_path_depth, traps.max_path_depth);
        assert_eq!(default.traps.host_budget, traps.host_budget);
        assert_eq!(default.traps.max_segment_repeats, traps.max_segment_repeats);
        let set = parse(&[
            "mgz",
            "http://a.test/",
            "--max-body",
            "512K",
            "--timeout",
            "5",
            "--connect-timeout",
            "2",
            "--max-host-urls",
            "40",
            "--max-url-length",
            "100",
            "--max-path-depth",
            "4",
        ]);
        assert_eq!(set.fetch.max_body, 512 << 10);
        assert_eq!(set.fetch.total_timeout, Duration::from_secs(5));
        assert_eq!(set.lease, Duration::from_secs(2 * 52 * (5 + 30)));
        assert_eq!(default.lease, CrawlConfig::default().lease);
        // A long --timeout or --delay lengthens the lease past the slowest
        // visit: 52 requests and gate slots, twice.
        let slow = parse(&["mgz", "http://a.test/", "--timeout", "3600"]);
        assert_eq!(slow.lease, Duration::from_secs(2 * 52 * (3600 + 30)));
        let spaced = parse(&["mgz", "http://a.test/", "--delay", "120000"]);
        assert_eq!(spaced.lease, Duration::from_secs(2 * 52 * (60 + 120)));
        assert_eq!(set.fetch.connect_timeout, Duration::from_secs(2));
        assert_eq!(set.traps.host_budget, 40);
        assert_eq!(set.traps.max_url_len, 100);
        assert_eq!(set.traps.max_path_depth, 4);
        let unlimited = parse(&["mgz", "http://a.test/", "--max-host-urls", "0"]);
        assert_eq!(unlimited.traps.host_budget, u64::MAX);
        for (flag, bad) in [
            ("--max-body", "ten"),
            ("--max-body", "-1"),
            ("--max-body", "10X"),
            ("--max-body", "0"),
            ("--max-body", "1023"),
            ("--timeout", "0"),
            ("--timeout", "soon"),
            ("--connect-timeout", "0"),
            ("--max-host-urls", "-3"),
            ("--max-url-length", "8"),
            ("--max-url-length", "long"),
            ("--max-path-depth", "deep"),
        ] {
            assert!(
                Cli::try_parse_from(["mgz", "http://a.test/", flag, bad]).is_err(),
                "{flag} {bad}"
            );
        }
    }

    #[test]
    fn the_traps_line_names_the_limits_that_cut() {
        let c = mgz_crawl::stats::Counters::default();
        let none = Summary::from_counters(&c, std::time::Instant::now(), "hash", 0);
        assert_eq!(traps_cut(&none), "0");
        c.trap(mgz_crawl::traps::TrapKind::HostBudget);
        c.trap(mgz_crawl::traps::TrapKind::PathDepth);
        c.trap(mgz_crawl::traps::TrapKind::HostBudget);
        let some = Summary::from_counters(&c, std::time::Instant::now(), "hash", 0);
        assert_eq!(traps_cut(&some), "3 (host_budget=2 path_depth=1)");
    }

    #[test]
    fn politeness_flag_reaches_the_config() {
        let parse = |argv: &[&str]| {
            let cli = Cli::try_parse_from(argv).unwrap();
            config(&cli.args, PathBuf::from("state")).unwrap()
        };
        let host = mgz_url::QueueKeyKind::Host;
        assert_eq!(parse(&["mgz", "http://a.test/"]).politeness, host);
        assert_eq!(
            parse(&["mgz", "http://a.test/", "--politeness", "host"]).politeness,
            host
        );
        assert_eq!(
            parse(&["mgz", "http://a.test/", "--politeness", "domain"]).politeness,
            mgz_url::QueueKeyKind::RegistrableDomain
        );
        for bad in ["ip", "", "Domain"] {
            assert!(Cli::try_parse_from(["mgz", "http://a.test/", "--politeness", bad]).is_err());
        }
    }

    #[test]
    fn seeds_file_flag_and_alias() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("seeds.txt");
        std::fs::write(&f, "# comment\nhttp://a.test/\n\n  http://b.test/x  \n").unwrap();
        let f = f.to_str().unwrap();
        let want = ["http://z.test/", "http://a.test/", "http://b.test/x"];
        assert_eq!(seeds_of(&["t", "http://z.test/", "--seeds", f]), want);
        assert_eq!(seeds_of(&["t", "--seeds-file", f, "http://z.test/"]), want);
        let none = Cli::try_parse_from(["t"]).unwrap();
        let err = config(&none.args, PathBuf::from("state")).unwrap_err();
        assert!(err.to_string().contains("--seeds FILE"), "{err}");
    }
}
