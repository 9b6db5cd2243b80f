//! Seeds read from a file in batches (`mgz_crawl::seeds`): the crawl they
//! start is the one the same seeds given inline start, lines that are not
//! seeds are skipped, and a crawl stopped before its seeds are put puts
//! them on the next run.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use mgz_crawl::traps::Scope;

mod common;

/// The crawl of `sim` into `dir` to `max_depth`, its seeds read from `file`
/// only.
fn file_config(
    sim: &mgz_sim::SimConfig,
    server: &mgz_sim::SimServer,
    dir: &std::path::Path,
    max_depth: u32,
    file: std::path::PathBuf,
) -> mgz_crawl::CrawlConfig {
    let mut cfg = common::crawl_config(sim, server, dir, max_depth);
    cfg.seeds.clear();
    cfg.seeds_file = Some(file);
    cfg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeds_file_crawls_what_the_same_seeds_inline_do() {
    let (sim, server) = common::small_sim(11, 6, 12).await;
    let seeds = mgz_sim::seeds(&sim);
    assert!(seeds.len() >= 2, "{seeds:?}");

    let inline_dir = tempfile::tempdir().unwrap();
    let mut inline = common::crawl_config(&sim, &server, inline_dir.path(), 2);
    inline.scope = Scope::Host;
    common::run(inline).await;
    let want = common::stored_pages(&inline_dir.path().join("pages.db"));
    assert!(want.len() > seeds.len(), "{want:?}");

    // The same seeds in a file, among a comment, blank lines, a line that
    // is not UTF-8 and one that is not a URL.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seeds.txt");
    let mut f = std::fs::File::create(&file).unwrap();
    writeln!(f, "# the sim's seeds").unwrap();
    for (i, s) in seeds.iter().enumerate() {
        writeln!(f, "  {s}  \n").unwrap();
        if i == 0 {
            f.write_all(b"http://\xff.test/\nnot a url\n").unwrap();
        }
    }
    drop(f);
    let mut cfg = file_config(&sim, &server, dir.path(), 2, file);
    cfg.scope = Scope::Host;
    common::run(cfg).await;
    let got = common::stored_pages(&dir.path().join("pages.db"));
    assert_eq!(got, want, "{}", common::diff(&got, &want));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_stopped_before_its_seeds_are_put_puts_them_on_the_next_run() {
    let (sim, server) = common::small_sim(12, 4, 8).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seeds.txt");
    std::fs::write(&file, mgz_sim::seeds(&sim).join("\n")).unwrap();
    let cfg = file_config(&sim, &server, dir.path(), 1, file.clone());

    let stopped = mgz_crawl::crawl(cfg.clone(), Arc::new(AtomicBool::new(true)))
        .await
        .unwrap();
    assert_eq!(stopped.pages_fetched, 0, "{stopped:?}");
    assert!(common::stored_pages(&dir.path().join("pages.db")).is_empty());

    let done = common::run(cfg.clone()).await;
    assert!(done.pages_fetched > 0, "{done:?}");
    let first = common::stored_pages(&dir.path().join("pages.db"));
    // The same crawl from a fresh state stores the same pages.
    let fresh = tempfile::tempdir().unwrap();
    common::run(file_config(&sim, &server, fresh.path(), 1, file)).await;
    let want = common::stored_pages(&fresh.path().join("pages.db"));
    assert_eq!(first, want, "{}", common::diff(&first, &want));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeds_pipe_read_once_is_crawled_as_a_file_is() {
    let (sim, server) = common::small_sim(13, 5, 10).await;
    let seeds = mgz_sim::seeds(&sim);
    let file_dir = tempfile::tempdir().unwrap();
    let file = file_dir.path().join("seeds.txt");
    std::fs::write(&file, seeds.join("\n")).unwrap();
    common::run(file_config(&sim, &server, file_dir.path(), 1, file)).await;
    let want = common::stored_pages(&file_dir.path().join("pages.db"));
    assert!(!want.is_empty());

    // A named pipe, as `--seeds <(cmd)` gives: it can be read only once.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("seeds.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
    let writer = {
        let (fifo, text) = (fifo.clone(), seeds.join("\n"));
        std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
    };
    common::run(file_config(&sim, &server, dir.path(), 1, fifo)).await;
    writer.join().unwrap();
    let got = common::stored_pages(&dir.path().join("pages.db"));
    assert_eq!(got, want, "{}", common::diff(&got, &want));
}
