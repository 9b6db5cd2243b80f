//! `mgz crawl` given unusable input: it fails before fetching anything,
//! saying what is wrong, and creates nothing.

use std::process::Command;

fn crawl(dir: &std::path::Path, state: &std::path::Path, args: &[&str]) -> (bool, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mgz"));
    cmd.arg("crawl").arg("--state").arg(state);
    // The page database in `dir`, unless the test names its own.
    if !args.contains(&"--db") {
        cmd.arg("--db").arg(dir.join("pages.db"));
    }
    let out = cmd.args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs a crawl that must be refused before anything is made: asserts it
/// failed and made no state, and returns what it said.
fn refused(dir: &std::path::Path, state: &std::path::Path, args: &[&str]) -> String {
    let (ok, err) = crawl(dir, state, args);
    assert!(!ok, "{args:?} was taken");
    assert!(!state.exists(), "{args:?}: the state was made");
    err
}

#[test]
fn seeds_that_are_not_urls_are_named_and_none_left_fails() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // It used to run, fetch nothing and exit 0 without a word.
    let (ok, err) = crawl(dir.path(), &state, &["not a url", "ftp://files.test/x"]);
    assert!(!ok);
    assert!(err.contains("seed \"not a url\" skipped"), "{err}");
    assert!(err.contains("seed \"ftp://files.test/x\" skipped"), "{err}");
    assert!(err.contains("no usable seed URL: all 2 skipped"), "{err}");
    assert!(!state.exists(), "nothing was created");
    assert!(!dir.path().join("pages.db").exists());
}

#[test]
fn a_seed_without_a_scheme_says_what_to_give_instead() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let (ok, err) = crawl(
        dir.path(),
        &state,
        &[
            "www.example.test/docs?x=1",
            "localhost",
            "/just/a/path",
            "a b",
        ],
    );
    assert!(!ok);
    assert!(
        err.contains(
            "seed \"www.example.test/docs?x=1\" skipped: relative URL without a base \
             (no scheme) (with a scheme: https://www.example.test/docs?x=1)"
        ),
        "{err}"
    );
    // No hint where adding a scheme does not make a site's URL.
    for seed in ["localhost", "/just/a/path", "a b"] {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("seed {seed:?} skipped")))
            .unwrap_or_else(|| panic!("{seed}: {err}"));
        assert!(!line.contains("with a scheme"), "{line}");
    }
    assert!(err.contains("no usable seed URL: all 4 skipped"), "{err}");
    assert!(!state.exists(), "nothing was created");
}

#[test]
fn a_seeds_file_without_a_seed_or_absent_fails_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "# none yet\n\n").unwrap();
    let absent = dir.path().join("absent.txt");
    for (file, says) in [(&empty, "no seed URL"), (&absent, "absent.txt")] {
        let err = refused(dir.path(), &state, &["--seeds", file.to_str().unwrap()]);
        assert!(err.contains(says), "{file:?}: {err}");
        assert!(!dir.path().join("pages.db").exists());
    }
}

#[test]
fn a_state_path_that_is_a_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::write(&state, b"not a directory").unwrap();
    let (ok, err) = crawl(dir.path(), &state, &["http://127.0.0.1:9/"]);
    assert!(!ok);
    // It printed only `io: File exists (os error 17)`.
    assert!(
        err.contains(&state.display().to_string()) && err.contains("cannot be made a directory"),
        "{err}"
    );
    assert_eq!(std::fs::read(&state).unwrap(), b"not a directory");
}

#[test]
fn a_delay_factor_out_of_range_is_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    for bad in ["-1", "101", "NaN", "inf", "two", ""] {
        let arg = format!("--delay-factor={bad}");
        let err = refused(dir.path(), &state, &[&arg, "http://127.0.0.1:9/"]);
        assert!(err.contains("--delay-factor"), "{bad:?}: {err}");
    }
}

/// `--concurrency 0` and `--per-host 0` were taken as 1 without a word,
/// where `--max-pages 0` and `--max-connections 0` mean "no limit": a
/// count that allows no fetch is refused, naming the flag.
#[test]
fn no_fetch_in_flight_is_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    for flag in ["--concurrency", "--per-host"] {
        for bad in ["0", "-1", "many", ""] {
            let arg = format!("{flag}={bad}");
            let err = refused(dir.path(), &state, &[&arg, "http://127.0.0.1:9/"]);
            assert!(err.contains(flag), "{arg}: {err}");
        }
    }
}

/// A page database or WARC path that names a directory or a device, or
/// whose directory is missing, is named in the error before the state is
/// made (a missing WARC directory said only "No such file or directory",
/// `--warc /dev/stdout` "Illegal seek").
#[test]
fn output_files_that_cannot_be_made_are_named_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let missing = dir.path().join("no-such-dir");
    let here = dir.path().to_path_buf();
    let cases = [
        ("--warc", missing.join("x.warc"), "x.warc", "does not exist"),
        ("--warc", here.clone(), "warc file", "is a directory"),
        ("--db", missing.join("p.db"), "p.db", "does not exist"),
        ("--db", here, "page database", "is a directory"),
        (
            "--warc",
            "/dev/null".into(),
            "/dev/null",
            "not a regular file",
        ),
        (
            "--db",
            "/dev/null".into(),
            "/dev/null",
            "not a regular file",
        ),
    ];
    for (flag, path, names, says) in cases {
        let path = path.to_str().unwrap();
        let err = refused(dir.path(), &state, &[flag, path, "http://127.0.0.1:9/"]);
        assert!(
            err.contains(names) && err.contains(says),
            "{flag} {path}: {err}"
        );
        assert!(
            !missing.exists(),
            "{flag} {path}: the missing directory was made"
        );
    }
}

#[test]
fn a_max_connections_that_is_no_count_is_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    for bad in ["-1", "2k", "1.5", "", "99999999999999999999999"] {
        let arg = format!("--max-connections={bad}");
        let err = refused(dir.path(), &state, &[&arg, "http://127.0.0.1:9/"]);
        assert!(err.contains("--max-connections"), "{bad:?}: {err}");
    }
}

#[test]
fn a_ca_cert_that_cannot_be_used_is_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(
        &garbage,
        b"-----BEGIN CERTIFICATE-----\nAAECAwQF\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, b"").unwrap();
    let missing = dir.path().join("missing.pem");
    for (file, why) in [
        (&garbage, "certificate 1"),
        (&empty, "no PEM CERTIFICATE block"),
        (&missing, "No such file"),
    ] {
        let arg = format!("--ca-cert={}", file.display());
        let err = refused(dir.path(), &state, &[&arg, "https://127.0.0.1:9/"]);
        assert!(
            err.contains(&format!("--ca-cert {}", file.display())) && err.contains(why),
            "{file:?}: {err}"
        );
        assert!(!dir.path().join("pages.db").exists());
    }
}

#[test]
fn a_proxy_that_cannot_be_used_is_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // It used to be refused after the state and database were made.
    for bad in ["gopher://p.example", "http://"] {
        let err = refused(dir.path(), &state, &["--proxy", bad, "http://127.0.0.1:9/"]);
        assert!(err.contains("--proxy"), "{bad:?}: {err}");
        assert!(!dir.path().join("pages.db").exists());
    }
}

#[test]
fn unreachable_robots_txt_files_are_explained_without_flooding_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // Fifteen hosts on a port nothing listens on: every robots.txt fails.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let seeds: Vec<String> = (0..15).map(|i| format!("http://h{i}.test/")).collect();
    let resolve = format!("--resolve=*.test=127.0.0.1:{port}");
    let mut args = vec![
        resolve.as_str(),
        "--allow-private",
        "--robots-retries",
        "0",
        "--delay",
        "0",
    ];
    args.extend(seeds.iter().map(String::as_str));
    let (ok, err) = crawl(dir.path(), &state, &args);
    assert!(ok, "{err}");
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("robots.txt of"))
        .collect();
    // The cause, for the first ten; then a word that the rest go to debug.
    assert_eq!(said.len(), 10, "{err}");
    assert!(
        said.iter().all(|l| l.contains("unreachable: http connect")),
        "{err}"
    );
    // The tenth failure counted says so; fetches run in parallel, so its
    // line may come out before another of the ten.
    let last = said.iter().filter(|l| l.contains("logged at debug level"));
    assert_eq!(last.count(), 1, "{err}");
}

#[test]
fn a_from_that_is_no_address_is_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    for bad in ["nobody", "a@b.org, c@d.org", "Ops <ops@example.org>"] {
        let err = refused(dir.path(), &state, &["--from", bad, "http://127.0.0.1:9/"]);
        assert!(err.contains("--from"), "{bad:?}: {err}");
    }
}
