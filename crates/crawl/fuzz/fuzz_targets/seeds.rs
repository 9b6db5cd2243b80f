#![no_main]
//! A seeds file (`mgz crawl --seeds FILE`) on any bytes: never a panic;
//! every seed is one trimmed line that is not a comment; the line numbers
//! of the lines refused climb; and reading through a 7-byte buffer gives
//! the same seeds as reading the bytes whole (the cut of long lines does
//! not depend on where the reader's buffer ends).
use std::io::BufReader;

use mgz_crawl::seeds::{MAX_LINE, Seed, SeedLines};

fn all(lines: &mut SeedLines<impl std::io::BufRead>) -> Vec<Seed> {
    let mut out = Vec::new();
    while let Some(s) = lines.next_seed().expect("reading bytes in memory") {
        out.push(s);
    }
    out
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let whole = all(&mut SeedLines::new(data));
    let small = all(&mut SeedLines::new(BufReader::with_capacity(7, data)));
    assert_eq!(whole, small);
    let lines = data.split(|&b| b == b'\n').count() as u64;
    let mut last = 0;
    for seed in &whole {
        match seed {
            Seed::Text(t) => {
                assert!(!t.is_empty() && !t.starts_with('#') && !t.contains('\n'));
                assert_eq!(t.trim(), t);
                assert!(t.len() as u64 <= MAX_LINE);
            }
            Seed::Unreadable { line, .. } => {
                assert!(*line > last && *line <= lines);
                last = *line;
            }
        }
    }
});
