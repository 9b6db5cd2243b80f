//! CPU per page of the crawler's own work on a fetched HTML body: link and
//! text extraction (lol_html) and the top terms of the text — the two
//! largest items of a fast crawl's profile (docs/BENCHMARKS.md, "Crawler").
//! Input: the Debian postgresql-doc-15 HTML pages when installed (the site
//! of the wall-time benchmark), else a generated documentation-like page.
//! Run: `cargo bench -p mgz-crawl --bench page`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mgz_crawl::{extract, terms};

const SITE: &str = "/usr/share/doc/postgresql-doc-15/html";

/// Up to 200 pages of the site, or one generated page.
fn pages() -> Vec<Vec<u8>> {
    let mut files: Vec<_> = std::fs::read_dir(SITE)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "html"));
    files.sort();
    let pages: Vec<Vec<u8>> = files
        .iter()
        .take(200)
        .filter_map(|p| std::fs::read(p).ok())
        .collect();
    if !pages.is_empty() {
        return pages;
    }
    let para = "<p>The <code>VACUUM</code> command reclaims storage occupied by dead \
                tuples; see <a href=\"routine-vacuuming.html\">Routine Vacuuming</a>.</p>\n";
    vec![
        format!(
            "<html><head><title>VACUUM</title></head><body>{}</body></html>",
            para.repeat(200)
        )
        .into_bytes(),
    ]
}

fn bench(c: &mut Criterion) {
    let pages = pages();
    let bytes: usize = pages.iter().map(Vec::len).sum();
    let mut g = c.benchmark_group("page");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("extract", |b| {
        b.iter(|| {
            for p in &pages {
                std::hint::black_box(extract::extract(p, Some("text/html")));
            }
        })
    });
    let texts: Vec<String> = pages
        .iter()
        .map(|p| extract::extract(p, Some("text/html")).text)
        .collect();
    g.bench_function("top_terms", |b| {
        b.iter(|| {
            for t in &texts {
                std::hint::black_box(terms::top_terms(t, 10));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
