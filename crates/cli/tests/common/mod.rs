//! Helpers shared by the `mgz` binary's integration tests (each test file
//! uses some of them).
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command};

use mgz_sim::{SimConfig, SimServer};

/// Runs `cmd` with `input` on its standard input and its output captured.
/// The input is written from another thread, so a child that writes while
/// it reads cannot block on a full pipe; a child that exits before reading
/// all of it (an argument error) is fine.
pub fn output_with_input(cmd: &mut Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning mgz");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("mgz output");
    match feeder.join().expect("feeder thread") {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.expect("writing stdin"),
    }
    out
}

/// Sends SIGTERM to `child`.
pub fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Serves `sim` on a free loopback port.
pub fn start_sim(sim: &SimConfig) -> SimServer {
    SimServer::start_blocking(sim.clone(), "127.0.0.1:0".parse().unwrap(), None).unwrap()
}

/// Fetches in flight of [`sim_crawl`].
pub const CONCURRENCY: usize = 8;

/// `mgz crawl` of the sim's seeds to depth 3 on any host, politeness off,
/// state and database in `dir`.
pub fn sim_crawl(server: &SimServer, sim: &SimConfig, dir: &Path) -> Command {
    sim_crawl_to(server, sim, dir, 3)
}

/// [`sim_crawl`] to depth `depth`.
pub fn sim_crawl_to(server: &SimServer, sim: &SimConfig, dir: &Path, depth: u32) -> Command {
    sim_crawl_paced(server, sim, dir, depth, 0, 2)
}

/// [`sim_crawl_to`] with `--delay delay_ms` and `--per-host per_host`.
pub fn sim_crawl_paced(
    server: &SimServer,
    sim: &SimConfig,
    dir: &Path,
    depth: u32,
    delay_ms: u64,
    per_host: u32,
) -> Command {
    sim_crawl_wide(server, sim, dir, depth, (delay_ms, per_host, CONCURRENCY))
}

/// [`sim_crawl_to`] with `--delay`, `--per-host` and `--concurrency` as
/// given in `pace`, in that order.
pub fn sim_crawl_wide(
    server: &SimServer,
    sim: &SimConfig,
    dir: &Path,
    depth: u32,
    (delay_ms, per_host, concurrency): (u64, u32, usize),
) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mgz"));
    c.args(["crawl", "--scope", "any", "--delay", &delay_ms.to_string()])
        .args(["--max-depth", &depth.to_string()])
        .args(["--per-host", &per_host.to_string()])
        .args(["--concurrency", &concurrency.to_string()])
        .args(["--no-sitemaps", "--allow-private", "--json"])
        .args(["--robots-retries", "0", "--resolve", &server.resolve_spec()])
        .arg("--state")
        .arg(dir.join("state"))
        .arg("--db")
        .arg(dir.join("pages.db"))
        .args(mgz_sim::seeds(sim));
    c
}

/// Runs `c` to its end with stdout and stderr captured; fails the test,
/// showing stderr, when the command fails.
pub fn run_ok(c: &mut Command) -> std::process::Output {
    let out = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `pages` filter of stored HTML pages (what `mgz sim truth` lists).
pub const HTML_PAGES: &str = "status = 200 AND content_type LIKE 'text/html%'";

/// URLs of the `pages` rows of database `db` that match `filter` (SQL).
pub fn urls_where(db: &Path, filter: &str) -> BTreeSet<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut st = conn
        .prepare(&format!("SELECT url FROM pages WHERE {filter}"))
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// `(WARC-Type, WARC-Target-URI)` of every record, framed by Content-Length.
pub fn warc_records(bytes: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        let end = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let head = String::from_utf8_lossy(&rest[..end]).into_owned();
        let field = |name: &str| {
            head.lines()
                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
                .unwrap_or_default()
        };
        let len: usize = field("Content-Length:").parse().unwrap();
        out.push((field("WARC-Type:"), field("WARC-Target-URI:")));
        assert_eq!(&rest[end + len..end + len + 4], b"\r\n\r\n");
        pos += end + len + 4;
    }
    out
}
