//! `mgz bench frontier`: PowerCache end to end on a synthetic URL stream.
//!
//! 1. put: `2 × N` URLs in batches of 256 (half of them repeat an earlier
//!    URL, as links to known pages do), submitted by `--threads` producers,
//!    each batch acknowledged only once durable (group commit);
//! 2. get + complete: lease everything (politeness delay 0; `--get-queues`
//!    × `--get-per-queue` URLs per call, 250 × 64 by default) and mark it done;
//! 3. close and reopen (seen sets rebuilt from the store).
//!
//! Baseline measured first in the same run: the same stream written into a
//! bare fjall keyspace by a child process (see [`super::baseline`]), so its
//! memory stays out of this process's peak RSS; printed on stderr.
//!
//! `put_per_s` counts every item submitted (new or duplicate) per second of
//! wall time until the last acknowledgement; `get_per_s` counts URLs served
//! and completed per second; `rss_bytes` is the process's peak RSS (VmHWM).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use mgz_frontier::{Frontier, FrontierOptions, GetParams, KnownItem, UrlItem};

/// Arguments of `mgz bench frontier`.
#[derive(clap::Args)]
pub struct FrontierArgs {
    /// Distinct URLs to store (the stream has twice as many items).
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    urls: u64,
    /// Distinct hosts (four hosts per registrable domain).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    hosts: u64,
    /// Producer threads calling put_discovered concurrently.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    threads: u64,
    /// State directory (default: a fresh temporary directory, removed after).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Seen-set backend of the frontier (`mgz-seen` name), sized for `--urls`.
    #[arg(long, default_value = "fingerprint")]
    seen: String,
    /// Block cache of the store, MiB (default: the library's).
    #[arg(long)]
    cache_mib: Option<u64>,
    /// Memtable size per keyspace but the discovery segments', MiB (default: the library's).
    #[arg(long)]
    memtable_mib: Option<u64>,
    /// Memtable size of each discovery segment's keyspace, MiB (default: the library's, 8).
    #[arg(long)]
    disc_memtable_mib: Option<u64>,
    /// Level-0 table count that triggers compaction, but in the discovery
    /// segments (default: the library's; at most 20).
    #[arg(long)]
    l0: Option<u8>,
    /// The same for the discovery segments (default: the library's, 20).
    #[arg(long)]
    disc_l0: Option<u8>,
    /// Store flush/compaction threads (default: the library's).
    #[arg(long)]
    store_workers: Option<u8>,
    /// Segment bits of the store's discovery schedule (default: the library's, 20).
    #[arg(long)]
    segment_bits: Option<u8>,
    /// Target table size of the discovery schedule, MiB (default: fjall's, 64).
    #[arg(long)]
    disc_table_mib: Option<u64>,
    /// Target table size of the `urls` keyspace, MiB (default: the library's, 16; 0 = fjall's 64).
    #[arg(long)]
    urls_table_mib: Option<u64>,
    /// Run only the bare-fjall baseline and print its rate (the child
    /// process the benchmark starts).
    #[arg(long, hide = true)]
    baseline_only: bool,
    /// Skip the bare-fjall baseline (at 100M URLs it takes as long as the
    /// run itself); the put ratio against it is then not printed.
    #[arg(long)]
    no_baseline: bool,
    /// Queues per `get` call in the get phase (`max_queues`). 250 × 64 =
    /// 16,000 URLs leased per call; at 1000 (sessions 5-26) the bench's own
    /// vector of 64,000 leased records (~16 MB) was ~1 B/URL of the 10M
    /// peak RSS (docs/BENCHMARKS.md, "Session 27").
    #[arg(long, default_value_t = 250)]
    get_queues: u32,
    /// URLs per queue per `get` call (`max_urls_per_queue`).
    #[arg(long, default_value_t = 64)]
    get_per_queue: u32,
}

/// `m` MiB in bytes; a count past `u64` is an error, not a wrapped size.
fn mib(m: u64) -> anyhow::Result<u64> {
    m.checked_mul(1 << 20)
        .ok_or_else(|| anyhow::anyhow!("{m} MiB does not fit in 64 bits of bytes"))
}

/// Frontier options of the run: the chosen seen backend, defaults otherwise.
fn options(a: &FrontierArgs) -> anyhow::Result<FrontierOptions> {
    let expected = usize::try_from(a.urls.max(1 << 20)).unwrap_or(usize::MAX);
    let seen = mgz_frontier::seen_factory(&a.seen, expected)
        .map_err(|e| anyhow::anyhow!("seen backend {:?}: {e}", a.seen))?;
    let mut store = mgz_frontier::StoreOptions::default();
    if let Some(m) = a.cache_mib {
        store.cache_bytes = mib(m)?;
    }
    if let Some(m) = a.memtable_mib {
        store.memtable_bytes = mib(m)?;
    }
    if let Some(m) = a.disc_memtable_mib {
        store.disc_memtable_bytes = mib(m)?;
    }
    if let Some(n) = a.l0 {
        store.l0_threshold = n;
    }
    if let Some(n) = a.disc_l0 {
        store.disc_l0_threshold = n;
    }
    if let Some(n) = a.store_workers {
        store.worker_threads = n;
    }
    if let Some(m) = a.disc_table_mib {
        store.disc_table_bytes = mib(m)?;
    }
    if let Some(m) = a.urls_table_mib {
        store.urls_table_bytes = mib(m)?;
    }
    if let Some(n) = a.segment_bits {
        store.segment_bits = n;
    }
    Ok(FrontierOptions {
        seen,
        store,
        ..FrontierOptions::default()
    })
}

/// Runs `mgz bench frontier`.
pub fn run(a: FrontierArgs) -> anyhow::Result<ExitCode> {
    if a.baseline_only {
        let dir = a.dir.context("--baseline-only needs --dir")?;
        println!("{}", super::baseline::put(&dir, a.urls, a.hosts)?);
        return Ok(ExitCode::SUCCESS);
    }
    let tmp = tempfile_dir(&a)?;
    let dir = a.dir.clone().unwrap_or_else(|| tmp.clone());
    let f = Frontier::open(&dir, options(&a)?).context("opening the frontier")?;
    let baseline = if a.no_baseline {
        f64::NAN
    } else {
        super::baseline::in_child(&dir.join("baseline"), a.urls, a.hosts)?
    };
    let baseline_cpu = children_cpu_s();
    phase_memory("open");
    let cpu1 = cpu_s();
    let (submitted, put_s) = put_phase(&f, &a)?;
    let put_cpu = cpu_s() - cpu1;
    eprintln!(
        "CPU seconds (all threads): baseline child {baseline_cpu:.1}, put phase {put_cpu:.1} ({:.2} x baseline)",
        if a.no_baseline {
            f64::NAN
        } else {
            put_cpu / baseline_cpu.max(1e-9)
        }
    );
    phase_memory(&format!("put phase {put_s:.1} s"));
    let stored = f.stats("", None).size;
    let seen_bytes = f.seen_bytes();
    let (served, get_s) = get_phase(&f, stored, (a.get_queues, a.get_per_queue))?;
    phase_memory(&format!("get phase {get_s:.1} s"));
    let t = Instant::now();
    f.close().context("closing")?;
    eprintln!("close {:.1} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let f = Frontier::open(&dir, options(&a)?).context("reopening")?;
    let restart_s = t.elapsed().as_secs_f64();
    let completed = f.stats("", None).completed;
    anyhow::ensure!(
        completed == stored,
        "reopen lost URLs: {completed} of {stored}"
    );
    let disk = f.disk_bytes();
    drop(f);
    let report = Report {
        urls: stored,
        hosts: a.hosts,
        put_per_s: submitted as f64 / put_s,
        get_per_s: served as f64 / get_s,
        rss_bytes: peak_rss(),
        disk_bytes: disk,
        restart_s,
    };
    if a.dir.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    report.print(a.json);
    // After the peak RSS was read: the probe's own table would count in it.
    queue_table_cost(a.hosts.max(1));
    eprintln!(
        "baseline (raw fjall insert of the same stream, batches of 256, fsync every 50 ms): \
         {baseline:.0} items/s; frontier put = {:.2} x baseline; seen-set heap {seen_bytes} B \
         ({:.1} B/URL)",
        report.put_per_s / baseline,
        seen_bytes as f64 / stored.max(1) as f64
    );
    Ok(ExitCode::SUCCESS)
}

fn tempfile_dir(a: &FrontierArgs) -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("mgz-bench-frontier-{}", std::process::id()));
    if a.dir.is_none() {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(dir)
}

/// Producers put the stream; returns (items submitted, seconds).
fn put_phase(f: &Frontier, a: &FrontierArgs) -> anyhow::Result<(u64, f64)> {
    let stream = Stream {
        urls: a.urls,
        hosts: a.hosts.max(1),
    };
    let len = 2 * a.urls;
    let threads = a.threads.max(1);
    let t = Instant::now();
    std::thread::scope(|s| -> anyhow::Result<()> {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let stream = &stream;
                s.spawn(move || produce(f, stream, len * k / threads, len * (k + 1) / threads))
            })
            .collect();
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("producer panicked"))??;
        }
        Ok(())
    })?;
    Ok((len, t.elapsed().as_secs_f64()))
}

/// Puts stream items `from..to` in batches of 256, waiting for acks lazily.
fn produce(f: &Frontier, stream: &Stream, from: u64, to: u64) -> anyhow::Result<()> {
    let mut pending = VecDeque::new();
    let mut batch = Vec::with_capacity(256);
    for i in from..to {
        batch.push(UrlItem::new(stream.item(i)));
        if batch.len() == 256 || i + 1 == to {
            let (_, commit) = f.put_discovered_nowait(&batch)?;
            pending.push_back(commit);
            batch.clear();
            if pending.len() > 1024 {
                pending.pop_front().map(|c| c.wait()).transpose()?;
            }
        }
    }
    for c in pending {
        c.wait()?;
    }
    Ok(())
}

/// Leases and completes everything; returns (URLs served, seconds).
/// Prints the progress to stderr at each tenth of `stored` (long runs).
fn get_phase(
    f: &Frontier,
    stored: u64,
    (queues, per_queue): (u32, u32),
) -> anyhow::Result<(u64, f64)> {
    f.set_delay("", None, 0)?;
    let params = GetParams {
        max_queues: queues,
        max_urls_per_queue: per_queue,
        delay_requestable: 3600,
        ..GetParams::default()
    };
    let t = Instant::now();
    let mut served = 0u64;
    let mut pending = VecDeque::new();
    let tenth = (stored / 10).max(1);
    loop {
        let got = f.get(&params)?;
        if got.is_empty() {
            break;
        }
        let before = served / tenth;
        served += got.len() as u64;
        if served / tenth > before {
            let s = t.elapsed().as_secs_f64();
            eprintln!(
                "get phase: {served} served in {s:.1} s ({:.0}/s so far)",
                served as f64 / s
            );
        }
        for chunk in got.chunks(256) {
            let done: Vec<_> = chunk
                .iter()
                .map(|r| KnownItem {
                    item: UrlItem {
                        key: Some(r.key.clone()),
                        ..UrlItem::new(r.url.clone())
                    },
                    next_fetch: 0,
                })
                .collect();
            pending.push_back(f.put_known_nowait(&done)?.1);
        }
        while pending.len() > 1024 {
            pending.pop_front().map(|c| c.wait()).transpose()?;
        }
    }
    for c in pending {
        c.wait()?;
    }
    Ok((served, t.elapsed().as_secs_f64()))
}

/// The synthetic stream: item `i` is a pure function of `i`.
///
/// Odd items repeat an earlier even item (a link to a known page); even item
/// `2j` is distinct URL `j`: host `j*7919 mod H` (hosts `4d..4d+3` share the
/// registrable domain `d`), two path words and a number, a query on one URL in
/// five; about 60-70 bytes.
pub(super) struct Stream {
    pub(super) urls: u64,
    pub(super) hosts: u64,
}

const WORDS: &[&str] = &[
    "news", "blog", "products", "about", "help", "docs", "forum", "wiki", "article", "category",
    "tag", "user", "profile", "search", "events", "archive", "sports", "music", "video", "travel",
];
const SUBS: &[&str] = &["www", "blog", "shop", "en"];

impl Stream {
    pub(super) fn item(&self, i: u64) -> String {
        let j = if i.is_multiple_of(2) {
            i / 2
        } else {
            mix(i) % (i / 2 + 1).min(self.urls)
        };
        self.url(j)
    }

    fn url(&self, j: u64) -> String {
        let h = j.wrapping_mul(7919) % self.hosts;
        let r = mix(j);
        let w1 = WORDS[(r % 20) as usize];
        let w2 = WORDS[((r >> 8) % 20) as usize];
        let sub = SUBS[(h % 4) as usize];
        let dom = h / 4;
        // Built by hand, not `format!`: the stream is generated on the
        // cores the frontier is measured on (the formatter cost ~4 % of
        // the put phase's CPU). Same text as
        // `https://{sub}.site{dom}.com/{w1}/{w2}/page-{j}` + `?id={r % 1000}`
        // on one URL in five, else + `.html`.
        let mut u = String::with_capacity(80);
        u.push_str("https://");
        u.push_str(sub);
        u.push_str(".site");
        push_decimal(&mut u, dom);
        u.push_str(".com/");
        u.push_str(w1);
        u.push('/');
        u.push_str(w2);
        u.push_str("/page-");
        push_decimal(&mut u, j);
        if (r >> 16).is_multiple_of(5) {
            u.push_str("?id=");
            push_decimal(&mut u, r % 1000);
        } else {
            u.push_str(".html");
        }
        u
    }
}

/// Appends `n` in decimal, through `itoa` rather than the formatter, whose
/// `fmt::write` and `Display` frames took ~1 % of the put phase's CPU.
fn push_decimal(out: &mut String, n: u64) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// splitmix64 finaliser.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Prints the heap that the in-memory queue table of `hosts` queues (the
/// bench's host names) takes, per queue.
fn queue_table_cost(hosts: u64) {
    let stream = Stream { urls: hosts, hosts };
    let keys: Vec<String> = (0..hosts)
        .map(|j| {
            let url = stream.url(j);
            let host = url.trim_start_matches("https://");
            host[..host.find('/').unwrap_or(host.len())].to_string()
        })
        .collect();
    let before = crate::alloc::live();
    let table = mgz_frontier::probe::queue_table(keys.iter().map(String::as_str));
    let bytes = crate::alloc::live().saturating_sub(before);
    drop(table);
    eprintln!(
        "queue table: {hosts} queues take {bytes} B of heap ({:.0} B/queue)",
        bytes as f64 / hosts as f64
    );
}

/// Prints, after a phase, where the memory is: peak and current RSS
/// against the heap (live and peak, from the counting allocator), then
/// starts a new heap high-water mark for the next phase.
fn phase_memory(phase: &str) {
    eprintln!(
        "{phase}: peak RSS so far {} B, RSS now {} B, heap now {} B (phase peak {} B)",
        peak_rss(),
        proc_status_bytes("VmRSS:"),
        crate::alloc::live(),
        crate::alloc::peak()
    );
    crate::alloc::reset_peak();
}

/// CPU time of the whole process (user + system, every thread) in seconds,
/// from /proc/self/stat (clock ticks at the usual 100 Hz); 0 elsewhere.
/// On a shared machine this is steadier than wall time.
fn cpu_s() -> f64 {
    stat_ticks(11) / 100.0
}

/// CPU time (user + system) of this process's waited-for children, in
/// seconds (the baseline runs in one), from the same file.
fn children_cpu_s() -> f64 {
    stat_ticks(13) / 100.0
}

/// Fields `i` and `i + 1` of /proc/self/stat after the command name
/// (0 = state): utime+stime at 11, cutime+cstime at 13.
fn stat_ticks(i: usize) -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    ticks(i) + ticks(i + 1)
}

/// Peak resident set size of this process (VmHWM), in bytes.
fn peak_rss() -> u64 {
    proc_status_bytes("VmHWM:")
}

/// A `kB` field of `/proc/self/status`, in bytes (0 if unreadable).
fn proc_status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

struct Report {
    urls: u64,
    hosts: u64,
    put_per_s: f64,
    get_per_s: f64,
    rss_bytes: u64,
    disk_bytes: u64,
    restart_s: f64,
}

impl Report {
    fn print(&self, json: bool) {
        if json {
            println!(
                "{{\"urls\":{},\"hosts\":{},\"put_per_s\":{:.0},\"get_per_s\":{:.0},\"rss_bytes\":{},\"disk_bytes\":{},\"restart_s\":{:.3}}}",
                self.urls,
                self.hosts,
                self.put_per_s,
                self.get_per_s,
                self.rss_bytes,
                self.disk_bytes,
                self.restart_s
            );
            return;
        }
        let per = |b: u64| b as f64 / self.urls.max(1) as f64;
        println!("urls stored      {}", self.urls);
        println!("hosts            {}", self.hosts);
        println!(
            "put              {:.0} items/s (50% duplicates)",
            self.put_per_s
        );
        println!("get + complete   {:.0} URLs/s", self.get_per_s);
        println!(
            "peak RSS         {} B ({:.1} B/URL)",
            self.rss_bytes,
            per(self.rss_bytes)
        );
        println!(
            "disk             {} B ({:.1} B/URL)",
            self.disk_bytes,
            per(self.disk_bytes)
        );
        println!("restart          {:.3} s", self.restart_s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decimals match the formatter's, and the stream's URLs the text
    /// its doc comment gives.
    #[test]
    fn stream_text_is_the_formatted_text() {
        for n in [0, 7, 9, 10, 99, 100, 12_345, u64::from(u32::MAX), u64::MAX] {
            let mut s = String::new();
            push_decimal(&mut s, n);
            assert_eq!(s, n.to_string());
        }
        let st = Stream {
            urls: 1000,
            hosts: 40,
        };
        for j in [0, 1, 2, 3, 5, 17, 999] {
            let h = j * 7919 % 40;
            let r = mix(j);
            let tail = if (r >> 16).is_multiple_of(5) {
                format!("?id={}", r % 1000)
            } else {
                ".html".to_string()
            };
            let want = format!(
                "https://{}.site{}.com/{}/{}/page-{j}{tail}",
                SUBS[(h % 4) as usize],
                h / 4,
                WORDS[(r % 20) as usize],
                WORDS[((r >> 8) % 20) as usize]
            );
            assert_eq!(st.url(j), want);
        }
    }

    /// The store flags reach the frontier's options, the segments' own
    /// ones apart from the general ones; unset flags keep the library's.
    #[test]
    fn store_flags_reach_the_options() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: FrontierArgs,
        }
        let parse = |extra: &[&str]| {
            let argv = [&["bench"], extra].concat();
            options(&Cli::try_parse_from(argv).unwrap().args)
                .unwrap()
                .store
        };
        let lib = mgz_frontier::StoreOptions::default();
        assert_eq!(parse(&[]), lib);
        let o = parse(&[
            "--memtable-mib",
            "3",
            "--disc-memtable-mib",
            "5",
            "--l0",
            "7",
            "--disc-l0",
            "9",
        ]);
        assert_eq!(
            (
                o.memtable_bytes,
                o.disc_memtable_bytes,
                o.l0_threshold,
                o.disc_l0_threshold
            ),
            (3 << 20, 5 << 20, 7, 9)
        );
        assert_eq!(o.cache_bytes, lib.cache_bytes);
        let huge = Cli::try_parse_from(["bench", "--disc-memtable-mib", &u64::MAX.to_string()]);
        let Err(err) = options(&huge.unwrap().args) else {
            panic!("a size past 64 bits was taken");
        };
        assert!(err.to_string().contains("MiB does not fit"), "{err}");
    }

    /// A count of zero would measure nothing (the report divided by it):
    /// refused when the arguments are read, with the flag named.
    #[test]
    fn zero_counts_are_refused() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: FrontierArgs,
        }
        for flag in ["--urls", "--hosts", "--threads"] {
            let err = Cli::try_parse_from(["bench", flag, "0"])
                .err()
                .unwrap_or_else(|| panic!("{flag} 0 was taken"));
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{flag}"
            );
            assert!(err.to_string().contains(flag), "{flag}: {err}");
            let ok = Cli::try_parse_from(["bench", flag, "1"]).unwrap();
            assert_eq!(ok.args.urls.min(ok.args.hosts).min(ok.args.threads), 1);
        }
    }

    /// The hand-built stream is the one `format!` built before.
    #[test]
    fn stream_text_is_unchanged() {
        let s = Stream {
            urls: 1_000_000,
            hosts: 10_000,
        };
        for j in (0..2_000).chain([999_999, u64::MAX / 3]) {
            let h = j.wrapping_mul(7919) % s.hosts;
            let r = mix(j);
            let (w1, w2) = (WORDS[(r % 20) as usize], WORDS[((r >> 8) % 20) as usize]);
            let (sub, dom) = (SUBS[(h % 4) as usize], h / 4);
            let want = if (r >> 16).is_multiple_of(5) {
                format!(
                    "https://{sub}.site{dom}.com/{w1}/{w2}/page-{j}?id={}",
                    r % 1000
                )
            } else {
                format!("https://{sub}.site{dom}.com/{w1}/{w2}/page-{j}.html")
            };
            assert_eq!(s.url(j), want);
        }
    }
}
