//! Writers and a crawler at once: three threads put overlapping URL sets
//! while a fourth leases and completes whatever is due. `put_discovered`
//! commits outside the table lock (in decision order) and new URLs land in
//! small `disc` segments here, so leases race with commits and cross
//! segments; every distinct URL must still be served exactly once.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mgz_frontier::{
    Durability, Frontier, FrontierOptions, GetParams, KnownItem, PutOutcome, StoreOptions, UrlItem,
};

#[test]
fn concurrent_puts_and_leases_serve_every_url_once() {
    let dir = tempfile::tempdir().unwrap();
    let opts = FrontierOptions {
        durability: Durability::OsBuffer,
        store: StoreOptions {
            segment_bits: 3,
            memtable_bytes: 1 << 20,
            disc_memtable_bytes: 1 << 20,
            ..StoreOptions::default()
        },
        ..FrontierOptions::default()
    };
    let f = Arc::new(Frontier::open(dir.path(), opts).unwrap());
    f.set_delay("", None, 0).unwrap();
    // Writer w puts URLs w*1000 .. w*1000+2000: each URL but the first and
    // last thousand is put by two writers.
    let url = |i: u32| format!("http://h{}.example/p/{i}", i % 17);
    let writers: Vec<_> = (0..3u32)
        .map(|w| {
            let f = f.clone();
            std::thread::spawn(move || {
                let mut new = 0;
                let ids: Vec<u32> = (w * 1000..w * 1000 + 2000).collect();
                for chunk in ids.chunks(37) {
                    let items: Vec<_> = chunk.iter().map(|&i| UrlItem::new(url(i))).collect();
                    let out = f.put_discovered(&items).unwrap();
                    new += out.iter().filter(|o| **o == PutOutcome::New).count();
                }
                new
            })
        })
        .collect();
    let writing = Arc::new(AtomicBool::new(true));
    let crawler = {
        let (f, writing) = (f.clone(), writing.clone());
        std::thread::spawn(move || {
            let mut served: HashMap<String, u32> = HashMap::new();
            let params = GetParams {
                max_queues: 0,
                max_urls_per_queue: 5,
                ..GetParams::default()
            };
            loop {
                let still_writing = writing.load(Ordering::SeqCst);
                let got = f.get(&params).unwrap();
                if got.is_empty() && !still_writing {
                    return served;
                }
                let done: Vec<_> = got.iter().map(|r| KnownItem::completed(&r.url)).collect();
                f.put_known(&done).unwrap();
                for r in got {
                    *served.entry(r.url).or_default() += 1;
                }
            }
        })
    };
    let new: usize = writers.into_iter().map(|w| w.join().unwrap()).sum();
    writing.store(false, Ordering::SeqCst);
    let served = crawler.join().unwrap();
    assert_eq!(new, 4000, "each distinct URL is new exactly once");
    assert_eq!(served.len(), 4000, "every URL served");
    assert!(served.values().all(|&n| n == 1), "none served twice");
    let s = f.stats("", None);
    assert_eq!((s.size, s.completed, s.in_flight), (0, 4000, 0));
}
