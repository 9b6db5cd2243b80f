//! `--canonicalize`: URL variants collapse to the first spelling; lines that
//! are not URLs pass through as plain lines, or are reported and skipped in
//! strict mode.

use mgz_dedup::{Deduper, Emit, KeyMode, Options, Sink, backend};
use mgz_url::Policy;

fn dedup(input: &[u8], policy: Policy, strict: bool) -> (Vec<u8>, Vec<(u64, Vec<u8>)>) {
    let set = backend::open("hash", &Default::default()).unwrap();
    let mut opts = Options::default();
    opts.key = KeyMode::Canonical(policy);
    opts.strict = strict;
    let mut dedup = Deduper::new(set, opts);
    let mut sink = Sink::new(Vec::new(), Emit::Firsts, None);
    let mut rejected = Vec::new();
    dedup
        .run(input, &mut sink, &mut |r| {
            rejected.push((r.line_no, r.line.to_vec()))
        })
        .unwrap();
    assert_eq!(dedup.stats().rejected, rejected.len() as u64);
    (sink.into_inner(), rejected)
}

const VARIANTS: &[u8] = b"HTTP://Example.COM:80/a/../b#top\n\
http://example.com/b\n\
http://example.com/b\r\n\
http://EXAMPLE.com/b?\n\
http://example.com/c\n";

#[test]
fn url_variants_collapse_to_the_first_line_as_given() {
    let (out, _) = dedup(VARIANTS, Policy::safe(), false);
    assert_eq!(
        out,
        b"HTTP://Example.COM:80/a/../b#top\nhttp://example.com/c\n"
    );
}

#[test]
fn unparsable_lines_are_plain_lines_unless_strict() {
    let input = b"not a url\nhttp://a.example/\nnot a url\n\xff\xfe\nhttp://a.example/#x\n\n\n";
    let (out, rejected) = dedup(input, Policy::safe(), false);
    assert_eq!(out, b"not a url\nhttp://a.example/\n\xff\xfe\n\n");
    assert!(rejected.is_empty());

    let (out, rejected) = dedup(input, Policy::safe(), true);
    assert_eq!(out, b"http://a.example/\n");
    let numbers: Vec<u64> = rejected.iter().map(|r| r.0).collect();
    assert_eq!(numbers, [1, 3, 4, 6, 7]);
    assert_eq!(rejected[2].1, b"\xff\xfe\n");
}

#[test]
fn strict_line_numbers_count_across_chunks() {
    let mut input = Vec::new();
    for i in 0..50 {
        input.extend_from_slice(format!("http://h{i}.example/\nbad {i}\n").as_bytes());
    }
    let set = backend::open("hash", &Default::default()).unwrap();
    let mut opts = Options::default();
    opts.key = KeyMode::Canonical(Policy::safe());
    opts.strict = true;
    opts.chunk_bytes = 7;
    let mut dedup = Deduper::new(set, opts);
    let mut sink = Sink::new(Vec::new(), Emit::Firsts, None);
    let mut numbers = Vec::new();
    dedup
        .run(&input[..], &mut sink, &mut |r| numbers.push(r.line_no))
        .unwrap();
    assert_eq!(numbers, (1..=50).map(|i| 2 * i).collect::<Vec<u64>>());
}
