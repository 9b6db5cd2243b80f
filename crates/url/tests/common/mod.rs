//! Locating test data shared by the integration tests.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};

/// The project's shared data directory (`shared/data`): `$MGZ_SHARED`
/// (the `shared` dir or its `data` dir), else the first ancestor of this
/// crate holding `shared/data`.
pub fn shared_data() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MGZ_SHARED") {
        let dir = PathBuf::from(dir);
        return [dir.join("data"), dir]
            .into_iter()
            .find(|d| d.join("canon_vectors.jsonl").is_file());
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared").join("data"))
        .find(|d| d.join("canon_vectors.jsonl").is_file())
}

/// `name` from the shared data dir, else this crate's `tests/data` copy.
pub fn data_file(name: &str) -> Option<PathBuf> {
    let shared = shared_data().map(|d| d.join(name)).filter(|p| p.is_file());
    shared.or_else(|| {
        let local = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name);
        local.is_file().then_some(local)
    })
}

/// Lines of a data file (UTF-8).
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .lines()
        .map(str::to_string)
        .collect()
}
