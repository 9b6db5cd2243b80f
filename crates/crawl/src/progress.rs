//! Progress while crawling: an indicatif bar when stderr is a terminal,
//! otherwise one plain log line every 5 seconds.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::run::Shared;
use crate::stats::rss_bytes;

fn line(sh: &Shared, start: Instant) -> String {
    let c = &sh.counters;
    let fetched = c.pages_fetched.load(Relaxed);
    let secs = start.elapsed().as_secs_f64().max(1e-3);
    // One gate per politeness unit: hosts, or domains with `--politeness domain`.
    let units = match sh.cfg.politeness {
        mgz_url::QueueKeyKind::Host => "hosts",
        _ => "domains",
    };
    format!(
        "{fetched} fetched, {} stored, {} queued, {} pending, {} {units}, {} errors, {:.0} pages/s, RSS {} MB",
        c.pages_stored.load(Relaxed),
        c.queued.load(Relaxed),
        sh.queue.pending(),
        sh.gates.hosts(),
        c.error_total(),
        fetched as f64 / secs,
        rss_bytes() >> 20,
    )
}

/// Reports until `done` is notified (at once: a crawl's end does not wait
/// for the next tick, which cost up to 100 ms of every crawl's wall time).
pub async fn report(sh: Arc<Shared>, start: Instant, done: Arc<Notify>) {
    let tty = std::io::stderr().is_terminal();
    let bar = tty.then(|| {
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                .expect("static template"),
        );
        b
    });
    let period = if tty {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(5)
    };
    let mut last_log = Instant::now();
    loop {
        tokio::select! {
            () = done.notified() => break,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        match &bar {
            Some(b) if last_log.elapsed() >= period => {
                b.set_message(line(&sh, start));
                b.tick();
                last_log = Instant::now();
            }
            None if last_log.elapsed() >= period => {
                eprintln!("mgz crawl: {}", line(&sh, start));
                last_log = Instant::now();
            }
            _ => {}
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}
