//! Where a `compact` set's bytes go, part by part, after inserting a file of
//! keys (one per line): `compact_parts FILE`.
use mgz_seen::SeenSet;
use mgz_seen::compact::CompactSet;

fn main() {
    let path = std::env::args().nth(1).expect("usage: compact_parts FILE");
    let text = std::fs::read(path).expect("read keys");
    let mut set = CompactSet::new();
    let mut out = Vec::new();
    let keys: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    for chunk in keys.chunks(1024) {
        set.insert_batch(chunk, &mut out);
    }
    // An empty file gives zeros, not NaN.
    let n = set.len().max(1) as f64;
    let names = ["buffer", "codes", "filters", "index", "offsets", "blocks"];
    let parts = set.space_parts();
    for (name, bytes) in names.iter().zip(parts) {
        println!("{name:8} {:8.3} B/key", bytes as f64 / n);
    }
    // The dictionary and the runs' headers: what makes the parts add up to the total.
    let other = set.heap_bytes().saturating_sub(parts.iter().sum());
    println!("{:8} {:8.3} B/key", "other", other as f64 / n);
    println!(
        "{:8} {:8.3} B/key ({} keys)",
        "total",
        set.heap_bytes() as f64 / n,
        set.len()
    );
}
