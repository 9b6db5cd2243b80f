//! Probe: bare fjall cost per entry vs per byte (packed values vs small
//! entries), and the cost of fjall's compaction and block knobs.
//! `cargo run --release -p mgz-frontier --example pack_probe -- DIR N [VARIANT...]`
//! Modes run without variants: small, packed, two (each twice). A variant
//! (`base`, `l0=N`, `ratio=R`, `target=MIB`, `block=KIB`, `nocomp`,
//! `jlz4`, several joined by `,`) runs `small` with those settings.
use std::sync::Arc;
use std::time::Instant;

fn body(i: u64) -> Vec<u8> {
    format!(
        "\x01....http://www{}.example{}.com/news/article-{i}/index.html..........",
        i % 4,
        (i.wrapping_mul(7919)) % 10000
    )
    .into_bytes()
}

/// Keyspace options of one variant string.
fn options(variant: &str) -> fjall::KeyspaceCreateOptions {
    let mut o = fjall::KeyspaceCreateOptions::default()
        .manual_journal_persist(true)
        .max_memtable_size(8 << 20);
    let mut lev = fjall::compaction::Leveled::default();
    for knob in variant.split(',') {
        let (k, v) = knob.split_once('=').unwrap_or((knob, ""));
        match k {
            "l0" => lev = lev.with_l0_threshold(v.parse().unwrap()),
            "ratio" => lev = lev.with_level_ratio_policy(vec![v.parse().unwrap()]),
            "target" => lev = lev.with_table_target_size(v.parse::<u64>().unwrap() << 20),
            "block" => {
                let b = fjall::config::BlockSizePolicy::all(v.parse::<u32>().unwrap() << 10);
                o = o.data_block_size_policy(b);
            }
            "nocomp" => {
                let c = fjall::config::CompressionPolicy::all(fjall::CompressionType::None);
                o = o.data_block_compression_policy(c);
            }
            _ => {}
        }
    }
    o.compaction_strategy(Arc::new(lev))
}

fn run(dir: &std::path::Path, n: u64, mode: &str, variant: &str) -> f64 {
    let _ = std::fs::remove_dir_all(dir);
    let mut b = fjall::Database::builder(dir).manual_journal_persist(true);
    if variant.contains("jlz4") {
        b = b.journal_compression(fjall::CompressionType::Lz4);
    }
    let db = b.open().unwrap();
    let ks = db.keyspace("k", || options(variant)).unwrap();
    let ks2 = db.keyspace("u", || options(variant)).unwrap();
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
    let disk = db.disk_space().unwrap_or(0);
    drop((ks, ks2, db));
    let reopen = Instant::now();
    let db = fjall::Database::builder(dir).open().unwrap();
    let reopen_s = reopen.elapsed().as_secs_f64();
    drop(db);
    eprintln!("  disk {disk} B, reopen {reopen_s:.3} s");
    let _ = std::fs::remove_dir_all(dir);
    r
}

/// utime + stime of this process in seconds.
fn cpu_s() -> f64 {
    let c = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = c.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(13) + tick(14)) / 100.0
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&a[1]);
    let n: u64 = a[2].parse().unwrap();
    let runs: Vec<(String, String)> = if a.len() > 3 {
        a[3..].iter().map(|v| ("small".into(), v.clone())).collect()
    } else {
        ["small", "packed", "two", "small", "packed", "two"]
            .iter()
            .map(|m| (m.to_string(), "base".into()))
            .collect()
    };
    for (mode, variant) in runs {
        let c0 = cpu_s();
        let r = run(&dir, n, &mode, &variant);
        let cpu = cpu_s() - c0;
        eprintln!("{mode:7} {variant:24} {r:>10.0} items/s  CPU {cpu:.2} s");
    }
}
