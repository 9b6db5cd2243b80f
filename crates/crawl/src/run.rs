//! The crawl loop: open the frontier and the store, queue the seeds, then
//! lease URLs and run one task per lease, at most `concurrency` at a time,
//! in breadth-first waves (see [`crate::queue`]).
//!
//! Stop: when nothing is pending, `max_pages` responses were received (by
//! this run and the earlier ones with the same state: [`crate::budget`]), or
//! the caller's stop flag is raised (Ctrl-C). In-flight fetches finish and
//! are settled; then the frontier is flushed. Nothing else needs saving: the
//! frontier and the store are durable at every acknowledgement.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mgz_frontier::{Frontier, FrontierOptions, SeenFactory};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::config::CrawlConfig;
use crate::fetch::Fetcher;
use crate::gate::Gates;
use crate::queue::{Queue, now_s};
use crate::robots_cache::RobotsCache;
use crate::robots_store::RobotsStore;
use crate::seeds::{Seed, Spool};
use crate::stats::{Counters, Summary};
use crate::store::Store;
use crate::traps::Filter;
use crate::warc::WarcWriter;
use crate::{CrawlError, discover::discover, progress, worker};

/// State shared by every task of one crawl.
pub struct Shared {
    /// Settings.
    pub cfg: CrawlConfig,
    /// The bytes of a seeds file that cannot be read twice, until the
    /// seeds are queued.
    seed_spool: Mutex<Option<Spool>>,
    /// Frontier and pending counts.
    pub queue: Queue,
    /// HTTP client.
    pub fetcher: Fetcher,
    /// robots.txt outcomes.
    pub robots: RobotsCache,
    /// robots.txt responses remembered in the state directory (resume).
    pub robots_store: RobotsStore,
    /// One lock per origin so robots.txt is fetched once.
    pub robots_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// robots.txt product token (user agent up to the first `/` or space).
    pub robots_agent: String,
    /// Per-host request spacing.
    pub gates: Gates,
    /// Hosts that keep failing at the network level, and those given up.
    pub health: crate::health::HostHealth,
    /// Scope, patterns, traps.
    pub filter: Filter,
    /// Page store.
    pub store: Store,
    /// Optional WARC output.
    pub warc: Option<WarcWriter>,
    /// Counters.
    pub counters: Counters,
    /// Page responses of earlier runs (`--max-pages` spans every run).
    pub budget: crate::budget::Budget,
    /// When the last request of this crawl may have been (see [`crate::pace`]).
    pub pace: crate::pace::Pace,
    /// Pages parsed at once (one per core).
    pub parse_slots: Semaphore,
    /// Fetch slots, `--concurrency` of them: a lease's task holds one from
    /// its start to its end, except while it waits for its host's turn
    /// (`worker::wait_unslotted`).
    pub fetch_slots: Arc<Semaphore>,
    /// Tasks waiting for their host's turn without a fetch slot: at most
    /// [`WAITING_PER_SLOT`] × `--concurrency`; past that a task waits
    /// holding its slot.
    pub waiting: Semaphore,
    /// Tasks holding a lease (spawned and not yet settled), with a fetch
    /// slot or waiting without one: what the page budget counts in flight.
    pub leased: std::sync::atomic::AtomicUsize,
    /// Page links already known to the frontier (see [`crate::known`]).
    pub known_links: crate::known::KnownLinks,
    /// Links cut by `max_depth`, kept for a deeper rerun (`keep_edge`).
    pub edge: Option<crate::edge::Edge>,
    /// The caller's stop flag (Ctrl-C, SIGTERM): waits for a host's turn
    /// and the reading of sitemaps end early once it is raised.
    pub stop: Arc<AtomicBool>,
}

impl Shared {
    /// GETs `url` on `host` inside its politeness gate (body capped at
    /// `cap`), or, when the host's turn is more than `max_wait` away (a
    /// long delay, a 429's `Retry-After`) or the crawl stops first, how
    /// long until that turn: the caller then hands its URL back to the
    /// frontier rather than hold it past its lease (`CrawlConfig::lease`).
    pub async fn polite_get(
        &self,
        host: &str,
        url: &str,
        cap: usize,
        max_wait: Duration,
    ) -> PageGet {
        let unit = self.politeness_unit(host);
        match self.take_slot(unit, max_wait).await {
            Some(ahead) => PageGet::HandBack(ahead),
            None => PageGet::Done(self.get_in_slot(unit, url, cap).await),
        }
    }

    /// A leased page's GET: [`Shared::polite_get`] with the page body cap.
    pub async fn page_get(&self, host: &str, url: &str, max_wait: Duration) -> PageGet {
        self.polite_get(host, url, self.cfg.fetch.max_body, max_wait)
            .await
    }

    /// Whether the crawl is stopping (its caller raised the stop flag).
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sleeps until `until`, in steps of [`STOP_CHECK`] so that a stop is
    /// seen within one; returns false if a stop cut it short.
    pub(crate) async fn rest_until(&self, until: Instant) -> bool {
        while Instant::now() < until {
            if self.stopping() {
                return false;
            }
            let step = until.min(Instant::now() + STOP_CHECK);
            tokio::time::sleep_until(step.into()).await;
        }
        true
    }

    /// Waits for a slot of `unit`'s gate that no block (429/503) covers,
    /// unless the next free one is more than `max_wait` away: then returns
    /// how far it is. A slot reserved before the host was blocked is given
    /// up when it comes (the request does not go out) and the next taken.
    /// The wait also ends when the crawl stops: a stop does not wait for
    /// hosts' turns.
    async fn take_slot(&self, unit: &str, max_wait: Duration) -> Option<Duration> {
        // A slot given up for a block is followed by another look: all the
        // looks together wait at most `max_wait`.
        let deadline = Instant::now().checked_add(max_wait);
        loop {
            if self.stopping() {
                return Some(self.gates.ahead(unit));
            }
            let left = deadline.map_or(max_wait, |d| d.saturating_duration_since(Instant::now()));
            let start = match self.gates.reserve_within(unit, left) {
                Ok(start) => start,
                Err(ahead) => return Some(ahead),
            };
            // A stop ends the wait (the slot then goes unused: the host
            // only waits longer).
            if !self.rest_until(start).await {
                return Some(start.saturating_duration_since(Instant::now()));
            }
            // Not blocked (`None`): the slot is ours. Blocked: look again.
            self.gates.blocked_until(unit)?;
        }
    }

    /// The GET itself, once `unit`'s slot has come.
    async fn get_in_slot(
        &self,
        unit: &str,
        url: &str,
        cap: usize,
    ) -> Result<crate::fetch::Fetched, CrawlError> {
        let in_flight = self.pace.start();
        let sent = Instant::now();
        let result = self.fetcher.get_capped(url, cap).await;
        // A failed request took what it took (a timeout: the whole timeout).
        let response_time = result.as_ref().map_or(sent.elapsed(), |f| f.response_time);
        self.gates.done(unit, response_time);
        // A 429 or 503, whatever was asked (robots.txt, a sitemap, a page),
        // holds back every request to the host until its `Retry-After`, or
        // one back-off step without one. A page's answer may block longer
        // (`worker::throttled`: its back-off grows with its tries).
        if let Ok(f) = &result
            && matches!(f.status, 429 | 503)
        {
            let wait = (f.header("retry-after"))
                .and_then(|v| crate::fetch::retry_after(v, chrono::Utc::now()))
                .unwrap_or(self.cfg.backoff)
                .min(MAX_BLOCK);
            self.gates.block(unit, Instant::now() + wait);
        }
        drop(in_flight);
        result
    }

    /// The gate `host`'s requests go through: the host, or its registrable
    /// domain with `--politeness domain`.
    pub fn politeness_unit<'a>(&self, host: &'a str) -> &'a str {
        mgz_url::host_queue_key(host, self.cfg.politeness)
    }
}

/// Tasks that may wait for their host's turn without a fetch slot, per
/// slot. A broad polite crawl has one such wait per host (its first page
/// comes one delay after its robots.txt) and one per Crawl-delay or slow
/// answer; each waiter holds its lease record and its task's state, a few
/// kilobytes.
pub const WAITING_PER_SLOT: usize = 16;

/// Longest block a 429 or 503 sets on its host's gate (`Retry-After` is
/// capped there too).
const MAX_BLOCK: Duration = Duration::from_secs(86_400);

/// How often a wait for a host's turn looks at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(200);

/// What [`Shared::page_get`] came to.
pub enum PageGet {
    /// The request went out: its response or error.
    Done(Result<crate::fetch::Fetched, CrawlError>),
    /// It did not: the host's next slot is this far away.
    HandBack(Duration),
}

/// Seen-set backends the crawler can ask the frontier for.
pub fn seen_factory(name: &str) -> Result<SeenFactory, CrawlError> {
    mgz_frontier::seen_factory(name, 10_000_000)
        .map_err(|e| CrawlError::Config(format!("seen backend {name:?}: {e}")))
}

fn robots_token(user_agent: &str) -> String {
    let token: String = user_agent
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    if token.is_empty() {
        "*".into()
    } else {
        token.to_ascii_lowercase()
    }
}

/// Seeds warned about one by one; past this many, the rest are counted.
const SEED_WARNINGS: usize = 10;

/// The scope of the seeds: every seed read once, in batches, its host kept
/// ([`crate::traps::SeedScope`]); each seed that is not a URL the crawl can
/// fetch is warned about and skipped (as links that do not parse are).
/// Fails when there were seeds and none is usable, or a seeds file has
/// none. Also returns the bytes of a seeds file that cannot be read twice
/// ([`Spool`]).
fn seed_scope(cfg: &CrawlConfig) -> Result<(crate::traps::SeedScope, Option<Spool>), CrawlError> {
    let mut scope = crate::traps::SeedScope::new(cfg.scope);
    let spool = Spool::of(cfg)?;
    let mut seeds = crate::seeds::Seeds::open(cfg, spool.as_ref())?;
    let (mut bad, mut total) = (0usize, 0usize);
    let mut first = None;
    loop {
        let batch = seeds.next_batch(crate::seeds::BATCH)?;
        if batch.is_empty() {
            break;
        }
        total += batch.len();
        for seed in batch {
            let e = match &seed {
                Seed::Text(t) => match mgz_url::CanonicalUrl::parse(t, None, &cfg.policy) {
                    Ok(u) => {
                        scope.add(u.host());
                        continue;
                    }
                    Err(e) => format!("{t:?} skipped: {e}{}", scheme_hint(t, &e, cfg)),
                },
                Seed::Unreadable { line, why } => {
                    format!("on line {line} of the seeds file skipped: {why}")
                }
            };
            bad += 1;
            if bad <= SEED_WARNINGS {
                tracing::warn!("seed {e}");
            }
            first.get_or_insert(e);
        }
    }
    if bad > SEED_WARNINGS {
        tracing::warn!("{} more seeds skipped", bad - SEED_WARNINGS);
    }
    match (first, &cfg.seeds_file) {
        (Some(first), _) if bad == total => Err(CrawlError::Config(format!(
            "no usable seed URL: all {bad} skipped (the first, {first})"
        ))),
        (None, Some(path)) if total == 0 => Err(CrawlError::Config(format!(
            "no seed URL: seeds file {} has no line that is not blank or a comment",
            path.display()
        ))),
        _ => Ok((scope, spool)),
    }
}

/// For a seed without a scheme that is a URL with one (`example.com/docs`),
/// what to give instead; nothing otherwise. The crawl does not guess the
/// scheme itself: a site may serve other pages, or none, over plain HTTP.
fn scheme_hint(seed: &str, e: &mgz_url::UrlError, cfg: &CrawlConfig) -> String {
    if !matches!(e, mgz_url::UrlError::RelativeWithoutBase) || seed.starts_with('/') {
        return String::new();
    }
    let with = format!("https://{seed}");
    match mgz_url::CanonicalUrl::parse(&with, None, &cfg.policy) {
        Ok(u) if u.host().contains('.') => format!(" (with a scheme: {with})"),
        _ => String::new(),
    }
}

/// Queues the seeds, a batch at a time, until they are all put or `stop`
/// is raised (the next run puts them again).
async fn put_seeds(sh: &Shared) -> Result<(), CrawlError> {
    let spool = sh
        .seed_spool
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let mut seeds = crate::seeds::Seeds::open(&sh.cfg, spool.as_ref())?;
    while !sh.stop.load(Ordering::Relaxed) {
        let batch = seeds.next_texts(crate::seeds::BATCH)?;
        if batch.is_empty() {
            break;
        }
        discover(sh, None, &batch, 0, Default::default()).await?;
    }
    Ok(())
}

/// The page database and the WARC file are regular files in a directory
/// that exists: a path naming a directory or a device (`/dev/stdout`: both
/// are read back, the WARC's tail cut and sought), or one whose directory is
/// missing, stops the crawl here, with the path named, before the state is
/// made. (Opening them later said only "No such file or directory" or
/// "Illegal seek", after the state directory had been created.) The files
/// themselves are made only when they are opened.
fn check_output_paths(cfg: &CrawlConfig) -> Result<(), CrawlError> {
    fn problem(path: &Path) -> Option<String> {
        if path.is_dir() {
            return Some("is a directory, not a file".into());
        }
        if path.exists() && !path.is_file() {
            return Some("is not a regular file (it is read back and appended to)".into());
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        (!dir.is_dir()).then(|| format!("its directory {} does not exist", dir.display()))
    }
    if let Some(reason) = problem(&cfg.db) {
        return Err(CrawlError::Config(format!(
            "page database {}: {reason}",
            cfg.db.display()
        )));
    }
    if let Some(warc) = &cfg.warc
        && let Some(reason) = problem(warc)
    {
        return Err(CrawlError::Warc {
            path: warc.display().to_string(),
            reason,
        });
    }
    Ok(())
}

async fn open_shared(
    mut cfg: CrawlConfig,
    stop: Arc<AtomicBool>,
) -> Result<Arc<Shared>, CrawlError> {
    let (seed_scope, seed_spool) = seed_scope(&cfg)?;
    let fds = share_open_files(&mut cfg);
    // Before anything is made: a `--ca-cert` or `--proxy` that cannot be
    // used stops here.
    let fetcher = Fetcher::new(&cfg.fetch)?;
    check_output_paths(&cfg)?;
    std::fs::create_dir_all(&cfg.state_dir).map_err(|e| CrawlError::State {
        path: cfg.state_dir.display().to_string(),
        reason: format!("cannot be made a directory: {e}"),
    })?;
    // First: a damaged state file stops the crawl before anything is opened.
    let budget = crate::budget::Budget::open(&cfg.state_dir)?;
    let pace = crate::pace::Pace::open(&cfg.state_dir)?;
    crate::pinned::check_policy(&cfg.state_dir, &cfg.policy)?;
    // Process-crash durability (a write reaches the OS before it is
    // acknowledged), the same guarantee as the SQLite store in WAL/NORMAL:
    // SIGKILL loses nothing acknowledged; a power cut may lose the last
    // moments. Per-fetch fsyncs would cap a host at a few pages a second
    // on a busy disk.
    let opts = FrontierOptions {
        durability: mgz_frontier::Durability::OsBuffer,
        seen: seen_factory(&cfg.seen_backend)?,
        policy: cfg.policy.clone(),
        store: mgz_frontier::StoreOptions {
            max_open_files: fds.store_files,
            ..Default::default()
        },
        ..FrontierOptions::default()
    };
    let dir = cfg.state_dir.join("frontier");
    // Creating a frontier is mostly waiting for fsyncs (~80 on a fresh
    // directory), so the page and robots databases (a dozen more) are set
    // up meanwhile.
    let opening = tokio::task::spawn_blocking(move || Frontier::open(dir, opts));
    let store = Store::open(&cfg.db)?;
    let robots_store = RobotsStore::open(&cfg.state_dir.join("robots.db"));
    let frontier = opening
        .await
        .map_err(|e| CrawlError::Frontier(e.to_string()))?
        .map_err(|e| CrawlError::Frontier(e.to_string()))?;
    let (queue, admitted) = Queue::open(Arc::new(frontier), cfg.policy.clone()).await?;
    queue.set_default_delay(cfg.delay).await?;
    let filter = Filter::new(
        seed_scope,
        cfg.include.clone(),
        cfg.exclude.clone(),
        cfg.traps.clone(),
    );
    filter.restore_budgets(admitted);
    let warc = match &cfg.warc {
        Some(p) => Some(WarcWriter::open(p, &cfg.fetch.user_agent)?),
        None => None,
    };
    let gates = Gates::resuming(cfg.delay, gate_floor(&pace)).with_factor(cfg.delay_factor);
    let robots = remembered_robots(
        &robots_store,
        &gates,
        &robots_token(&cfg.fetch.user_agent),
        &cfg,
    );
    Ok(Arc::new(Shared {
        fetcher,
        robots,
        robots_store,
        robots_locks: Mutex::new(HashMap::new()),
        robots_agent: robots_token(&cfg.fetch.user_agent),
        gates,
        health: crate::health::HostHealth::new(cfg.max_host_failures, cfg.host_give_up_after),
        filter,
        store,
        warc,
        counters: Counters::default(),
        budget,
        pace,
        parse_slots: Semaphore::new(std::thread::available_parallelism().map_or(2, |n| n.get())),
        fetch_slots: Arc::new(Semaphore::new(cfg.concurrency.max(1))),
        waiting: Semaphore::new(cfg.concurrency.max(1).saturating_mul(WAITING_PER_SLOT)),
        leased: std::sync::atomic::AtomicUsize::new(0),
        known_links: Default::default(),
        edge: cfg
            .keep_edge
            .then(|| crate::edge::Edge::new(&cfg.state_dir)),
        queue,
        seed_spool: Mutex::new(seed_spool),
        cfg,
        stop,
    }))
}

/// Shares the process's open-file limit between the frontier's table
/// files, the requests in flight and idle connections
/// ([`crate::sockets::plan`]), lowering `cfg`'s concurrency and the
/// fetcher's descriptor ceiling to fit.
fn share_open_files(cfg: &mut CrawlConfig) -> crate::sockets::FdPlan {
    let limit = crate::sockets::open_file_limit();
    let fds = crate::sockets::plan(limit, cfg.concurrency);
    if fds.concurrency < cfg.concurrency {
        tracing::warn!(
            "--concurrency {} lowered to {}: the open-file limit ({}) leaves room for no more \
             (raise it with `ulimit -n`)",
            cfg.concurrency,
            fds.concurrency,
            limit.unwrap_or(0)
        );
        cfg.concurrency = fds.concurrency;
    }
    cfg.fetch.fd_ceiling = cfg.fetch.fd_ceiling.min(fds.fd_ceiling);
    fds
}

/// The gates' floor: the bound an earlier run left on its last request
/// (see [`crate::pace`]) as an `Instant`, `None` when it is long past.
fn gate_floor(pace: &crate::pace::Pace) -> Option<Instant> {
    let now = std::time::SystemTime::now();
    let ago = now.duration_since(pace.floor(now)?).ok()?;
    Instant::now().checked_sub(ago)
}

/// Puts the links earlier runs cut at a smaller `--max-depth` that this
/// run's depth reaches (see [`crate::edge`]).
async fn replay_edge(sh: &Shared) -> Result<(), CrawlError> {
    let Some(edge) = &sh.edge else {
        return Ok(());
    };
    let done = edge
        .replay(sh.cfg.max_depth, |depth, urls| async move {
            discover(sh, None, &urls, depth, Default::default())
                .await
                .map(drop)
        })
        .await?;
    if done.due > 0 {
        tracing::info!(
            "{} links that earlier runs found at their --max-depth were put (depths up to {})",
            done.due,
            sh.cfg.max_depth
        );
    }
    if done.torn {
        tracing::info!(
            "{}: a last line cut short (a write that failed) was dropped",
            edge.path().display()
        );
    }
    Ok(())
}

/// The robots.txt outcomes fetched by earlier runs less than 24 h ago, the
/// most recent while the cache has room (both its bounds), with their
/// `Crawl-delay`s applied to the gates (the rest are read from the store
/// when their origin comes up).
fn remembered_robots(
    store: &RobotsStore,
    gates: &Gates,
    agent: &str,
    cfg: &CrawlConfig,
) -> RobotsCache {
    let cache = RobotsCache::with_limits(cfg.robots_cache, cfg.robots_cache_bytes);
    let now = now_s();
    store.for_each_fresh(now, cfg.robots_cache, |e| {
        crate::robots_fetch::restore(&cache, gates, agent, cfg.politeness, &e, now);
        cache.has_room()
    });
    cache
}

/// Queues the seeds and the links earlier runs cut at their depth, then
/// sets the frontier's default delay.
async fn set_up(sh: &Shared) -> Result<(), CrawlError> {
    let start = Instant::now();
    put_seeds(sh).await?;
    let queued = sh.counters.queued.load(Ordering::Relaxed);
    if start.elapsed() >= Duration::from_secs(2) {
        tracing::info!(
            "seeds queued in {:.1} s ({queued} new)",
            start.elapsed().as_secs_f64()
        );
    }
    replay_edge(sh).await?;
    // After the seeds, so the crawl exists. The frontier serves a host at
    // most once per delay; the gates space its requests (robots.txt and
    // redirects included, raised by Crawl-delay and slow answers).
    sh.queue.set_default_delay(sh.cfg.delay).await?;
    // A host given up (`worker::drain`) is given up for its run only: this
    // run gives it its chances again, and its queue the default delay.
    sh.queue.clear_queue_delays().await
}

/// Runs a crawl to completion (or until `stop` is raised) and returns the summary.
pub async fn crawl(cfg: CrawlConfig, stop: Arc<AtomicBool>) -> Result<Summary, CrawlError> {
    let start = Instant::now();
    let sh = open_shared(cfg, stop.clone()).await?;
    let status = match sh.cfg.status {
        Some(addr) => {
            let opts = mgz_status::ServeOptions {
                role: "crawl".into(),
                token: sh.cfg.status_token.clone(),
                allow_public: false,
            };
            let source = Arc::new(crate::status::CrawlStatus::new(sh.clone()));
            Some(mgz_status::serve(addr, source, opts).await?)
        }
        None => None,
    };
    // From before the seeds: a million of them take seconds to queue.
    let done = Arc::new(tokio::sync::Notify::new());
    let reporter = sh
        .cfg
        .progress
        .then(|| tokio::spawn(progress::report(sh.clone(), start, done.clone())));
    if let Err(e) = set_up(&sh).await {
        done.notify_one();
        if let Some(r) = reporter {
            let _ = r.await;
        }
        return Err(e);
    }
    if let Some(hook) = sh.cfg.after_setup {
        hook();
    }
    let earlier = sh.budget.earlier();
    if sh.cfg.max_pages > 0 && earlier >= sh.cfg.max_pages {
        tracing::warn!(
            "--max-pages {} was reached by earlier runs of this crawl ({earlier} responses in {}): \
             nothing more to fetch; a larger --max-pages goes on",
            sh.cfg.max_pages,
            sh.cfg.state_dir.display()
        );
    }
    let ticker = {
        let sh = sh.clone();
        tokio::spawn(async move { sh.pace.tick_forever().await })
    };
    let result = dispatch(&sh, &stop).await;
    ticker.abort();
    sh.pace.finish();
    let deeper = sh
        .queue
        .pending()
        .saturating_sub(sh.queue.pending_within(sh.cfg.max_depth));
    if deeper > 0 && result.is_ok() && !stop.load(Ordering::Relaxed) {
        tracing::warn!(
            "{deeper} URLs deeper than --max-depth {} (queued by an earlier run) stay in \
             the state; a rerun with a larger --max-depth fetches them",
            sh.cfg.max_depth
        );
    }
    let unmatched = sh.counters.unmatched_queued.load(Ordering::Relaxed);
    if unmatched > 0 {
        tracing::warn!(
            "{unmatched} URLs queued by an earlier run do not match this run's \
             --include/--exclude: settled without being fetched"
        );
    }
    // The tasks are joined: every response of this run is counted.
    sh.budget
        .save_now(earlier + sh.counters.pages_fetched.load(Ordering::Relaxed));
    done.notify_one();
    if let Some(r) = reporter {
        let _ = r.await;
    }
    // Everything is flushed even after a failure; the failure that stopped
    // the crawl is the one returned (a full disk poisons the frontier, and
    // its flush then fails with a less telling error).
    let flushed = flush_all(&sh, result.is_ok()).await;
    if let Some(handle) = status {
        handle.shutdown().await;
    }
    // A frontier that refuses the flush as poisoned says only that an
    // earlier write failed: the failure returned is that write's, so the
    // refusal is not logged again (a flush failing otherwise is).
    if let (Err(e), Err(_)) = (&flushed, &result)
        && !e.to_string().contains("poisoned")
    {
        tracing::error!("flushing after the failure: {e}");
    }
    result?;
    flushed?;
    let mut summary = Summary::from_counters(
        &sh.counters,
        start,
        &sh.cfg.seen_backend,
        sh.queue.seen_bytes(),
    );
    summary.edge_links = sh.edge.as_ref().map_or(0, |e| e.entries());
    Ok(summary)
}

/// URLs of one host leased in one call: one when its requests are spaced
/// by a delay of [`UNSLOTTED_AT`] or more (the frontier serves the host
/// again once the delay has passed, up to `--per-host` in flight),
/// `--per-host` when they are not or barely are. Leased together, a host's
/// second URL would wait out the delay in its task, holding a fetch slot:
/// a crawl of 100,000 hosts with `--per-host 2 --delay 1000` ran at 252
/// pages/s, every slot but a few waiting (docs/BENCHMARKS.md, "Session
/// 57"). Below that, one URL a turn starved the few hosts a wave ends with:
/// `mgz demo` (`--delay 5`, `--per-host 4`) took 38 s instead of 29.
pub(crate) fn per_turn(cfg: &CrawlConfig) -> u32 {
    if cfg.delay < UNSLOTTED_AT {
        cfg.per_host
    } else {
        1
    }
}

/// Waits for a host's turn shorter than this keep their fetch slot
/// (`worker::wait_unslotted`), and a crawl whose delay is shorter leases
/// `--per-host` URLs of a host at once ([`per_turn`]).
pub(crate) const UNSLOTTED_AT: Duration = Duration::from_millis(20);

/// The "wave" while only URLs waiting for a retry are pending: every depth.
const RETRIES_ONLY: u32 = u32::MAX;

async fn dispatch(sh: &Arc<Shared>, stop: &AtomicBool) -> Result<(), CrawlError> {
    let permits = sh.fetch_slots.clone();
    let mut tasks: JoinSet<Result<(), CrawlError>> = JoinSet::new();
    let mut first_error = None;
    let mut idle = Idle::default();
    // Since when nothing was served while only retries were pending.
    let mut retry_wait_since: Option<Instant> = None;
    // Since when every lease was handed back as past the wave, with no
    // fetch in flight (see `recount`).
    let mut wave_stuck_since: Option<Instant> = None;
    loop {
        while let Some(r) = tasks.try_join_next() {
            note(r, &mut first_error);
        }
        // Tasks first, responses second: a task counts its response
        // before it leaves `leased`, so a fetch ending between the two
        // reads is counted at least once (in flight, or fetched, or both;
        // the release and acquiring accesses order the count). Read the
        // other way round, it could be in neither, and the budget leased
        // one fetch too many (`--max-pages 30` fetched 31, once).
        let leased = sh.leased.load(Ordering::Acquire);
        let free_now = permits.available_permits();
        let fetched = sh.budget.earlier() + sh.counters.pages_fetched.load(Ordering::Relaxed);
        sh.budget.save_soon(fetched);
        let spent = sh.cfg.max_pages > 0 && fetched >= sh.cfg.max_pages;
        if stop.load(Ordering::Relaxed) || first_error.is_some() || spent {
            break;
        }
        // URLs deeper than --max-depth are pending only when an earlier
        // run allowed more: they stay in the state, unserved (see below).
        let max_depth = sh.cfg.max_depth;
        let wave = match sh.queue.wave().filter(|&w| w <= max_depth) {
            Some(w) => w,
            // Only URLs waiting for a retry are left (back-off, Retry-After,
            // robots.txt asked again): the crawl serves them when due and
            // settles them, instead of ending with them untried.
            None if sh.queue.pending_within(max_depth) > 0 => RETRIES_ONLY,
            None => {
                match tasks.join_next().await {
                    Some(r) => note(r, &mut first_error),
                    None => break,
                }
                continue;
            }
        };
        // Every lease was past the wave for 5 s with no fetch in flight:
        // the hand-backs are let finish (nothing is leased then), and the
        // counts are taken again (see `recount`).
        if leased == 0 && wave_stuck_since.is_some_and(|s| s.elapsed() >= STUCK) {
            wave_stuck_since = None;
            while let Some(r) = tasks.join_next().await {
                note(r, &mut first_error);
            }
            recount(sh).await?;
            continue;
        }
        // Permits released since `free_now` are left for the next turn.
        let mut free = free_now;
        // Fetches the budget still allows after those in flight.
        let mut budget_left = u64::MAX;
        if sh.cfg.max_pages > 0 {
            // Each task holding a lease brings at most one response:
            // lease only what the budget leaves, and wait for the fetches
            // in flight before leasing more (one may bring none).
            let in_flight = leased as u64;
            budget_left = sh.cfg.max_pages.saturating_sub(fetched + in_flight);
            free = free.min(usize::try_from(budget_left).unwrap_or(usize::MAX));
        }
        if free == 0 {
            if free_now > 0 {
                // The budget: wait for a fetch in flight to end.
                if let Some(r) = tasks.join_next().await {
                    note(r, &mut first_error);
                }
                continue;
            }
            // Every slot taken: wait for one to come free, which a task
            // waiting for its host's turn does without ending.
            tokio::select! {
                r = tasks.join_next() => {
                    if let Some(r) = r {
                        note(r, &mut first_error);
                    }
                }
                slot = permits.acquire() => drop(slot),
            }
            continue;
        }
        let leases = match sh
            .queue
            .lease(
                free as u32,
                sh.cfg.per_host,
                per_turn(&sh.cfg),
                sh.cfg.lease,
            )
            .await
        {
            Ok(leases) => leases,
            Err(e) => {
                // Noted like a task's error, so the tasks still running are
                // joined and the first cause wins (see `note`).
                note(Ok(Err(e)), &mut first_error);
                break;
            }
        };
        // Deeper than this run's --max-depth (queued by a run that allowed
        // more): handed back unserved, here rather than in a task, so a
        // crawl left with only those and far retries still sees nothing
        // to do and ends as it would without them.
        // A URL lowered while leased (`Queue::lower`) is judged at its new
        // depth, but its record keeps the depth it was leased at: that is
        // where its count sits, and where completing or handing it back
        // takes the count from. (Setting the record's depth here moved the
        // record but not its count: a wave then waited for ever for a URL
        // the frontier held one depth lower.)
        let mut kept = Vec::with_capacity(leases.len());
        for rec in leases {
            let depth = sh.queue.effective_depth(&rec);
            if depth <= max_depth {
                kept.push((rec, depth));
            } else if let Err(e) = sh.queue.reschedule(rec, now_s() + 1).await {
                note(Ok(Err(e)), &mut first_error);
            }
        }
        let leases = kept;
        if leases.is_empty() {
            if tasks.is_empty() && idle.too_long(sh, wave).await? {
                break;
            }
            // Retries due much later (a `Retry-After` of hours) do not keep
            // the crawl waiting: they stay in the state for a later run.
            if wave != RETRIES_ONLY || !tasks.is_empty() {
                retry_wait_since = None;
            } else if retry_wait_since.get_or_insert_with(Instant::now).elapsed()
                >= sh.cfg.max_retry_wait
            {
                tracing::warn!(
                    "{} URLs still wait for a retry, none due in {:?}; run the crawl \
                     again with the same --state to fetch them",
                    sh.queue.pending(),
                    sh.cfg.max_retry_wait
                );
                break;
            }
            // Waiting for retries (seconds away): ask the frontier less often.
            let nap = if wave == RETRIES_ONLY { 50 } else { 5 };
            wait_a_little(&mut tasks, &mut first_error, nap).await;
            continue;
        }
        idle = Idle::default();
        retry_wait_since = None;
        let past_wave = sh.cfg.strict_depth && leases.iter().all(|(_, d)| *d > wave);
        if past_wave && sh.leased.load(Ordering::Acquire) == 0 {
            wave_stuck_since.get_or_insert_with(Instant::now);
        } else {
            wave_stuck_since = None;
        }
        for (rec, depth) in leases {
            if sh.cfg.strict_depth && depth > wave {
                // Not this wave's turn: hand it back for a second.
                let sh = sh.clone();
                tasks.spawn(async move { sh.queue.reschedule(rec, now_s() + 1).await });
                continue;
            }
            if budget_left == 0 {
                // Past the budget (a lease brings up to --per-host URLs per
                // host): handed back, for a later lease or run.
                let sh = sh.clone();
                tasks.spawn(async move { sh.queue.reschedule(rec, now_s()).await });
                continue;
            }
            budget_left -= 1;
            let permit = permits
                .clone()
                .acquire_owned()
                .await
                .map_err(|e| CrawlError::Config(e.to_string()))?;
            let sh = sh.clone();
            sh.leased.fetch_add(1, Ordering::AcqRel);
            tasks.spawn(async move {
                // Leaves `leased` once the lease is settled (its response
                // counted), also if the task is dropped.
                let _leased = Leased(sh.clone());
                worker::process(sh, rec, permit).await
            });
        }
    }
    while let Some(r) = tasks.join_next().await {
        note(r, &mut first_error);
    }
    first_error.map_or(Ok(()), Err)
}

/// A task's place in [`Shared::leased`].
struct Leased(Arc<Shared>);

impl Drop for Leased {
    fn drop(&mut self) {
        self.0.leased.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Flushes the frontier, the page store and the WARC file, each even if an
/// earlier one failed; the first error is returned. After a run that ended
/// without a failure the frontier is also checkpointed (a failed one, maybe
/// poisoned, is only flushed).
async fn flush_all(sh: &Shared, clean: bool) -> Result<(), CrawlError> {
    let queue = if clean {
        sh.queue.checkpoint().await
    } else {
        sh.queue.flush().await
    };
    let store = sh.store.flush().await;
    let warc = sh.warc.as_ref().map_or(Ok(()), WarcWriter::sync);
    queue.and(store).and(warc)
}

fn note(r: Result<Result<(), CrawlError>, tokio::task::JoinError>, first: &mut Option<CrawlError>) {
    let err = match r {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e,
        Err(e) => CrawlError::Config(format!("task failed: {e}")),
    };
    if worth_logging(first.as_ref(), &err) {
        tracing::error!("{err}");
    }
    // The error returned is the first cause: a poisoned frontier's refusals
    // can be noted before the failure that poisoned it.
    let symptom = |e: &CrawlError| matches!(e, CrawlError::FrontierPoisoned(_));
    match first {
        Some(f) if symptom(f) && !symptom(&err) => *first = Some(err),
        Some(_) => {}
        None => *first = Some(err),
    }
}

/// Whether a task's error is logged when `first` was noted before it: a
/// poisoned frontier refuses every fetch in flight (dozens of identical
/// lines after a full disk), so once anything is noted its refusals, and
/// repeats of the first error's text, are not logged again.
fn worth_logging(first: Option<&CrawlError>, err: &CrawlError) -> bool {
    match first {
        None => true,
        Some(f) => {
            !matches!(err, CrawlError::FrontierPoisoned(_)) && f.to_string() != err.to_string()
        }
    }
}

async fn wait_a_little(
    tasks: &mut JoinSet<Result<(), CrawlError>>,
    first: &mut Option<CrawlError>,
    nap_ms: u64,
) {
    let nap = tokio::time::sleep(Duration::from_millis(nap_ms));
    if tasks.is_empty() {
        nap.await;
        return;
    }
    tokio::select! {
        r = tasks.join_next() => if let Some(r) = r { note(r, first) },
        () = nap => {}
    }
}

/// How long every lease is past the wave, with nothing in flight, or
/// nothing is served at all, before the counts are taken again.
const STUCK: Duration = Duration::from_secs(5);

/// Takes the pending counts per depth again from the frontier, when
/// nothing is leased ([`Queue::recount`]): the waves and the crawl's end
/// run on those counts, and two things made them wait for URLs that would
/// not come.
///
/// - A count that drifted (seen once in ~80 runs of
///   `sim_behaviour::traps_are_bounded_and_loops_end`: depth 3 counted 40
///   pending where the frontier held 39) held the crawl there for ever,
///   handing back the deeper URLs every turn. The two causes found are
///   mended (`Queue::lower`, and the dispatch loop's effective depth);
///   this stays as the backstop, with a warning.
/// - URLs due later than `--max-retry-wait` but not marked retries: a
///   host's URLs handed back for the wave just before its 429 blocked it
///   for an hour (once in ~20 runs of `retries.rs`'s
///   `urls_handed_back_for_a_long_block_do_not_hold_the_crawls_end`, a CI
///   failure). The recount marks them retries (`far_turn`), as a lease
///   handed back that far is, so the crawl goes on or ends without them.
///   "Later" is at least [`STUCK`] away whatever `--max-retry-wait` says
///   (0 is allowed): URLs handed back for the wave a second ago are not
///   made retries, which their wave would then not wait for.
///
/// [`Queue::recount`]: crate::queue::Queue::recount
async fn recount(sh: &Shared) -> Result<(), CrawlError> {
    let wait = sh.cfg.max_retry_wait.max(STUCK);
    let r = sh.queue.recount(sh.cfg.policy.clone(), wait).await?;
    if r.drifted {
        tracing::warn!("pending counts per depth differed from the frontier's: counted again");
    }
    if r.parked > 0 {
        tracing::info!(
            "{} URLs are due later than the crawl waits for retries ({:?}): left for a later run",
            r.parked,
            sh.cfg.max_retry_wait
        );
    }
    Ok(())
}

/// Turns of the dispatch loop that leased nothing, with nothing in flight.
#[derive(Default)]
struct Idle {
    since: Option<Instant>,
    /// [`STUCK`] periods passed so far.
    periods: u32,
}

impl Idle {
    /// Pending counts say there is work but nothing was served for a
    /// while: the crawl ends when the frontier's own count (it survives
    /// everything) says nothing is left. Otherwise, in a wave (not while
    /// only retries are left, which `max_retry_wait` ends), the counts are
    /// taken again after 5, 10, 20, 40… s idle ([`recount`]: a pass over
    /// the whole frontier, so not every period).
    async fn too_long(&mut self, sh: &Shared, wave: u32) -> Result<bool, CrawlError> {
        let since = *self.since.get_or_insert_with(Instant::now);
        if since.elapsed() < STUCK {
            return Ok(false);
        }
        self.since = Some(Instant::now());
        if sh.queue.frontier_pending().await == 0 {
            return Ok(true);
        }
        self.periods += 1;
        if wave != RETRIES_ONLY && self.periods.is_power_of_two() {
            recount(sh).await?;
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host whose requests are spaced by a delay gives one URL a lease
    /// call (its next comes once the delay has passed, up to `--per-host`
    /// in flight); without a delay or with a few milliseconds of one,
    /// `--per-host` at once.
    #[test]
    fn a_delayed_host_gives_one_url_a_turn() {
        let cfg = |delay_ms, per_host| CrawlConfig {
            delay: Duration::from_millis(delay_ms),
            per_host,
            ..CrawlConfig::default()
        };
        assert_eq!(per_turn(&cfg(1000, 2)), 1);
        assert_eq!(per_turn(&cfg(20, 4)), 1);
        assert_eq!(per_turn(&cfg(19, 4)), 4);
        assert_eq!(per_turn(&cfg(5, 16)), 16);
        assert_eq!(per_turn(&cfg(0, 16)), 16);
        assert_eq!(per_turn(&cfg(0, 1)), 1);
    }

    /// A wave whose count says a URL is pending that the frontier does not
    /// hold (what two bugs did, found in session 54) is counted again after
    /// 5 s of deeper leases handed back, and the crawl goes on to its end.
    /// Without the recount, this crawl never ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wave_whose_count_drifted_is_counted_again_and_the_crawl_ends() {
        let mut sim = mgz_sim::SimConfig::small(7, 1, 12);
        sim.crawl_delay_secs = 0.05;
        sim.retry_after_secs = 1;
        let server = mgz_sim::start(sim.clone(), "127.0.0.1:0".parse().unwrap(), None)
            .await
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = CrawlConfig {
            seeds: mgz_sim::seeds(&sim),
            state_dir: dir.path().join("state"),
            db: dir.path().join("pages.db"),
            max_depth: 3,
            scope: crate::traps::Scope::Any,
            delay: Duration::ZERO,
            sitemaps: crate::config::Sitemaps::Off,
            progress: false,
            ..CrawlConfig::default()
        };
        cfg.fetch.resolve = vec![crate::net::ResolveRule::parse(&server.resolve_spec()).unwrap()];
        cfg.fetch.allow_private = true;
        let stop = Arc::new(AtomicBool::new(false));
        let sh = open_shared(cfg, stop.clone()).await.unwrap();
        set_up(&sh).await.unwrap();
        sh.queue.add_pending(0, 1); // a seed the frontier does not hold
        let started = Instant::now();
        tokio::time::timeout(Duration::from_secs(60), dispatch(&sh, &stop))
            .await
            .expect("the crawl ended")
            .unwrap();
        assert!(
            started.elapsed() >= Duration::from_secs(5),
            "waited for the recount"
        );
        assert_eq!(sh.queue.pending(), 0);
        let fetched = sh.counters.pages_fetched.load(Ordering::Relaxed);
        assert!(fetched > 1, "went past the seed: {fetched} fetched");
    }

    #[test]
    fn seeds_that_are_not_urls_are_skipped_and_none_left_is_an_error() {
        let cfg = |s: &[&str]| CrawlConfig {
            seeds: s.iter().map(|x| x.to_string()).collect(),
            ..CrawlConfig::default()
        };
        let (scope, spool) =
            seed_scope(&cfg(&["http://a.test/", "not a url", "ftp://b/"])).unwrap();
        assert!(spool.is_none());
        assert!(scope.admits("a.test") && !scope.admits("b") && scope.len() == 1);
        assert!(seed_scope(&cfg(&[])).unwrap().0.is_empty());
        let many: Vec<String> = (0..25).map(|i| format!("mailto:{i}@x")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        for bad in [vec!["not a url", "ftp://b/"], many] {
            match seed_scope(&cfg(&bad)) {
                Err(CrawlError::Config(m)) => {
                    assert!(m.contains(&format!("all {} skipped", bad.len())), "{m}");
                    assert!(m.contains(&format!("{:?}", bad[0])), "{m}");
                }
                r => panic!("{r:?}"),
            }
        }
    }

    #[test]
    fn a_seeds_file_of_unreadable_lines_is_refused_and_one_good_line_is_enough() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("seeds.txt");
        std::fs::write(&f, b"\xff\xfe\n# only this\n\x80\n").unwrap();
        let mut cfg = CrawlConfig {
            seeds_file: Some(f.clone()),
            ..CrawlConfig::default()
        };
        match seed_scope(&cfg) {
            Err(CrawlError::Config(m)) => {
                assert!(m.contains("all 2 skipped") && m.contains("line 1"), "{m}")
            }
            r => panic!("{r:?}"),
        }
        std::fs::write(&f, b"\xff\nhttp://c.test/x\n").unwrap();
        assert!(seed_scope(&cfg).unwrap().0.admits("c.test"));
        // A file of comments and blank lines has no seed.
        std::fs::write(&f, "# none\n\n  \n").unwrap();
        match seed_scope(&cfg) {
            Err(CrawlError::Config(m)) => assert!(m.contains("no seed URL"), "{m}"),
            r => panic!("{r:?}"),
        }
        cfg.seeds_file = Some(dir.path().join("absent"));
        assert!(matches!(seed_scope(&cfg), Err(CrawlError::Config(_))));
    }

    #[test]
    fn a_poisoned_frontiers_refusals_are_logged_once() {
        let cause = CrawlError::Frontier("no space left: store".into());
        let refusal = || CrawlError::FrontierPoisoned("poisoned".into());
        assert!(worth_logging(None, &refusal()));
        assert!(worth_logging(None, &cause));
        // After anything is noted, refusals and the same text are not logged.
        assert!(!worth_logging(Some(&cause), &refusal()));
        assert!(!worth_logging(Some(&refusal()), &refusal()));
        assert!(!worth_logging(
            Some(&cause),
            &CrawlError::Frontier("no space left: store".into())
        ));
        // The cause noted after a refusal, and any other error, still are.
        assert!(worth_logging(Some(&refusal()), &cause));
        assert!(worth_logging(
            Some(&cause),
            &CrawlError::Config("other".into())
        ));
    }

    #[test]
    fn the_default_agents_token_is_the_one_extract_honours() {
        assert_eq!(
            robots_token(crate::DEFAULT_USER_AGENT),
            crate::extract::DEFAULT_AGENT
        );
        assert_eq!(robots_token("MyBot/1.0 (+http://x)"), "mybot");
        assert_eq!(robots_token("/1.0"), "*");
    }
}
