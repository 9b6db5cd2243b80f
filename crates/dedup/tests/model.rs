//! Order and byte-exactness of `Deduper` against a simple model, on random
//! bytes with CRLF, empty lines, missing final newlines and tiny chunk sizes.

use std::collections::HashSet;

use mgz_dedup::{Deduper, Emit, Options, Sink, backend};
use proptest::prelude::*;

/// Splits into lines, each keeping its `\n` (the last may have none).
fn lines(input: &[u8]) -> Vec<&[u8]> {
    input.split_inclusive(|&b| b == b'\n').collect()
}

/// The model: first occurrences and repeats, keyed on the line without `\n`;
/// an unterminated printed line gets a `\n` only if more output follows.
fn model(inputs: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>, u64) {
    let mut seen = HashSet::new();
    let (mut firsts, mut repeats) = (Vec::new(), Vec::new());
    for input in inputs {
        for line in lines(input) {
            let key = line.strip_suffix(b"\n").unwrap_or(line);
            let out = if seen.insert(key.to_vec()) {
                &mut firsts
            } else {
                &mut repeats
            };
            if !out.is_empty() && !out.ends_with(b"\n") {
                out.push(b'\n');
            }
            out.extend_from_slice(line);
        }
    }
    (firsts, repeats, seen.len() as u64)
}

/// Exact backends, and `fingerprint` (false positives at 2^-36 per lookup:
/// none expected in these few thousand lookups, and hashing is deterministic).
const BACKENDS: [&str; 3] = ["hash", "compact", "fingerprint"];

fn run(inputs: &[Vec<u8>], emit: Emit, chunk_bytes: usize) -> (Vec<u8>, u64) {
    let mut results = BACKENDS
        .iter()
        .map(|b| run_on(b, inputs, emit, chunk_bytes));
    let first = results.next().unwrap();
    for (other, name) in results.zip(&BACKENDS[1..]) {
        assert_eq!(other, first, "backend {name} disagrees with hash");
    }
    first
}

fn run_on(backend: &str, inputs: &[Vec<u8>], emit: Emit, chunk_bytes: usize) -> (Vec<u8>, u64) {
    let set = backend::open(backend, &Default::default()).unwrap();
    let mut opts = Options::default();
    opts.chunk_bytes = chunk_bytes;
    let mut dedup = Deduper::new(set, opts);
    let mut sink = Sink::new(Vec::new(), emit, None);
    for input in inputs {
        dedup.run(&input[..], &mut sink, &mut |_| {}).unwrap();
    }
    let printed = sink.printed();
    let stats = dedup.stats();
    assert_eq!(stats.lines_read, stats.distinct + stats.duplicates);
    (
        sink.into_inner(),
        if emit == Emit::Nothing {
            printed
        } else {
            stats.distinct
        },
    )
}

/// Bytes biased towards line structure so that repeats are common.
fn line_bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => Just(b'\n'),
        2 => Just(b'\r'),
        3 => Just(b'a'),
        2 => Just(b'b'),
        1 => Just(0xff_u8),
        1 => Just(0_u8),
        1 => any::<u8>(),
    ];
    proptest::collection::vec(byte, 0..200)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn firsts_match_the_model(input in line_bytes(), chunk in 1usize..40) {
        let inputs = [input];
        let (want, _, distinct) = model(&inputs);
        let (got, got_distinct) = run(&inputs, Emit::Firsts, chunk);
        prop_assert_eq!(got, want);
        prop_assert_eq!(got_distinct, distinct);
    }

    #[test]
    fn repeats_are_the_complement(input in line_bytes(), chunk in 1usize..40) {
        let inputs = [input];
        let (_, want, _) = model(&inputs);
        prop_assert_eq!(run(&inputs, Emit::Repeats, chunk).0, want);
    }

    #[test]
    fn several_inputs_share_one_set(
        inputs in proptest::collection::vec(line_bytes(), 1..4),
        chunk in 1usize..40,
    ) {
        let (want, _, distinct) = model(&inputs);
        prop_assert_eq!(run(&inputs, Emit::Firsts, chunk).0, want);
        let (counted_out, counted) = run(&inputs, Emit::Nothing, chunk);
        prop_assert!(counted_out.is_empty());
        prop_assert_eq!(counted, distinct);
    }
}

#[test]
fn crlf_and_lf_are_different_lines_like_huniq() {
    let (got, _) = run(&[b"a\r\na\na\r\n\n\r\n\n".to_vec()], Emit::Firsts, 1 << 20);
    assert_eq!(got, b"a\r\na\n\n\r\n");
}

#[test]
fn a_missing_final_newline_is_kept_and_matches_its_terminated_twin() {
    let (got, _) = run(&[b"x\ny".to_vec()], Emit::Firsts, 3);
    assert_eq!(got, b"x\ny");
    let (got, _) = run(&[b"y\nx\ny".to_vec()], Emit::Firsts, 3);
    assert_eq!(got, b"y\nx\n");
}

#[test]
fn multi_megabyte_lines_are_exact_and_whole() {
    let mut long_a = vec![b'a'; 3 << 20];
    let mut long_b = long_a.clone();
    *long_b.last_mut().unwrap() = b'b'; // differs only in the last byte
    long_a.push(b'\n');
    long_b.push(b'\n');
    let input = [
        long_a.clone(),
        long_b.clone(),
        long_a.clone(),
        b"end".to_vec(),
    ]
    .concat();
    let (got, distinct) = run(&[input], Emit::Firsts, 64 << 10);
    assert_eq!(distinct, 3);
    assert_eq!(got, [long_a, long_b, b"end".to_vec()].concat());
}
