//! `--warc FILE` output is read completely by the Python `warcio` tool.
//! Skips (saying why) when no venv with warcio is found through MGZ_VENV or
//! `<repo>/.venv` (CI creates it from .ci/requirements.txt).

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::*;

fn warcio() -> Option<PathBuf> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let venv = std::env::var_os("MGZ_VENV")
        .map(PathBuf::from)
        .unwrap_or(repo.join(".venv"));
    let exe = venv.join("bin/warcio");
    exe.exists().then_some(exe)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warcio_reads_every_record() {
    let Some(warcio) = warcio() else {
        eprintln!("SKIPPED: no warcio in MGZ_VENV or <repo>/.venv (create it with .ci/install.sh)");
        return;
    };
    let (sim, server) = small_sim(9, 10, 150).await;
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("crawl.warc");
    let mut cfg = crawl_config(&sim, &server, dir.path(), 2);
    cfg.warc = Some(warc.clone());
    let summary = run(cfg).await;
    assert!(summary.pages_fetched > 10, "{summary:?}");
    let out = Command::new(&warcio)
        .arg("index")
        .arg(&warc)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "warcio index failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = String::from_utf8(out.stdout).unwrap();
    let types: Vec<String> = index
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["warc-type"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let count = |t: &str| types.iter().filter(|x| *x == t).count() as u64;
    assert_eq!(count("warcinfo"), 1);
    assert_eq!(count("response"), summary.pages_fetched, "{index}");
    assert_eq!(count("request"), summary.pages_fetched);
}
