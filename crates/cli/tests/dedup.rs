//! `mgz dedup` end to end: the binary, its flags, and a reader that leaves early.

use std::io::{Read, Write};
use std::process::{Child, Command, Output, Stdio};

mod common;

fn mgz() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mgz"))
}

/// Starts `mgz dedup ARGS` with all three streams piped.
fn spawn(args: &[&str]) -> Child {
    mgz()
        .arg("dedup")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `mgz dedup ARGS` with `input` on stdin.
fn dedup(args: &[&str], input: &[u8]) -> Output {
    common::output_with_input(mgz().arg("dedup").args(args), input)
}

#[test]
fn prints_first_occurrences_byte_for_byte() {
    let input = b"b\na\r\nb\n\n\xff\na\r\n\nlast";
    for seen in ["compact", "fingerprint", "bloom", "hash"] {
        let out = dedup(&["--seen", seen], input);
        assert!(out.status.success(), "{seen}");
        assert_eq!(out.stdout, b"b\na\r\n\n\xff\nlast", "{seen}");
        assert!(out.stderr.is_empty(), "{seen}");
    }
    let default = dedup(&[], input);
    assert_eq!(default.stdout, b"b\na\r\n\n\xff\nlast", "default backend");
}

#[test]
fn files_and_stdin_share_one_set_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one");
    std::fs::write(&one, b"x\ny").unwrap();
    let out = dedup(
        &["--seen", "hash", one.to_str().unwrap(), "-"],
        b"y\nz\nx\n",
    );
    assert!(out.status.success());
    assert_eq!(out.stdout, b"x\ny\nz\n");
}

#[test]
fn invert_count_and_stats() {
    let input = b"a\nb\na\nc\nb\na\n";
    let out = dedup(&["--seen", "hash", "--invert"], input);
    assert_eq!(out.stdout, b"a\nb\na\n");
    let out = dedup(&["--seen", "hash", "--count"], input);
    assert_eq!(out.stdout, b"3\n");
    let out = dedup(&["--seen", "hash", "--stats"], input);
    assert_eq!(out.stdout, b"a\nb\nc\n");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("lines read:        6"), "{stderr}");
    assert!(stderr.contains("distinct:          3"), "{stderr}");
    assert!(stderr.contains("duplicates:        3"), "{stderr}");
    assert!(stderr.contains("bytes per distinct line"), "{stderr}");
}

#[test]
fn append_to_works_like_anew() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seen.txt");
    std::fs::write(&file, b"a\n").unwrap();
    let args = ["--append-to", file.to_str().unwrap()];
    let out = dedup(&args, b"a\nb\nb\nc\n");
    assert!(out.status.success());
    assert_eq!(out.stdout, b"b\nc\n");
    assert_eq!(std::fs::read(&file).unwrap(), b"a\nb\nc\n");
    let again = dedup(&args, b"a\nb\nb\nc\n");
    assert!(again.stdout.is_empty());
    assert_eq!(std::fs::read(&file).unwrap(), b"a\nb\nc\n");
}

#[test]
fn canonicalize_collapses_variants_and_strict_reports() {
    let input = b"HTTP://Example.com/a#x\nhttp://example.com/a\nnot a url\nnot a url\n";
    let out = dedup(&["--canonicalize"], input);
    assert_eq!(out.stdout, b"HTTP://Example.com/a#x\nnot a url\n");
    let out = dedup(
        &["--seen", "hash", "--canonicalize=safe", "--strict"],
        input,
    );
    assert_eq!(out.stdout, b"HTTP://Example.com/a#x\n");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert!(stderr.contains("-:3: skipped, not a URL"), "{stderr}");
}

#[test]
fn unknown_backend_and_bad_fpr_are_clear_errors() {
    let out = dedup(&["--seen", "nope"], b"a\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'nope'"));
    let out = dedup(&["--seen", "hash", "--fpr", "1.5"], b"a\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fpr"));
}

#[test]
fn exits_quietly_with_success_when_the_reader_leaves() {
    let mut child = spawn(&["--seen", "hash"]);
    let mut stdin = child.stdin.take().unwrap();
    // Far more output than a pipe buffers, so mgz must hit the closed pipe.
    let feeder = std::thread::spawn(move || {
        for i in 0..400_000u32 {
            if writeln!(stdin, "line {i}").is_err() {
                break; // mgz is gone: fine
            }
        }
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 7];
    stdout.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"line 0\n");
    drop(stdout); // like `| head -1`
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    feeder.join().unwrap();
    assert!(status.success(), "status {status:?}, stderr {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
}
