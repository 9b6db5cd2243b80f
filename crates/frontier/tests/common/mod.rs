//! Helpers shared by the tests that make older state directories or list
//! what a frontier holds.
#![allow(dead_code)] // each test crate uses its own subset

use std::path::Path;

/// The `FORMAT` file as the store module documents it:
/// `"MGZF" | version u32 LE | xxh3-64 of the first 8 bytes, LE`.
pub fn format_file(version: u32) -> Vec<u8> {
    let mut b = b"MGZF".to_vec();
    b.extend_from_slice(&version.to_le_bytes());
    let sum = xxhash_rust::xxh3::xxh3_64(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    b
}

/// Every URL of the default crawl with its next-fetch time, sorted.
pub fn listed(f: &mgz_frontier::Frontier) -> Vec<(String, u64)> {
    let mut v: Vec<_> = f
        .list_urls(&mgz_frontier::UrlQuery::default())
        .unwrap()
        .into_iter()
        .map(|r| (r.url, r.next_fetch))
        .collect();
    v.sort();
    v
}

/// Marks the state in `dir` as format `version`.
pub fn write_format(dir: &Path, version: u32) {
    std::fs::write(dir.join("FORMAT"), format_file(version)).unwrap();
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn skip_varint(b: &[u8], at: &mut usize) {
    while b[*at] >= 0x80 {
        *at += 1;
    }
    *at += 1;
}

/// A completed `urls` value of format 9 (`2 | 2 | depth | created |
/// metadata`, the URL left to the key) rewritten as formats 6 to 8 wrote
/// it: `2 | 1 | scheme code | depth | created | URL after the scheme |
/// metadata` (`codec` documents both). `url_key` is the entry key after
/// its queue id; the URL is the canonical one it encodes.
pub fn completed_with_url(v: &[u8], url_key: &[u8]) -> Vec<u8> {
    assert_eq!(&v[..2], &[2, 2], "a format-9 completed value");
    let url = mgz_url::CanonicalUrl::from_key_bytes(url_key).unwrap();
    let url = url.as_str();
    let (code, rest) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
        (Some(r), _) => (1, r),
        (_, Some(r)) => (2, r),
        _ => (0, url),
    };
    let mut at = 2;
    skip_varint(v, &mut at);
    skip_varint(v, &mut at);
    let mut out = vec![2, 1, code];
    out.extend_from_slice(&v[2..at]);
    put_varint(&mut out, rest.len() as u64);
    out.extend_from_slice(rest.as_bytes());
    out.extend_from_slice(&v[at..]);
    out
}
