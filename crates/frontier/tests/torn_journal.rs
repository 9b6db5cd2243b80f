//! A torn journal tail: the last batch written before a crash is cut short.
//! Reopening must keep every complete batch, drop the torn one, and say so
//! as a `tracing` warning; fjall's own `log` records of the recovery must
//! reach `tracing` through the `log` bridge (tracing-log's `LogTracer`, as
//! the CLI installs it).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use mgz_frontier::{Durability, Frontier, FrontierError, FrontierOptions, UrlItem};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt as _};

const BATCHES: usize = 10;
const PER_BATCH: usize = 20;

fn opts() -> FrontierOptions {
    FrontierOptions {
        durability: Durability::OsBuffer,
        ..FrontierOptions::default()
    }
}

fn url(b: usize, i: usize) -> String {
    format!("http://h{}.torn.test/b{b}/i{i}", i % 3)
}

/// Events seen: (level, every field rendered as `name=value`).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<(tracing::Level, String)>>>);

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Captured {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields(format!("target={} ", event.metadata().target()));
        event.record(&mut fields);
        let level = *event.metadata().level();
        self.0.lock().unwrap().push((level, fields.0));
    }
}

/// Writes `BATCHES` batches, each one journal batch, and closes without a
/// memtable flush (dropping fjall does not flush), so all live in the journal.
fn build(dir: &Path) {
    let f = Frontier::open(dir, opts()).unwrap();
    for b in 0..BATCHES {
        let items: Vec<_> = (0..PER_BATCH).map(|i| UrlItem::new(url(b, i))).collect();
        f.put_discovered(&items).unwrap();
    }
}

/// The journal holding data, and the offset just past its last non-zero byte.
fn journal_with_data(dir: &Path) -> (PathBuf, u64) {
    for e in std::fs::read_dir(dir.join("store")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jnl") {
            let bytes = std::fs::read(&p).unwrap();
            // Skip the zero tail a page at a time (memcmp), then find the byte.
            let page = [0u8; 4096];
            let mut end = bytes.len();
            while end > 0 && bytes[end.saturating_sub(4096)..end] == page[..end.min(4096)] {
                end = end.saturating_sub(4096);
            }
            if let Some(i) = bytes[..end].iter().rposition(|&b| b != 0) {
                return (p, i as u64 + 1);
            }
        }
    }
    panic!("no journal with data under {}", dir.display());
}

fn present(f: &Frontier, u: &str) -> bool {
    match f.url_status("", u, None) {
        Ok(_) => true,
        Err(FrontierError::NotFound(_)) => false,
        Err(e) => panic!("{u}: {e}"),
    }
}

#[test]
fn torn_tail_keeps_complete_batches_and_warns() {
    let _ = tracing_log::LogTracer::init();
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let (journal, end) = journal_with_data(dir.path());
    // Cut into the last batch's end marker: that batch is now incomplete.
    std::fs::File::options()
        .write(true)
        .open(&journal)
        .unwrap()
        .set_len(end - 5)
        .unwrap();

    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry().with(captured.clone());
    let f = tracing::subscriber::with_default(subscriber, || Frontier::open(dir.path(), opts()))
        .expect("a torn tail is recovered, not an error");

    for b in 0..BATCHES - 1 {
        for i in 0..PER_BATCH {
            assert!(present(&f, &url(b, i)), "complete batch {b} kept");
        }
    }
    for i in 0..PER_BATCH {
        assert!(
            !present(&f, &url(BATCHES - 1, i)),
            "torn batch dropped whole"
        );
    }
    assert_eq!(f.stats("", None).size, ((BATCHES - 1) * PER_BATCH) as u64);

    let events = captured.0.lock().unwrap().clone();
    let warning = events
        .iter()
        .find(|(l, text)| *l == tracing::Level::WARN && text.contains("torn journal tail"));
    let warning = warning.unwrap_or_else(|| panic!("no torn-tail warning in {events:#?}"));
    assert!(warning.1.contains("discarded_bytes="), "{}", warning.1);
    assert!(
        warning.1.contains(&journal.display().to_string()),
        "{}",
        warning.1
    );
    assert!(
        events
            .iter()
            .any(|(_, text)| text.contains("log.target=\"fjall") && text.contains("journal")),
        "fjall's own recovery records come through the log bridge: {events:#?}"
    );
    // Only the last batch was cut: nothing is split across keyspaces, so
    // the open keeps its counters and seen snapshot (no repair, see `repair`).
    assert!(
        !events
            .iter()
            .any(|(_, text)| text.contains("journal cut in its middle")),
        "{events:#?}"
    );

    // It writes again, and a clean reopen warns about nothing.
    f.put_discovered(&[UrlItem::new(url(99, 0))]).unwrap();
    drop(f);
    let again = Captured::default();
    let subscriber = tracing_subscriber::registry().with(again.clone());
    let f = tracing::subscriber::with_default(subscriber, || Frontier::open(dir.path(), opts()))
        .unwrap();
    assert!(present(&f, &url(99, 0)));
    let warnings: Vec<_> = again
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(l, _)| *l <= tracing::Level::WARN)
        .cloned()
        .collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
}
