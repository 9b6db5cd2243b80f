//! Crawls a real documentation site (Debian `postgresql-doc-15`, ~1,200
//! pages) served by a real nginx on 127.0.0.1, and checks that every HTML
//! page reachable by links from index.html is stored, and requested, exactly
//! once. Skips, saying why, when nginx or the site is not installed.

mod common;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

pub const SITE: &str = "/usr/share/doc/postgresql-doc-15/html";

struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn nginx() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_nginx(bin: &Path, dir: &Path, port: u16) -> Nginx {
    let d = dir.display();
    let conf = format!(
        "daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 512; }}
http {{ include /etc/nginx/mime.types; access_log {d}/access.log; keepalive_requests 100000;
  client_body_temp_path {d}/t1; proxy_temp_path {d}/t2; fastcgi_temp_path {d}/t3; uwsgi_temp_path {d}/t4; scgi_temp_path {d}/t5;
  server {{ listen 127.0.0.1:{port}; root {SITE}; index index.html; }} }}\n"
    );
    std::fs::write(dir.join("nginx.conf"), conf).unwrap();
    let child = Command::new(bin)
        .arg("-p")
        .arg(dir)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Nginx(child)
}

/// HTML files reachable from index.html through quoted `href`s (read with a
/// plain regex, independently of the crawler's parser), as site paths.
pub fn reachable() -> BTreeSet<String> {
    let href = regex::Regex::new(r#"href="([^"]*)""#).unwrap();
    let mut seen = BTreeSet::from(["index.html".to_string()]);
    let mut queue = VecDeque::from(["index.html".to_string()]);
    while let Some(page) = queue.pop_front() {
        let text = String::from_utf8_lossy(&std::fs::read(Path::new(SITE).join(&page)).unwrap())
            .to_string();
        for cap in href.captures_iter(&text) {
            let target = cap[1].split('#').next().unwrap_or("");
            if target.is_empty()
                || target.contains(':')
                || target.starts_with('/')
                || !target.ends_with(".html")
            {
                continue;
            }
            if Path::new(SITE).join(target).is_file() && seen.insert(target.to_string()) {
                queue.push_back(target.to_string());
            }
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reachable_page_stored_exactly_once() {
    let Some(bin) = nginx() else {
        eprintln!("SKIPPED: nginx is not installed (Debian nginx-light, see .ci/apt-packages.txt)");
        return;
    };
    if !Path::new(SITE).join("index.html").exists() {
        eprintln!("SKIPPED: {SITE} missing (Debian postgresql-doc-15, see .ci/apt-packages.txt)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _nginx = start_nginx(&bin, dir.path(), port);
    let mut cfg = mgz_crawl::CrawlConfig {
        seeds: vec!["http://pg.test/index.html".into()],
        state_dir: dir.path().join("state"),
        db: dir.path().join("pages.db"),
        max_depth: 100,
        concurrency: 32,
        per_host: 16,
        delay: Duration::ZERO,
        progress: false,
        ..mgz_crawl::CrawlConfig::default()
    };
    cfg.fetch.resolve =
        vec![mgz_crawl::net::ResolveRule::parse(&format!("pg.test=127.0.0.1:{port}")).unwrap()];
    cfg.fetch.allow_private = true;
    let summary = common::run(cfg).await;
    let want: BTreeSet<String> = reachable()
        .into_iter()
        .map(|p| format!("http://pg.test/{p}"))
        .collect();
    assert!(want.len() > 1000, "only {} pages reachable", want.len());
    let got = common::stored_pages(&dir.path().join("pages.db"));
    assert!(got == want, "{} {summary:?}", common::diff(&got, &want));
    let log = std::fs::read_to_string(dir.path().join("access.log")).unwrap();
    let mut hits: HashMap<String, u32> = HashMap::new();
    for line in log.lines() {
        if let Some(path) = line
            .split('"')
            .nth(1)
            .and_then(|r| r.split_whitespace().nth(1))
        {
            *hits.entry(path.to_string()).or_default() += 1;
        }
    }
    let twice: Vec<_> = hits.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(twice.is_empty(), "requested more than once: {twice:?}");
    // The crawl leaves full-text indexing to the first search, which
    // indexes every stored page and finds them.
    let db = dir.path().join("pages.db");
    let found = mgz_crawl::store::search(&db, "vacuum", 5000).unwrap();
    assert!(
        found
            .iter()
            .any(|h| h.url == "http://pg.test/sql-vacuum.html"),
        "{found:?}"
    );
    assert_eq!(mgz_crawl::store::update_index(&db).unwrap(), 0);
    // One index entry (FTS5 docsize row) per page with text, none missing.
    let c = rusqlite::Connection::open(&db).unwrap();
    let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).unwrap() };
    let with_text = count("SELECT count(*) FROM pages WHERE text IS NOT NULL");
    assert!(with_text > 1000, "{with_text}");
    assert_eq!(count("SELECT count(*) FROM pages_fts_docsize"), with_text);
}
