//! Every state directory carries `FORMAT` (magic, version, checksum), checked
//! at open: another version is `FrontierError::FormatVersion` with a message
//! naming the file and both versions; nothing is opened or changed.

mod common;

use std::path::Path;

use common::format_file;

use mgz_frontier::{FORMAT_VERSION, Frontier, FrontierError, FrontierOptions, UrlItem};

fn build(dir: &Path) {
    let f = Frontier::open(dir, FrontierOptions::default()).unwrap();
    f.put_discovered(&[UrlItem::new("http://a.example/")])
        .unwrap();
    f.close().unwrap();
}

#[test]
fn our_format_file_is_the_documented_one() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let on_disk = std::fs::read(dir.path().join("FORMAT")).unwrap();
    assert_eq!(on_disk, format_file(FORMAT_VERSION));
}

#[test]
fn another_version_is_a_clear_format_version_error() {
    for version in [0, FORMAT_VERSION + 1, u32::MAX] {
        let dir = tempfile::tempdir().unwrap();
        build(dir.path());
        let path = dir.path().join("FORMAT");
        std::fs::write(&path, format_file(version)).unwrap();
        let err = Frontier::open(dir.path(), FrontierOptions::default()).unwrap_err();
        let text = err.to_string();
        eprintln!("{text}");
        match err {
            FrontierError::FormatVersion {
                found, expected, ..
            } => assert_eq!((found, expected), (version, FORMAT_VERSION)),
            other => panic!("expected FormatVersion, got {other:?}"),
        }
        assert!(
            text.contains(&path.display().to_string()),
            "names the file: {text}"
        );
        assert!(
            text.contains(&format!("format version {version}")),
            "{text}"
        );
        assert!(
            text.contains(&format!("reads version {FORMAT_VERSION}")),
            "{text}"
        );
        // Refused without touching it: the right version opens the data again.
        assert_eq!(std::fs::read(&path).unwrap(), format_file(version));
        std::fs::write(&path, format_file(FORMAT_VERSION)).unwrap();
        let f = Frontier::open(dir.path(), FrontierOptions::default()).unwrap();
        assert_eq!(f.stats("", None).size, 1);
    }
}
