//! A 100,000-page web served with flat memory: live heap bytes, counted by
//! a counting allocator, do not grow between 600 and 3,000 served pages.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicIsize, Ordering};

use mgz_sim::{Sim, SimConfig, SimServer};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same layout contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Requests `targets`, one connection each, and returns how many answered 200.
fn fetch_all(addr: SocketAddr, targets: &[(String, String)]) -> usize {
    let mut ok = 0;
    for (host, path) in targets {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).unwrap();
        ok += usize::from(buf.starts_with(b"HTTP/1.1 200"));
    }
    ok
}

#[test]
fn hundred_thousand_page_web_serves_with_flat_memory() {
    let mut cfg = SimConfig::small(21, 1_000, 100_000);
    cfg.log_capacity = 500;
    let sim = Sim::new(&cfg).unwrap();
    let mut targets = Vec::new();
    for host in sim.host_names() {
        let home = sim.respond(host, "/");
        let text = String::from_utf8_lossy(&home.rendered.body).to_string();
        targets.push((host.to_string(), "/".to_string()));
        for href in text.split("href=\"/").skip(1).take(2) {
            targets.push((
                host.to_string(),
                format!("/{}", href.split('"').next().unwrap()),
            ));
        }
    }
    assert!(targets.len() >= 3_000);
    drop(sim);
    let srv = SimServer::start_blocking(cfg, "127.0.0.1:0".parse().unwrap(), None).unwrap();
    let warm = fetch_all(srv.addr(), &targets[..600]);
    let before = LIVE.load(Ordering::Relaxed);
    let rest = fetch_all(srv.addr(), &targets[600..3_000]);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let after = LIVE.load(Ordering::Relaxed);
    assert!(
        warm + rest > 2_000,
        "most targets are pages: {}",
        warm + rest
    );
    assert_eq!(srv.requests(), 3_000);
    assert_eq!(srv.log().len(), 500, "the log stays at its cap");
    let growth = after - before;
    eprintln!("live heap: {before} bytes after 600 pages, {after} after 3,000");
    assert!(
        growth < 256 * 1024,
        "live heap grew {growth} bytes over 2,400 pages"
    );
}
