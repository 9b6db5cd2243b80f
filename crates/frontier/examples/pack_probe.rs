//! Probe: bare fjall cost per entry vs per byte (packed values vs small entries).
//! `cargo run --release -p mgz-frontier --example pack_probe -- DIR N`
use std::time::Instant;

fn body(i: u64) -> Vec<u8> {
    format!(
        "\x01....http://www{}.example{}.com/news/article-{i}/index.html..........",
        i % 4,
        (i.wrapping_mul(7919)) % 10000
    )
    .into_bytes()
}

fn run(dir: &std::path::Path, n: u64, mode: &str) -> f64 {
    let _ = std::fs::remove_dir_all(dir);
    let db = fjall::Database::builder(dir)
        .manual_journal_persist(true)
        .open()
        .unwrap();
    let ks = db
        .keyspace("k", || {
            fjall::KeyspaceCreateOptions::default()
                .manual_journal_persist(true)
                .max_memtable_size(8 << 20)
        })
        .unwrap();
    let ks2 = db
        .keyspace("u", || {
            fjall::KeyspaceCreateOptions::default()
                .manual_journal_persist(true)
                .max_memtable_size(8 << 20)
        })
        .unwrap();
    let t = Instant::now();
    let mut last = Instant::now();
    let mut i = 0u64;
    while i < n {
        let mut b = db.batch();
        match mode {
            "small" | "two" => {
                for j in i..(i + 256).min(n) {
                    let q = (j.wrapping_mul(7919) % 10000) as u32;
                    let mut k = q.to_be_bytes().to_vec();
                    k.extend_from_slice(&(j / 1000).to_be_bytes());
                    k.extend_from_slice(&j.to_be_bytes());
                    b.insert(&ks, k, body(j));
                    if mode == "two" {
                        let mut u = q.to_be_bytes().to_vec();
                        u.extend_from_slice(&body(j)[5..]);
                        b.insert(&ks2, u, [1u8; 18]);
                    }
                }
            }
            _ => {
                let mut v = Vec::new();
                for j in i..(i + 256).min(n) {
                    v.extend_from_slice(&body(j));
                }
                b.insert(&ks, i.to_be_bytes(), v);
            }
        }
        b.commit().unwrap();
        if last.elapsed().as_millis() >= 50 {
            db.persist(fjall::PersistMode::SyncData).unwrap();
            last = Instant::now();
        }
        i += 256;
    }
    db.persist(fjall::PersistMode::SyncData).unwrap();
    let r = n as f64 / t.elapsed().as_secs_f64();
    drop((ks, ks2, db));
    let _ = std::fs::remove_dir_all(dir);
    r
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&a[1]);
    let n: u64 = a[2].parse().unwrap();
    for mode in ["small", "packed", "two", "small", "packed", "two"] {
        let r = run(&dir, n, mode);
        let c = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let f: Vec<&str> = c.split_whitespace().collect();
        eprintln!(
            "{mode:7} {r:>10.0} items/s  (utime+stime ticks so far {} {})",
            f.get(13).unwrap_or(&""),
            f.get(14).unwrap_or(&"")
        );
    }
}
