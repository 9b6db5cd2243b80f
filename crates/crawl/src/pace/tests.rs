use super::*;

fn file(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(FILE)).unwrap()
}

fn bound(dir: &Path) -> u64 {
    parse_bound(file(dir).as_bytes()).unwrap()
}

#[test]
fn a_fresh_crawl_has_no_floor_and_opening_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = Pace::open(dir.path()).unwrap();
    assert_eq!(p.earlier(), None);
    assert_eq!(p.floor(SystemTime::now()), None);
    p.keep_up(); // nothing in flight: no write
    p.finish(); // nothing sent: no write
    assert!(!dir.path().join(FILE).exists());
}

#[test]
fn a_request_is_covered_by_the_file_before_it_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let p = Pace::open(dir.path()).unwrap();
    let before = unix_ms(SystemTime::now());
    let guard = p.start();
    let promised = bound(dir.path());
    assert!(promised >= before + ms(AHEAD), "{promised} {before}");
    // A second request within the promise writes nothing more.
    let again = p.start();
    assert_eq!(bound(dir.path()), promised);
    drop((guard, again));
    // A rerun reads the bound; its floor is the bound, or now if earlier.
    let q = Pace::open(dir.path()).unwrap();
    let t = UNIX_EPOCH + Duration::from_millis(promised);
    assert_eq!(q.earlier(), Some(t));
    assert_eq!(q.floor(t + AHEAD), Some(t));
    assert_eq!(q.floor(t - AHEAD), Some(t - AHEAD), "the clock set back");
}

#[test]
fn the_ticker_extends_the_promise_only_while_requests_are_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let p = Pace::open(dir.path()).unwrap();
    let guard = p.start();
    let first = bound(dir.path());
    // Within RENEW_AT of the promise's end the ticker writes again.
    std::thread::sleep(AHEAD - RENEW_AT + Duration::from_millis(30));
    p.keep_up();
    let second = bound(dir.path());
    assert!(second > first, "{second} {first}");
    drop(guard);
    std::thread::sleep(AHEAD - RENEW_AT + Duration::from_millis(30));
    p.keep_up();
    assert_eq!(bound(dir.path()), second, "idle: not extended");
    // The end of the run writes the exact time, before the promise.
    let now = unix_ms(SystemTime::now());
    p.finish();
    let last = bound(dir.path());
    assert!(now <= last && last < second, "{now} {last} {second}");
    assert!(!dir.path().join("last-request.tmp").exists());
}

#[test]
fn a_run_that_ends_mid_request_or_sends_nothing_keeps_the_promise() {
    let dir = tempfile::tempdir().unwrap();
    let p = Pace::open(dir.path()).unwrap();
    let guard = p.start();
    let promised = bound(dir.path());
    p.finish(); // a request still in flight: the promise stands
    assert_eq!(bound(dir.path()), promised);
    drop(guard);
    // A rerun that sends nothing leaves the earlier bound as it was.
    let q = Pace::open(dir.path()).unwrap();
    q.finish();
    assert_eq!(bound(dir.path()), promised);
}

#[test]
fn a_file_that_is_not_a_time_is_refused_and_kept() {
    let cases: &[&[u8]] = &[
        b"",
        b"\n",
        b"-1\n",
        b"1733380000123.5\n",
        b" 17\n",
        b"17\r\n",
        b"\xff\xfe1\n",
        b"99999999999999999999999\n",
        b"2026-12-05T07:00:00Z\n",
        &[b'7'; 100],
    ];
    for bytes in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        std::fs::write(&path, bytes).unwrap();
        match Pace::open(dir.path()) {
            Err(CrawlError::State { path: p, reason }) => {
                assert!(p.ends_with(FILE), "{p}");
                assert!(!reason.is_empty());
            }
            Err(e) => panic!("{bytes:?}: wrong error {e}"),
            Ok(p) => panic!("{bytes:?} read as {:?}", p.earlier()),
        }
        assert_eq!(&std::fs::read(&path).unwrap(), bytes, "left as it was");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(FILE)).unwrap();
    assert!(matches!(
        Pace::open(dir.path()),
        Err(CrawlError::State { .. })
    ));
}

#[test]
fn a_failed_write_is_survived_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = Pace::open(dir.path()).unwrap();
    // The rename cannot replace a directory: every write fails.
    std::fs::create_dir(dir.path().join(FILE)).unwrap();
    let guard = p.start();
    p.keep_up();
    drop(guard);
    p.finish();
    assert!(dir.path().join(FILE).is_dir());
    assert!(!dir.path().join("last-request.tmp").exists());
}
