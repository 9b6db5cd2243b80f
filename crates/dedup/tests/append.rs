//! `--append-to` semantics: FILE lines count as seen, new lines are appended
//! and printed, a line is durable in FILE before it is printed, and a crash
//! between append and print loses nothing from FILE; reruns are idempotent.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use mgz_dedup::{AppendLog, DedupError, Deduper, Emit, Options, Sink, backend};

/// Runs one dedupe pass over `input` with `path` as the append file,
/// printing to `out`.
fn pass<W: Write>(
    path: &Path,
    input: &[u8],
    out: W,
    chunk_bytes: usize,
) -> (Result<(), DedupError>, W) {
    let set = backend::open("hash", &Default::default()).unwrap();
    let mut opts = Options::default();
    opts.chunk_bytes = chunk_bytes;
    let mut dedup = Deduper::new(set, opts);
    let (log, existing) = AppendLog::open(path).unwrap();
    let mut sink = Sink::new(out, Emit::Firsts, Some(log));
    dedup.preload(existing, &mut sink).unwrap();
    let result = dedup.run(input, &mut sink, &mut |_| {});
    (result, sink.into_inner())
}

fn temp_file(contents: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seen.txt");
    std::fs::write(&path, contents).unwrap();
    (dir, path)
}

#[test]
fn lines_in_the_file_count_as_seen_and_new_ones_are_appended_and_printed() {
    let (_dir, path) = temp_file(b"a\nb\n");
    let (result, out) = pass(&path, b"b\nc\na\nd\nc\n", Vec::new(), 1 << 20);
    result.unwrap();
    assert_eq!(out, b"c\nd\n");
    assert_eq!(std::fs::read(&path).unwrap(), b"a\nb\nc\nd\n");
}

#[test]
fn an_unterminated_file_and_input_stay_line_separated() {
    let (_dir, path) = temp_file(b"a\nb");
    let (result, out) = pass(&path, b"b\nc", Vec::new(), 1 << 20);
    result.unwrap();
    assert_eq!(out, b"c", "output keeps the input's missing newline");
    assert_eq!(std::fs::read(&path).unwrap(), b"a\nb\nc\n");
}

/// A writer that, before accepting output, checks that every line it is
/// asked to print is already in the append file.
struct CheckDurable {
    path: PathBuf,
    written: Vec<u8>,
}

impl Write for CheckDurable {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let file = std::fs::read(&self.path)?;
        let in_file: Vec<&[u8]> = file.split(|&b| b == b'\n').collect();
        for line in buf.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            assert!(
                in_file.contains(&line),
                "printed {line:?} before it was in FILE"
            );
        }
        self.written.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn every_printed_line_is_already_in_the_file() {
    let (_dir, path) = temp_file(b"");
    let input: Vec<u8> = (0..500)
        .flat_map(|i| format!("line{}\n", i % 300).into_bytes())
        .collect();
    let out = CheckDurable {
        path: path.clone(),
        written: Vec::new(),
    };
    let (result, out) = pass(&path, &input, out, 64);
    result.unwrap();
    let want: Vec<u8> = (0..300)
        .flat_map(|i| format!("line{i}\n").into_bytes())
        .collect();
    assert_eq!(out.written, want);
    assert_eq!(std::fs::read(&path).unwrap(), want);
}

/// Output that dies (like a killed process) after `budget` successful writes.
struct CrashAfter {
    budget: usize,
    written: Vec<u8>,
}

impl Write for CrashAfter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.budget == 0 {
            return Err(io::Error::other("simulated crash between append and print"));
        }
        self.budget -= 1;
        self.written.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_crash_between_append_and_print_loses_nothing_and_rerunning_is_idempotent() {
    let input: Vec<u8> = (0..400)
        .flat_map(|i| format!("u{}\n", i % 250).into_bytes())
        .collect();
    let all: Vec<u8> = (0..250)
        .flat_map(|i| format!("u{i}\n").into_bytes())
        .collect();
    for budget in [0, 1, 3] {
        let (_dir, path) = temp_file(b"");
        let crash = CrashAfter {
            budget,
            written: Vec::new(),
        };
        let (result, crashed) = pass(&path, &input, crash, 128);
        assert!(
            matches!(result, Err(DedupError::Output(_))),
            "budget {budget}"
        );
        let file = std::fs::read(&path).unwrap();
        assert!(
            file.starts_with(&crashed.written),
            "printed lines are a prefix of FILE"
        );
        assert!(
            file.len() > crashed.written.len(),
            "the crashed chunk is in FILE"
        );
        assert!(
            all.starts_with(&file),
            "FILE holds first occurrences only, in order"
        );

        // Rerun after the crash: prints exactly what FILE does not hold yet.
        let (result, out) = pass(&path, &input, Vec::new(), 128);
        result.unwrap();
        assert_eq!(out, all[file.len()..], "budget {budget}");
        assert_eq!(
            std::fs::read(&path).unwrap(),
            all,
            "FILE complete, no line twice"
        );

        // And again: nothing new.
        let (result, out) = pass(&path, &input, Vec::new(), 128);
        result.unwrap();
        assert!(out.is_empty());
        assert_eq!(std::fs::read(&path).unwrap(), all);
    }
}

#[test]
fn a_torn_append_is_recovered_without_gluing_lines() {
    // A crash in the middle of an append left "u2" torn as "u".
    let (_dir, path) = temp_file(b"u0\nu1\nu");
    let (result, out) = pass(&path, b"u0\nu1\nu2\nu3\n", Vec::new(), 1 << 20);
    result.unwrap();
    assert_eq!(out, b"u2\nu3\n");
    assert_eq!(std::fs::read(&path).unwrap(), b"u0\nu1\nu\nu2\nu3\n");
}
