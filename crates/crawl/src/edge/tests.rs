use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// What a replay handed out: each call's depth and URLs.
type Chunks = Vec<(u32, Vec<String>)>;

/// Replays `edge` at `max`, collecting what it hands out per depth.
fn replay(edge: &Edge, max: u32) -> Result<(Replayed, Chunks), CrawlError> {
    let mut got = Vec::new();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let done = rt.block_on(edge.replay(max, |d, urls| {
        got.push((d, urls));
        async { Ok(()) }
    }))?;
    Ok((done, got))
}

fn flat(chunks: &[(u32, Vec<String>)]) -> BTreeSet<(u32, String)> {
    chunks
        .iter()
        .flat_map(|(d, us)| us.iter().map(move |u| (*d, u.clone())))
        .collect()
}

fn url(i: usize) -> String {
    format!("http://h{}.test/p/{i}", i % 7)
}

#[test]
fn links_kept_at_one_depth_are_handed_out_by_a_deeper_run_and_the_file_goes() {
    let dir = tempfile::tempdir().unwrap();
    let edge = Edge::new(dir.path());
    assert_eq!(replay(&edge, 2).unwrap().0, Replayed::default());
    let urls: Vec<String> = (0..10).map(url).collect();
    assert_eq!(edge.keep(3, urls.iter().map(String::as_str)).unwrap(), 10);
    // A page repeating links writes nothing new.
    assert_eq!(edge.keep(3, urls.iter().map(String::as_str)).unwrap(), 0);
    assert_eq!(edge.entries(), 10);
    let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
    assert!(
        text.starts_with("mgz-edge 1\n3 http://h0.test/p/0\n"),
        "{text}"
    );

    let next = Edge::new(dir.path());
    let (done, got) = replay(&next, 3).unwrap();
    assert_eq!(
        done,
        Replayed {
            due: 10,
            kept: 0,
            torn: false
        }
    );
    let want: BTreeSet<_> = urls.iter().map(|u| (3, u.clone())).collect();
    assert_eq!(flat(&got), want);
    assert!(!dir.path().join(FILE).exists(), "every entry was put");
    assert!(!dir.path().join("edge.tmp").exists());
    // The next keep starts a new file with its header.
    assert_eq!(next.keep(4, ["http://a.test/x"]).unwrap(), 1);
    let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
    assert_eq!(text, "mgz-edge 1\n4 http://a.test/x\n");
}

#[test]
fn a_run_at_the_same_depth_keeps_the_entries_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let first = Edge::new(dir.path());
    first
        .keep(3, ["http://a.test/1", "http://a.test/2"])
        .unwrap();
    drop(first);
    // A second run (a resume) at the same depth: nothing due, and the
    // links it finds again are not written twice.
    let second = Edge::new(dir.path());
    let (done, got) = replay(&second, 2).unwrap();
    assert_eq!(
        done,
        Replayed {
            due: 0,
            kept: 2,
            torn: false
        }
    );
    assert!(got.is_empty());
    assert_eq!(
        second
            .keep(3, ["http://a.test/2", "http://a.test/3"])
            .unwrap(),
        1
    );
    let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
    assert_eq!(
        text,
        "mgz-edge 1\n3 http://a.test/1\n3 http://a.test/2\n3 http://a.test/3\n"
    );
    assert_eq!(second.entries(), 3);
}

#[test]
fn duplicate_lines_in_the_file_are_dropped_and_a_url_keeps_each_depth() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(FILE),
        "mgz-edge 1\n4 http://a.test/x\n4 http://a.test/x\n3 http://a.test/x\n5 http://b.test/\n",
    )
    .unwrap();
    let edge = Edge::new(dir.path());
    let (done, got) = replay(&edge, 3).unwrap();
    assert_eq!(
        done,
        Replayed {
            due: 1,
            kept: 2,
            torn: false
        }
    );
    assert_eq!(got, vec![(3, vec!["http://a.test/x".to_string()])]);
    let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
    assert_eq!(text, "mgz-edge 1\n4 http://a.test/x\n5 http://b.test/\n");
}

#[test]
fn due_entries_come_in_chunks_of_one_depth() {
    let dir = tempfile::tempdir().unwrap();
    let edge = Edge::new(dir.path());
    let many: Vec<String> = (0..CHUNK + 5).map(url).collect();
    edge.keep(2, many.iter().map(String::as_str)).unwrap();
    edge.keep(3, ["http://c.test/"]).unwrap();
    edge.keep(2, ["http://d.test/"]).unwrap();
    drop(edge);
    let (done, got) = replay(&Edge::new(dir.path()), 3).unwrap();
    assert_eq!(done.due as usize, CHUNK + 7);
    let shape: Vec<(u32, usize)> = got.iter().map(|(d, u)| (*d, u.len())).collect();
    assert_eq!(shape, vec![(2, CHUNK), (2, 5), (3, 1), (2, 1)]);
}

#[test]
fn a_last_line_cut_short_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE);
    std::fs::write(&path, "mgz-edge 1\n3 http://a.test/1\n3 http://a.te").unwrap();
    let edge = Edge::new(dir.path());
    let (done, _) = replay(&edge, 2).unwrap();
    assert_eq!(
        done,
        Replayed {
            due: 0,
            kept: 1,
            torn: true
        }
    );
    edge.keep(3, ["http://a.test/2"]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, "mgz-edge 1\n3 http://a.test/1\n3 http://a.test/2\n");
    // A header cut short (the first write failed): an empty file.
    std::fs::write(&path, "mgz-ed").unwrap();
    let edge = Edge::new(dir.path());
    assert_eq!(
        replay(&edge, 2).unwrap().0,
        Replayed {
            due: 0,
            kept: 0,
            torn: true
        }
    );
    assert!(!path.exists());
    std::fs::write(&path, "").unwrap();
    assert_eq!(
        replay(&Edge::new(dir.path()), 2).unwrap().0,
        Replayed::default()
    );
}

#[test]
fn a_file_that_is_not_an_edge_is_refused_and_left_as_it_is() {
    let cases: &[(&[u8], &str)] = &[
        (b"hello\n3 http://a.test/\n", "not an edge file"),
        (b"hello", "not an edge file"),
        (b"mgz-edge 2\n", "not an edge file"),
        (
            b"mgz-edge 1\n3 http://a.test/\nthree http://b.test/\n",
            "line 3: depth",
        ),
        (b"mgz-edge 1\n3http://a.test/\n", "line 2: not DEPTH URL"),
        (b"mgz-edge 1\n3 \n", "line 2: URL"),
        (b"mgz-edge 1\n3 http://a.test/ x\n", "line 2: URL"),
        (b"mgz-edge 1\n-1 http://a.test/\n", "line 2: depth"),
        (b"mgz-edge 1\n99999999999 http://a.test/\n", "line 2: depth"),
        (b"mgz-edge 1\n3 http://a.test/\xff\n", "line 2: not UTF-8"),
        (b"mgz-edge 1\n\n", "line 2: not DEPTH URL"),
    ];
    for (bytes, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, bytes).unwrap();
        let err = match replay(&Edge::new(dir.path()), 9) {
            Err(e) => e,
            Ok(r) => panic!("{:?} replayed as {r:?}", String::from_utf8_lossy(bytes)),
        };
        assert!(matches!(err, CrawlError::State { .. }), "{err}");
        assert!(err.to_string().contains(want), "{err} lacks {want:?}");
        assert_eq!(&std::fs::read(&path).unwrap(), bytes, "left untouched");
        assert!(!dir.path().join("edge.tmp").exists());
    }
}

#[test]
fn a_line_longer_than_the_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE);
    let mut bytes = b"mgz-edge 1\n3 http://a.test/".to_vec();
    bytes.resize(bytes.len() + MAX_LINE + 10, b'a');
    bytes.push(b'\n');
    std::fs::write(&path, &bytes).unwrap();
    let err = replay(&Edge::new(dir.path()), 9).unwrap_err();
    assert!(err.to_string().contains("longer than"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap().len(), bytes.len());
}

#[test]
fn a_failed_put_leaves_the_file_for_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let edge = Edge::new(dir.path());
    edge.keep(3, ["http://a.test/1"]).unwrap();
    edge.keep(4, ["http://a.test/2"]).unwrap();
    let before = std::fs::read(dir.path().join(FILE)).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let err = rt
        .block_on(Edge::new(dir.path()).replay(3, |_, _| async {
            Err(CrawlError::Frontier("refused".into()))
        }))
        .unwrap_err();
    assert!(matches!(err, CrawlError::Frontier(_)));
    assert_eq!(std::fs::read(dir.path().join(FILE)).unwrap(), before);
    assert!(!dir.path().join("edge.tmp").exists());
}

#[test]
fn urls_an_entry_cannot_hold_are_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let edge = Edge::new(dir.path());
    assert_eq!(
        edge.keep(3, ["", "http://a.test/a b", "http://a.test/\n"])
            .unwrap(),
        0
    );
    assert!(!dir.path().join(FILE).exists());
}

#[test]
fn a_write_that_fails_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    // The file's place is taken by a directory.
    std::fs::create_dir(dir.path().join(FILE)).unwrap();
    let err = Edge::new(dir.path())
        .keep(3, ["http://a.test/"])
        .unwrap_err();
    assert!(matches!(err, CrawlError::State { .. }), "{err}");
    assert!(err.to_string().contains("cannot be written"), "{err}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Runs of keeps and replays against a model: each replay hands out
    /// exactly the distinct (depth, URL) entries within its depth kept
    /// since, and keeps the rest.
    #[test]
    fn keeps_and_replays_match_a_model(
        runs in proptest::collection::vec(
            (0u32..4, proptest::collection::vec((0u32..5, 0usize..12), 0..30)),
            1..6,
        )
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut model: BTreeMap<(u32, String), ()> = BTreeMap::new();
        for (max, keeps) in runs {
            let edge = Edge::new(dir.path());
            let (_, got) = replay(&edge, max).unwrap();
            let due: BTreeSet<_> = model.keys().filter(|(d, _)| *d <= max).cloned().collect();
            let got_set = flat(&got);
            let got_len: usize = got.iter().map(|(_, u)| u.len()).sum();
            proptest::prop_assert_eq!(got_len, got_set.len(), "an entry handed out twice");
            proptest::prop_assert_eq!(got_set, due);
            model.retain(|(d, _), _| *d > max);
            proptest::prop_assert_eq!(edge.entries(), model.len() as u64);
            for (depth, i) in keeps {
                let u = url(i);
                let new = !model.contains_key(&(depth, u.clone()));
                proptest::prop_assert_eq!(edge.keep(depth, [u.as_str()]).unwrap(), usize::from(new));
                model.insert((depth, u), ());
            }
        }
    }
}

#[test]
fn the_set_of_kept_urls_costs_a_few_bytes_an_entry() {
    // Measured: 5.2 B an entry at 100,000 entries, 5.7 at 1,000,000.
    let dir = tempfile::tempdir().unwrap();
    let edge = Edge::new(dir.path());
    let n = 100_000;
    let urls: Vec<String> = (0..n)
        .map(|i| format!("http://m{}.test/q/{i}", i % 97))
        .collect();
    for page in urls.chunks(50) {
        edge.keep(3, page.iter().map(String::as_str)).unwrap();
    }
    assert_eq!(edge.entries(), n as u64);
    let per_entry = edge.heap_bytes() as f64 / n as f64;
    assert!(per_entry < 7.0, "{per_entry:.2} B an entry");
}
