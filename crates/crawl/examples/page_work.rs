//! The crawler's own CPU work on fetched pages, once over a directory of
//! HTML files: extraction (links, text) and the top terms of the text.
//! For instruction counts that do not depend on the machine's load:
//! `valgrind --tool=callgrind target/release/examples/page_work [DIR]`
//! (default DIR: Debian's postgresql-doc-15 HTML, the wall-time benchmark's
//! site). Prints pages, bytes, links and terms found, so the work is used.
//! `page_work DIR --no-text`: what `mgz crawl --no-text` does instead
//! (no visible text, so no top terms).

use mgz_crawl::{extract, terms};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/usr/share/doc/postgresql-doc-15/html".into());
    let text = std::env::args().nth(2).as_deref() != Some("--no-text");
    let mut files: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(d) => d.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => {
            eprintln!("{dir}: {e}");
            std::process::exit(2);
        }
    };
    files.retain(|p| p.extension().is_some_and(|x| x == "html"));
    files.sort();
    let (mut pages, mut bytes, mut links, mut found, mut text_bytes) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    for f in &files {
        let Ok(body) = std::fs::read(f) else { continue };
        let ex = extract::extract_with(&body, Some("text/html"), extract::DEFAULT_AGENT, text);
        found += terms::top_terms(&ex.text, 10).len();
        links += ex.links.len();
        text_bytes += ex.text.len();
        bytes += body.len();
        pages += 1;
    }
    println!(
        "{pages} pages, {bytes} bytes, {links} links, {text_bytes} bytes of text, {found} terms"
    );
}
