//! Heap per queue of the in-memory queue table, measured with a counting
//! allocator: `cargo run --release -p mgz-frontier --example table_cost [N]`
//! builds tables of N queues (default 1,000,000) with one host per
//! registrable domain (a broad crawl) and with 16 hosts per domain, and
//! prints the bytes per queue of each: heap asked for (what the table
//! needs) and the process's resident growth (what the allocator adds:
//! glibc rounds each small block up to at least 32 bytes).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator and only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Relaxed);
        // SAFETY: same layout as asked.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        // SAFETY: `p` came from `alloc` with `l`.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Resident bytes of the process (Linux; 0 elsewhere).
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn cost(label: &str, keys: &[String]) {
    let (before, rss_before) = (LIVE.load(Relaxed), rss());
    let t = mgz_frontier::probe::queue_table(keys.iter().map(String::as_str));
    let (bytes, resident) = (
        LIVE.load(Relaxed) - before,
        rss().saturating_sub(rss_before),
    );
    drop(t);
    let n = keys.len() as f64;
    println!(
        "{label}: {} queues, {bytes} B of heap ({:.1} B/queue), resident +{resident} B ({:.1} B/queue)",
        keys.len(),
        bytes as f64 / n,
        resident as f64 / n
    );
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    // One layout per process gives a clean resident figure (a first
    // table's freed pages stay with the allocator and serve the second).
    let which = std::env::args().nth(2).unwrap_or_else(|| "both".into());
    if which != "sub" {
        let broad: Vec<String> = (0..n).map(|i| format!("www.site{i}.com")).collect();
        cost("one host per domain", &broad);
    }
    if which != "broad" {
        let sub: Vec<String> = (0..n)
            .map(|i| format!("h{}.site{}.com", i % 16, i / 16))
            .collect();
        cost("16 hosts per domain", &sub);
    }
}
