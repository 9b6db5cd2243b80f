//! `mgz status --state DIR`: the status page's totals for a stopped crawl,
//! read from its state directory (and its page database, if given).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use mgz_frontier::{Frontier, FrontierOptions};
use mgz_status::Totals;

/// Arguments of `mgz status`.
#[derive(clap::Args)]
pub struct StatusArgs {
    /// State directory of the crawl (`mgz crawl --state DIR`).
    #[arg(long)]
    state: PathBuf,
    /// Page database of the crawl, for fetched and error counts.
    #[arg(long)]
    db: Option<PathBuf>,
    /// Print JSON (the `totals` object of `/status.json`).
    #[arg(long)]
    json: bool,
}

/// Prints the totals.
pub fn run(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let dir = args.state.join("frontier");
    anyhow::ensure!(
        dir.is_dir(),
        "{} holds no crawl state (no frontier/ directory)",
        args.state.display()
    );
    let frontier = Frontier::open(&dir, FrontierOptions::default())
        .with_context(|| format!("opening {} (is the crawl still running?)", dir.display()))?;
    let stats = frontier.stats("", None);
    let mut totals = Totals {
        queued: stats.size.saturating_sub(stats.in_flight),
        in_flight: stats.in_flight,
        completed: stats.completed,
        ..Totals::default()
    };
    if let Some(db) = &args.db {
        let rows = mgz_crawl::store::stored_urls(db)
            .with_context(|| format!("reading page database {}", db.display()))?;
        totals.fetched = rows.len() as u64;
        totals.errors = error_counts(rows.iter().map(|(_, status, _)| *status));
    }
    if args.json {
        println!("{}", serde_json::to_string(&totals)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("state              {}", args.state.display());
    println!(
        "queues             {} ({} active)",
        stats.queues, stats.active_queues
    );
    println!("queued             {}", totals.queued);
    println!("in flight          {}", totals.in_flight);
    println!("completed          {}", totals.completed);
    if let Some(kept) = edge_links(&args.state) {
        println!(
            "links kept         {kept} (past the last --max-depth: a deeper rerun follows them)"
        );
    }
    if let Some(when) = last_request(&args.state, std::time::SystemTime::now()) {
        println!("last request       {when} (a rerun waits each host's delay past it)");
    }
    if args.db.is_some() {
        println!("fetched            {}", totals.fetched);
        for (kind, n) in &totals.errors {
            println!("errors {kind:<11} {n}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The entries of the state's `edge` file (see `mgz_crawl::edge`), or what
/// is wrong with it; `None` when there is none.
fn edge_links(state: &std::path::Path) -> Option<String> {
    let file = std::fs::File::open(state.join(mgz_crawl::edge::FILE)).ok()?;
    let mut entries = mgz_crawl::edge::Entries::new(std::io::BufReader::new(file));
    let mut n = 0u64;
    loop {
        match entries.next_entry() {
            Ok(Some(_)) => n += 1,
            Ok(None) => return (n > 0).then(|| n.to_string()),
            Err(e) => return Some(format!("{n}, then a damaged file: {e}")),
        }
    }
}

/// How long ago, from `now`, the crawl's last request may have been (its
/// `last-request` bound, see `mgz_crawl::pace`), or what is wrong with the
/// file; `None` when there is none.
fn last_request(state: &std::path::Path, now: std::time::SystemTime) -> Option<String> {
    match mgz_crawl::pace::Pace::open(state) {
        Err(e) => Some(format!("unknown: {e}")),
        Ok(p) => {
            let t = p.earlier()?;
            Some(match now.duration_since(t) {
                Ok(ago) => format!("{} s ago", ago.as_secs()),
                Err(ahead) => format!("{} s ahead of this clock", ahead.duration().as_secs()),
            })
        }
    }
}

/// Responses that are not 2xx/3xx, by class (`http_4xx`, `http_5xx`, `failed`).
fn error_counts(statuses: impl Iterator<Item = u16>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for s in statuses {
        let kind = match s {
            0 => "failed",
            400..=499 => "http_4xx",
            500..=599 => "http_5xx",
            _ => continue,
        };
        *out.entry(kind.to_string()).or_default() += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_counted_by_class() {
        let e = error_counts([200, 301, 404, 410, 503, 0, 0].into_iter());
        assert_eq!(e["http_4xx"], 2);
        assert_eq!(e["http_5xx"], 1);
        assert_eq!(e["failed"], 2);
        assert_eq!(e.len(), 3);
    }

    #[test]
    fn edge_links_are_counted_and_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(mgz_crawl::edge::FILE);
        assert_eq!(edge_links(dir.path()), None);
        std::fs::write(&path, "mgz-edge 1\n").unwrap();
        assert_eq!(edge_links(dir.path()), None);
        std::fs::write(
            &path,
            "mgz-edge 1\n4 http://a.test/\n4 http://b.test/\n4 http://c",
        )
        .unwrap();
        assert_eq!(edge_links(dir.path()).as_deref(), Some("2"));
        std::fs::write(&path, "mgz-edge 1\n4 http://a.test/\nfour http://b.test/\n").unwrap();
        let got = edge_links(dir.path()).unwrap();
        assert!(got.starts_with("1, then a damaged file: line 3"), "{got}");
    }

    #[test]
    fn the_last_request_is_told_in_seconds_and_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let now = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_733_380_010_500);
        assert_eq!(last_request(dir.path(), now), None);
        let path = dir.path().join(mgz_crawl::pace::FILE);
        std::fs::write(&path, "1733380000000\n").unwrap();
        assert_eq!(last_request(dir.path(), now).as_deref(), Some("10 s ago"));
        std::fs::write(&path, "1733380070900\n").unwrap();
        assert_eq!(
            last_request(dir.path(), now).as_deref(),
            Some("60 s ahead of this clock")
        );
        std::fs::write(&path, "yesterday\n").unwrap();
        let got = last_request(dir.path(), now).unwrap();
        assert!(
            got.starts_with("unknown: ") && got.contains("last-request"),
            "{got}"
        );
    }
}
