//! Canonicalisation throughput on real URLs (one core).
//!
//! Corpus: the 10,000 Wikipedia URLs of `shared/data/wiki-urls-10000`
//! (when found) plus 4,885 absolute hrefs from the PostgreSQL 15 HTML docs
//! (`tests/data/postgres-doc-hrefs.txt`). Baseline in the same run: the
//! bare WHATWG parse (`url::Url::parse`) that canonicalisation starts with.
//!
//! `cargo bench -p mgz-url --bench canonicalize`

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mgz_url::{CanonicalUrl, PlainUrl, Policy, SurtOptions, ia, surt};

fn corpus() -> Vec<String> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![here.join("tests/data/postgres-doc-hrefs.txt")];
    let shared = std::env::var_os("MGZ_SHARED")
        .map(|d| Path::new(&d).join("data/wiki-urls-10000"))
        .into_iter()
        .chain(
            here.ancestors()
                .map(|a| a.join("shared/data/wiki-urls-10000")),
        )
        .find(|p| p.is_file());
    files.extend(shared);
    let urls: Vec<String> = files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .expect("reading corpus")
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    eprintln!("corpus: {} URLs from {files:?}", urls.len());
    urls
}

fn bench(c: &mut Criterion) {
    let urls = corpus();
    let safe = Policy::safe();
    let aggressive = Policy::aggressive();
    let parsed: Vec<CanonicalUrl> = urls
        .iter()
        .filter_map(|u| CanonicalUrl::parse(u, None, &safe).ok())
        .collect();
    let mut g = c.benchmark_group("url");
    g.throughput(Throughput::Elements(urls.len() as u64));
    g.bench_function("whatwg_parse_baseline", |b| {
        b.iter(|| {
            urls.iter()
                .filter(|u| url::Url::parse(black_box(u)).is_ok())
                .count()
        })
    });
    g.bench_function("canonicalize_safe", |b| {
        b.iter(|| {
            urls.iter()
                .filter(|u| CanonicalUrl::parse(black_box(u), None, &safe).is_ok())
                .count()
        })
    });
    g.bench_function("canonicalize_aggressive", |b| {
        b.iter(|| {
            urls.iter()
                .filter(|u| CanonicalUrl::parse(black_box(u), None, &aggressive).is_ok())
                .count()
        })
    });
    g.bench_function("ia_surt", |b| {
        b.iter(|| {
            urls.iter()
                .filter(|u| ia::surt(black_box(u), SurtOptions::default()).is_ok())
                .count()
        })
    });
    g.throughput(Throughput::Elements(parsed.len() as u64));
    g.bench_function("write_key", |b| {
        let mut key = Vec::with_capacity(4096);
        b.iter(|| {
            parsed.iter().fold(0, |n, u| {
                key.clear();
                u.write_key(&mut key);
                n + key.len()
            })
        })
    });
    // The frontier's put path: canonical text recognised without parsing,
    // then its key (`PlainUrl`; the parser takes the rest).
    let texts: Vec<&str> = parsed.iter().map(CanonicalUrl::as_str).collect();
    g.bench_function("plain_check_and_key", |b| {
        b.iter(|| {
            texts.iter().fold(0, |n, t| {
                PlainUrl::check(black_box(t), &safe).map_or(n, |p| n + p.key_bytes().len())
            })
        })
    });
    g.bench_function("surt_of_canonical", |b| {
        b.iter(|| {
            parsed
                .iter()
                .map(|u| surt(black_box(u), SurtOptions::default()).len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
