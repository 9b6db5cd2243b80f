//! Quick A/B timing of seen-set backends on a file of keys, one per line
//! (for tuning; `mgz bench seen` is the benchmark of record).
//!
//! `cargo run --release -p mgz-seen --example seen_time -- FILE [BACKENDS] [REPEAT] [insert]`
//! (`insert`: skip the lookup pass, e.g. to profile inserts alone).
//! BACKENDS: comma-separated registry names, `compact-bg` and
//! `compact-parts-bg` (merges on the background thread), or `NAME@N` for a
//! backend sized for N keys. Per insert it prints the calling thread's CPU,
//! and on stderr the wall time and the CPU of all the process's threads.

use mgz_seen::{BackendOptions, backend};

/// On-CPU nanoseconds of this thread (the box is shared; wall time lies).
fn cpu_ns() -> f64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// On-CPU nanoseconds of the whole process (every thread, the merger's too).
fn process_ns() -> f64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn clock_ns(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime writes only it.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read(&args[1]).expect("read keys");
    let keys: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let names = args.get(2).map_or("hash,compact", String::as_str);
    let repeat: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(3);
    let lookups = args.get(4).is_none_or(|a| a != "insert");
    for name in names.split(',') {
        let (mut best_ins, mut best_look, mut bytes) = (f64::MAX, f64::MAX, 0.0);
        for _ in 0..repeat {
            let mut set: Box<dyn mgz_seen::SeenSet> = match name {
                // Merges on the background thread: report wall time too.
                "compact-bg" => {
                    Box::new(mgz_seen::compact::CompactSet::new().with_background_merges())
                }
                "compact-parts-bg" => Box::new(mgz_seen::parted::Parted::compact_background()),
                // `name@N`: the backend sized for N keys (as `mgz bench seen`
                // sizes `fingerprint` and `bloom` for the input's unique count).
                _ => {
                    let (base, expected) = match name.split_once('@') {
                        Some((b, n)) => (b, n.parse().expect("a key count after @")),
                        None => (name, BackendOptions::default().expected),
                    };
                    let opts = BackendOptions {
                        expected,
                        ..BackendOptions::default()
                    };
                    backend(base, &opts).expect("backend")
                }
            };
            let mut out = Vec::new();
            let (t, all, wall) = (cpu_ns(), process_ns(), std::time::Instant::now());
            for chunk in keys.chunks(1024) {
                set.insert_batch(chunk, &mut out);
            }
            set.settle();
            best_ins = best_ins.min((cpu_ns() - t) / keys.len() as f64);
            let wall_ns = wall.elapsed().as_nanos() as f64 / keys.len() as f64;
            let all_ns = (process_ns() - all) / keys.len() as f64;
            eprintln!(
                "{name}: wall ns/insert {wall_ns:.0}, all threads' CPU ns/insert {all_ns:.0}"
            );
            bytes = set.heap_bytes() as f64 / set.len().max(1) as f64;
            if !lookups {
                continue;
            }
            let t = cpu_ns();
            let hits = keys.iter().step_by(3).filter(|k| set.contains(k)).count();
            let n = keys.len().div_ceil(3);
            assert_eq!(hits, n);
            best_look = best_look.min((cpu_ns() - t) / n as f64);
        }
        let look = match lookups {
            true => format!("{best_look:8.0}"),
            false => format!("{:>8}", "-"),
        };
        println!("{name:10} ns/insert {best_ins:8.0} ns/lookup {look} B/key {bytes:.2}");
    }
}
