//! Read-only state: a directory without write permission, or a state file
//! that cannot be opened for writing, must give a clear error at open that
//! names the path, never a panic or a half-opened frontier.
//!
//! Root ignores permission bits, so each test first checks that the bits are
//! enforced (by trying to create a file) and otherwise skips, saying why. To
//! run them from a root shell, drop privileges for the test binary:
//! `setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR=/tmp target/debug/deps/read_only-*`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use mgz_frontier::{Durability, Frontier, FrontierError, FrontierOptions, UrlItem};

fn opts() -> FrontierOptions {
    FrontierOptions {
        durability: Durability::OsBuffer,
        ..FrontierOptions::default()
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether permission bits stop this process (false when running as root).
fn permissions_enforced() -> bool {
    let dir = tempfile::tempdir().unwrap();
    chmod(dir.path(), 0o555);
    let refused = std::fs::write(dir.path().join("probe"), b"x").is_err();
    chmod(dir.path(), 0o755);
    if !refused {
        eprintln!(
            "SKIPPED: this process may write into a 0555 directory (running as root?), \
             so permission bits cannot make the state read-only here"
        );
    }
    refused
}

/// Every directory and file under `dir`, `dir` included.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        if out[i].is_dir() {
            let mut children: Vec<PathBuf> = std::fs::read_dir(&out[i])
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            out.append(&mut children);
        }
        i += 1;
    }
    out
}

fn set_tree_writable(dir: &Path, writable: bool) {
    for p in tree(dir) {
        let mode = match (p.is_dir(), writable) {
            (true, true) => 0o755,
            (true, false) => 0o555,
            (false, true) => 0o644,
            (false, false) => 0o444,
        };
        chmod(&p, mode);
    }
}

fn build(dir: &Path) {
    let f = Frontier::open(dir, opts()).unwrap();
    f.put_discovered(&[
        UrlItem::new("http://a.example/"),
        UrlItem::new("http://b.example/"),
    ])
    .unwrap();
    f.close().unwrap();
}

/// The error must be `ReadOnly` and its message must name a path under `dir`.
fn assert_read_only_naming(err: &FrontierError, dir: &Path) {
    assert!(matches!(err, FrontierError::ReadOnly { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains(&dir.display().to_string()),
        "names the path: {text}"
    );
    assert!(text.contains("read-only or not writable"), "{text}");
}

#[test]
fn new_state_in_a_read_only_directory_is_refused_naming_it() {
    if !permissions_enforced() {
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    chmod(parent.path(), 0o555);
    let state = parent.path().join("state");
    let err = Frontier::open(&state, opts()).unwrap_err();
    chmod(parent.path(), 0o755);
    eprintln!("{err}");
    assert_read_only_naming(&err, parent.path());
}

#[test]
fn existing_state_made_read_only_is_refused_naming_it() {
    if !permissions_enforced() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    set_tree_writable(dir.path(), false);
    let result = Frontier::open(dir.path(), opts());
    set_tree_writable(dir.path(), true);
    let err = result.unwrap_err();
    eprintln!("{err}");
    assert_read_only_naming(&err, dir.path());
    // Nothing was damaged: with write permission back it opens with its URLs.
    let f = Frontier::open(dir.path(), opts()).unwrap();
    assert_eq!(f.stats("", None).size, 2);
}

#[test]
fn a_read_only_state_file_is_refused_naming_the_state() {
    if !permissions_enforced() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let files: Vec<PathBuf> = tree(dir.path())
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    for p in &files {
        chmod(p, 0o444);
    }
    let result = Frontier::open(dir.path(), opts());
    for p in &files {
        chmod(p, 0o644);
    }
    match result {
        Err(err) => {
            eprintln!("{err}");
            assert_read_only_naming(&err, dir.path());
        }
        // A store that only reads its old files at open is fine, as long as
        // it opened whole; its first write must then fail clearly or work.
        Ok(f) => assert_eq!(f.stats("", None).size, 2),
    }
}
