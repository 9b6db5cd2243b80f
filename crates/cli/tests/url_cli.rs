//! `mgz url ...` end to end on the built binary.

use std::process::{Command, Output};

mod common;

fn mgz(args: &[&str], stdin: &[u8]) -> Output {
    common::output_with_input(Command::new(env!("CARGO_BIN_EXE_mgz")).args(args), stdin)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

#[test]
fn canonicalize_keeps_lines_aligned() {
    let input = b"HTTP://Www.Example.com:80/a/../%7eb#f\n\nmailto:x@y\n\xff\xfe\nhttp://a.com/?utm_source=x&b\n";
    let o = mgz(&["url", "canonicalize"], input);
    assert!(o.status.success());
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(
        lines,
        [
            "http://www.example.com/~b",
            "ERROR\t\tempty URL",
            "ERROR\tmailto:x@y\tunsupported scheme \"mailto\": only http and https are crawlable",
            "ERROR\t\u{fffd}\u{fffd}\tinvalid UTF-8",
            "http://a.com/?utm_source=x&b",
        ]
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim(),
        "mgz url canonicalize: 3 errors in 5 lines"
    );
}

/// The closing count speaks of one line or one error in the singular.
#[test]
fn the_count_on_stderr_agrees_in_number() {
    for (input, want) in [
        (&b"http://a.com/\n"[..], "0 errors in 1 line"),
        (b"mailto:x@y\n", "1 error in 1 line"),
        (b"mailto:x@y\nhttp://a.com/\n", "1 error in 2 lines"),
        (b"", "0 errors in 0 lines"),
    ] {
        let o = mgz(&["url", "surt"], input);
        assert!(o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim(), format!("mgz url surt: {want}"));
    }
}

#[test]
fn canonicalize_aggressive_from_a_file_and_dash() {
    let dir = std::env::temp_dir().join(format!("mgz-url-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("in.txt");
    std::fs::write(&file, "http://www.A.com/X?b=1&a=2&utm_source=x\n").unwrap();
    let o = mgz(
        &[
            "url",
            "canonicalize",
            "--policy",
            "aggressive",
            file.to_str().unwrap(),
        ],
        b"",
    );
    assert!(o.status.success());
    assert_eq!(stdout(&o), "http://a.com/x?a=2&b=1\n");
    let o = mgz(
        &["url", "canonicalize", "--policy", "aggressive", "-"],
        b"http://www2.b.org/\n",
    );
    assert_eq!(stdout(&o), "http://b.org/\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn surt_with_every_option() {
    let input = b"http://www.archive.org:8080/Goo/?b&a\n";
    let run = |args: &[&str]| {
        let mut all = vec!["url", "surt"];
        all.extend_from_slice(args);
        stdout(&mgz(&all, input))
    };
    assert_eq!(run(&[]), "org,archive:8080)/Goo/?b&a\n");
    assert_eq!(
        run(&["--with-scheme"]),
        "http://(org,archive:8080)/Goo/?b&a\n"
    );
    assert_eq!(run(&["--trailing-comma"]), "org,archive:8080,)/Goo/?b&a\n");
    assert_eq!(
        run(&["--no-host-massage"]),
        "org,archive,www:8080)/Goo/?b&a\n"
    );
    assert_eq!(run(&["--ia"]), "org,archive:8080)/goo?a&b\n");
    let o = mgz(&["url", "surt"], b"\nnot a url\n");
    assert!(o.status.success());
    assert_eq!(stdout(&o).lines().count(), 2);
    assert!(stdout(&o).lines().all(|l| l.starts_with("ERROR\t")));
}

#[test]
fn missing_file_is_an_io_failure() {
    let o = mgz(&["url", "canonicalize", "/nonexistent/mgz-input"], b"");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("opening /nonexistent/mgz-input"), "{err}");
    // Not a URL: no hint about passing one.
    assert!(!err.contains("echo"), "{err}");
}

/// An input that opens but cannot be read (a directory) is named.
#[test]
fn an_unreadable_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let o = mgz(&["url", "surt", dir.path().to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("mgz url surt {}", dir.path().display())),
        "{err}"
    );
    assert!(err.contains("reading input"), "{err}");
}

#[test]
fn a_url_given_as_the_file_says_how_to_pass_it() {
    for cmd in ["canonicalize", "surt"] {
        let url = "http://www.example.com/a?b=c";
        let o = mgz(&["url", cmd, url], b"");
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(o.stdout.is_empty());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("opening {url}")), "{err}");
        assert!(
            err.contains(&format!("echo '{url}' | mgz url {cmd}")),
            "{err}"
        );
        assert!(err.contains("No such file or directory"), "{err}");
    }
}
