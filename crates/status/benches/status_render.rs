//! CPU cost of serving the status page against a crawl the size of `mgz demo`
//! (300 hosts, 30,000 URLs of which 20,000 completed, a full one-hour rate
//! ring), to bound its share of the crawl's CPU without wall-time A/B runs.
//!
//! The source does what `mgz_crawl::status::CrawlStatus` does on a real
//! frontier: one `stats` over the crawl, the seen set's bytes, the stats of
//! the blocked hosts, and a busiest-host ranking (`list_queues` + one `stats`
//! per queue) that the crawl reuses for 5 s. Groups:
//!
//! - `pieces/*`: the snapshot, the ranking, the rate ring, RSS;
//! - `render/*`: what one request costs the server, without HTTP: the report
//!   built and serialised (`/status.json`), rendered as Prometheus text;
//! - `http/*`: one whole request over loopback through the real server
//!   (client, kernel and hyper included: an upper bound on the server's CPU).
//!
//! Every figure is the process's CPU time (user + system, `getrusage`) per
//! iteration, not wall time: on a loaded machine wall time counts waiting for
//! a core, CPU time counts only the work. In `http/*` it covers the client
//! and the server threads together.
//!
//! `cargo bench -p mgz-status --bench status_render`; how the bound follows is
//! in docs/BENCHMARKS.md ("Status page overhead").

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Bencher, Criterion, criterion_group, criterion_main};
use mgz_frontier::{Durability, Frontier, FrontierOptions, KnownItem, UrlItem, seen_factory};
use mgz_status::{
    HostStatus, RateTracker, SeenStatus, ServeOptions, StatusReport, StatusSource, Totals,
    peak_rss_bytes, render_prometheus, rss_bytes,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const HOSTS: usize = 300;
const URLS: usize = 30_000;
const COMPLETED: usize = 20_000;
const BLOCKED: usize = 3;
const RANKING_TTL: Duration = Duration::from_secs(5);

/// A frontier-backed source shaped like the crawl's.
struct DemoSource {
    frontier: Frontier,
    errors: BTreeMap<String, u64>,
    busiest: Mutex<Option<(Instant, Vec<HostStatus>)>>,
    _dir: tempfile::TempDir,
}

fn host(i: usize) -> String {
    format!("www.site-{i}.sim")
}

impl DemoSource {
    fn new() -> DemoSource {
        let dir = tempfile::tempdir().unwrap();
        let opts = FrontierOptions {
            durability: Durability::OsBuffer,
            seen: seen_factory("fingerprint", 100_000).unwrap(),
            ..FrontierOptions::default()
        };
        let frontier = Frontier::open(dir.path(), opts).unwrap();
        let items: Vec<UrlItem> = (0..URLS)
            .map(|i| UrlItem::new(format!("http://{}/page/{i}.html", host(i % HOSTS))))
            .collect();
        for chunk in items.chunks(256) {
            frontier.put_discovered(chunk).unwrap();
        }
        let done: Vec<KnownItem> = items[..COMPLETED]
            .iter()
            .map(|item| KnownItem {
                item: item.clone(),
                next_fetch: 0,
            })
            .collect();
        for chunk in done.chunks(256) {
            frontier.put_known(chunk).unwrap();
        }
        let errors = ["timeout", "http_4xx", "http_5xx", "connect", "robots"]
            .iter()
            .map(|k| (k.to_string(), 17))
            .collect();
        DemoSource {
            frontier,
            errors,
            busiest: Mutex::new(None),
            _dir: dir,
        }
    }

    fn host_status(&self, key: &str) -> HostStatus {
        let s = self.frontier.stats("", Some(key));
        HostStatus {
            host: key.to_string(),
            queued: s.size.saturating_sub(s.in_flight),
            in_flight: s.in_flight,
            delay_ms: 1000,
            next_eligible_ms: 0,
        }
    }

    fn rank_busiest(&self) -> Vec<HostStatus> {
        let page = self.frontier.list_queues("", 0, 5_000, false);
        let mut hosts: Vec<HostStatus> = page.keys.iter().map(|k| self.host_status(k)).collect();
        hosts.sort_by(|a, b| b.queued.cmp(&a.queued).then_with(|| a.host.cmp(&b.host)));
        hosts.truncate(10);
        hosts
    }

    fn busiest(&self) -> Vec<HostStatus> {
        let mut cache = self.busiest.lock().unwrap();
        if let Some((_, hosts)) = cache.as_ref().filter(|(at, _)| at.elapsed() < RANKING_TTL) {
            return hosts.clone();
        }
        let hosts = self.rank_busiest();
        *cache = Some((Instant::now(), hosts.clone()));
        hosts
    }
}

impl StatusSource for DemoSource {
    fn report(&self) -> StatusReport {
        let stats = self.frontier.stats("", None);
        StatusReport {
            totals: Totals {
                fetched: stats.completed,
                queued: stats.size.saturating_sub(stats.in_flight),
                in_flight: stats.in_flight,
                completed: stats.completed,
                errors: self.errors.clone(),
                robots_excluded: 120,
                duplicates_avoided: 250_000,
            },
            seen: SeenStatus::new(
                "fingerprint",
                stats.size + stats.completed,
                self.frontier.seen_bytes() as u64,
                48.0,
            ),
            busiest_hosts: self.busiest(),
            blocked_hosts: (0..BLOCKED).map(|i| self.host_status(&host(i))).collect(),
            ..StatusReport::default()
        }
    }

    fn fetched_total(&self) -> u64 {
        self.frontier.stats("", None).completed
    }
}

/// User + system CPU time of this process so far.
fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` into the pointer it is given,
    // which points at a zeroed, properly aligned one we own.
    let usage = unsafe {
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()), 0);
        usage.assume_init()
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Runs `f` as criterion asks, timing it in CPU time.
fn cpu<T>(b: &mut Bencher<'_>, mut f: impl FnMut() -> T) {
    b.iter_custom(|iters| {
        let start = cpu_time();
        for _ in 0..iters {
            black_box(f());
        }
        cpu_time() - start
    });
}

/// A full ring: one hour of one-a-second samples.
fn full_ring() -> RateTracker {
    let mut r = RateTracker::new();
    for s in 0..RateTracker::CAPACITY as u64 {
        r.record(1_700_000_000_000 + s * 1000, s * 8);
    }
    r
}

/// What the server adds to the source's report (its `build_report`).
fn server_report(src: &DemoSource, rates: &Mutex<RateTracker>) -> StatusReport {
    let mut report = src.report();
    report.role = "crawl".into();
    report.uptime_s = 3600.0;
    report.rss_bytes = rss_bytes();
    report.peak_rss_bytes = peak_rss_bytes();
    report.rates = rates.lock().unwrap().rates();
    report
}

fn pieces(c: &mut Criterion, src: &DemoSource) {
    let ring = full_ring();
    let mut g = c.benchmark_group("pieces");
    g.bench_function("snapshot_cached_ranking", |b| {
        b.iter(|| black_box(src.report()))
    });
    g.bench_function("rank_busiest_300_queues", |b| {
        b.iter(|| black_box(src.rank_busiest()))
    });
    g.bench_function("rates_full_ring", |b| b.iter(|| black_box(ring.rates())));
    g.bench_function("rss_bytes", |b| {
        b.iter(|| black_box(rss_bytes() + peak_rss_bytes()))
    });
    g.finish();
}

fn render(c: &mut Criterion, src: &DemoSource) {
    let rates = Mutex::new(full_ring());
    let mut g = c.benchmark_group("render");
    g.bench_function("status_json", |b| {
        cpu(b, || {
            serde_json::to_string(&server_report(src, &rates)).unwrap()
        })
    });
    g.bench_function("metrics", |b| {
        cpu(b, || render_prometheus(&server_report(src, &rates)))
    });
    g.finish();
}

async fn http_get(addr: std::net::SocketAddr, path: &str) -> usize {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::with_capacity(64 << 10);
    s.read_to_end(&mut buf).await.unwrap();
    assert!(buf.starts_with(b"HTTP/1.1 200"), "{path}");
    buf.len()
}

fn http(c: &mut Criterion, src: Arc<DemoSource>) {
    // One worker thread: the status server shares the crawl's runtime.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let opts = ServeOptions {
        role: "crawl".into(),
        ..ServeOptions::default()
    };
    let handle = rt
        .block_on(mgz_status::serve("127.0.0.1:0".parse().unwrap(), src, opts))
        .unwrap();
    let addr = handle.addr();
    let mut g = c.benchmark_group("http");
    for path in ["/status.json", "/", "/metrics"] {
        g.bench_function(path, |b| cpu(b, || rt.block_on(http_get(addr, path))));
    }
    g.finish();
    rt.block_on(handle.shutdown());
}

fn benches(c: &mut Criterion) {
    let src = Arc::new(DemoSource::new());
    let s = src.frontier.stats("", None);
    assert_eq!((s.size, s.completed, s.queues), (10_000, 20_000, 300));
    pieces(c, &src);
    render(c, &src);
    http(c, src);
}

criterion_group! {
    name = status;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(status);
