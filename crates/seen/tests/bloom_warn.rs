//! Seed 003's warning: once the set-bit estimate passes the expected count,
//! the filter logs exactly one `tracing::warn!`.

use std::io::Write;
use std::sync::{Arc, Mutex};

use mgz_seen::{SeenSet, bloom::ClassicBloom};

/// A log sink the test can read back.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn warnings_while(f: impl FnOnce()) -> Vec<String> {
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    text.lines().map(str::to_string).collect()
}

#[test]
fn warns_once_past_expected_count() {
    let mut b = ClassicBloom::new(5_000, 0.01).unwrap();
    let under = warnings_while(|| {
        for i in 0..4_500u32 {
            b.insert(&i.to_le_bytes());
        }
    });
    assert!(under.is_empty(), "{under:?}");
    let over = warnings_while(|| {
        for i in 4_500..10_000u32 {
            b.insert(&i.to_le_bytes());
        }
    });
    assert_eq!(over.len(), 1, "{over:?}");
    assert!(over[0].contains("WARN") && over[0].contains("more keys than it was sized for"));
    assert!(b.estimated_len() > 9_000.0, "{}", b.estimated_len());
}
