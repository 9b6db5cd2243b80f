//! Any bytes, any chunk size: `mgz dedup` output equals the model's
//! (first occurrence of each `\n`-terminated line, byte for byte), with the
//! exact backends and the recent-key cache in the path.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use mgz_dedup::{Deduper, Emit, Options, Sink, backend};

fn model(input: &[u8]) -> Vec<u8> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for line in input.split_inclusive(|&b| b == b'\n') {
        if seen.insert(line.strip_suffix(b"\n").unwrap_or(line)) {
            out.extend_from_slice(line);
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&size, input)) = data.split_first() else {
        return;
    };
    let want = model(input);
    for name in ["hash", "compact"] {
        let set = backend::open(name, &Default::default()).unwrap();
        let mut opts = Options::default();
        opts.chunk_bytes = usize::from(size) + 1;
        let mut dedup = Deduper::new(set, opts);
        let mut sink = Sink::new(Vec::new(), Emit::Firsts, None);
        dedup.run(input, &mut sink, &mut |_| {}).unwrap();
        assert_eq!(sink.into_inner(), want, "backend {name}");
    }
});
