//! The linker driver `crates/cli/link/cc` (ARCHITECTURE.md, "Code layout"):
//! for the release `mgz` binary linked by lld it adds a symbol ordering file
//! built from `order.txt`'s names and the symbols the objects define (by
//! exact name, else by name without hashes); every other link gets `cc` with its arguments unchanged.
//!
//! Runs the script against a real object file (`cc -c`, read by `nm`) with
//! a stand-in `cc` first on `PATH` that records what it was given.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;

const LINK_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/link");

/// Functions named as rustc names them: legacy hashes, a v0 crate
/// disambiguator, an LLVM-promoted local; one unlisted and one data symbol.
const SOURCE: &str = r#"
void a1(void) __asm__("_ZN3foo3bar17h0123456789abcdefE");
void a1(void) {}
void a2(void) __asm__("_ZN3foo3bar17hfedcba9876543210E");
void a2(void) {}
void b(void) __asm__("_RNvCs1a2B3c_3foo3baz");
void b(void) {}
void c(void) __asm__("_ZN3foo4quux17h00000000000000ffE.llvm.42");
void c(void) {}
void d(void) __asm__("_ZN3foo8unlisted17h1111111111111111E");
void d(void) {}
int e __asm__("_ZN3foo4data17h2222222222222222E") = 1;
"#;

/// The stand-in `cc`: its arguments one per line into `args`, the ordering
/// file's content into `ordering` (the script removes it after the link),
/// exit status from `$FAKE_RC`.
const FAKE_CC: &str = r#"#!/bin/sh
printf '%s\n' "$@" > "$FAKE_DIR/args"
for a in "$@"; do
  case "$a" in -Wl,--symbol-ordering-file=*) cat "${a#-Wl,--symbol-ordering-file=}" > "$FAKE_DIR/ordering";; esac
done
exit "${FAKE_RC:-0}"
"#;

struct Setup {
    dir: tempfile::TempDir,
    object: PathBuf,
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A copy of the script and its awk program with a test `order.txt`, the
/// object file, and the stand-in `cc`; None (and why) without cc or nm.
fn setup() -> Option<Setup> {
    if !have("cc") || !have("nm") {
        eprintln!("skipped: needs `cc` and `nm` (binutils) on PATH");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("link");
    std::fs::create_dir_all(&link).unwrap();
    for f in ["cc", "order.awk"] {
        std::fs::copy(Path::new(LINK_DIR).join(f), link.join(f)).unwrap();
    }
    // Layout order: quux, bar, baz, each listed under a name whose hash or
    // crate disambiguator differs from the object's (a toolchain update
    // since the list was made); a data symbol; a name the object lacks.
    std::fs::write(
        link.join("order.txt"),
        "_ZN3foo4quux17h0000000000000001E\n_ZN3foo3bar17h0000000000000002E\n\
         _RNvCs9z_3foo3baz\n_ZN3foo4data17h2222222222222222E\n_ZN3foo6absent17h3E\n",
    )
    .unwrap();
    let src = dir.path().join("f.c");
    std::fs::write(&src, SOURCE).unwrap();
    let object = dir.path().join("f.o");
    let status = Command::new("cc")
        .args(["-c", "-ffunction-sections", "-o"])
        .arg(&object)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success(), "cc -c failed");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("cc"), FAKE_CC).unwrap();
    chmod_x(&bin.join("cc"));
    chmod_x(&link.join("cc"));
    Some(Setup { dir, object })
}

fn chmod_x(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs the script with `args`; returns its exit code, the arguments the
/// stand-in `cc` got and the ordering file it was given (empty if none).
fn link(s: &Setup, args: &[&str], env: &[(&str, &str)]) -> (i32, Vec<String>, String) {
    let d = s.dir.path();
    let _ = std::fs::remove_file(d.join("ordering"));
    let path = format!(
        "{}:{}",
        d.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(d.join("link/cc"));
    cmd.args(args)
        .arg(&s.object)
        .env("PATH", path)
        .env("FAKE_DIR", d)
        .env_remove("MGZ_LINK_ORDER");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let code = cmd.status().unwrap().code().unwrap_or(-1);
    let args = std::fs::read_to_string(d.join("args"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let ordering = std::fs::read_to_string(d.join("ordering")).unwrap_or_default();
    (code, args, ordering)
}

fn plain(s: &Setup, args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    v.push(s.object.display().to_string());
    v
}

#[test]
fn the_release_mgz_binary_gets_its_functions_in_the_listed_order() {
    let Some(s) = setup() else { return };
    let out = s.dir.path().join("target/release/deps/mgz-0123abcd");
    let out = out.to_str().unwrap();
    let args = ["-fuse-ld=lld", "-o", out];
    let (code, got, ordering) = link(&s, &args, &[]);
    assert_eq!(code, 0);
    // The arguments rustc gave, unchanged, then the two for lld.
    let want = plain(&s, &args);
    assert_eq!(got[..want.len()], want[..]);
    assert_eq!(got.len(), want.len() + 2, "{got:?}");
    assert!(got[want.len()].starts_with("-Wl,--symbol-ordering-file="));
    assert_eq!(got[want.len() + 1], "-Wl,--no-warn-symbol-ordering");
    // No name matched exactly: by hash-free name, in list order; both
    // instances of `bar`; no unlisted or data symbol.
    let mut lines: Vec<&str> = ordering.lines().collect();
    assert_eq!(lines[0], "_ZN3foo4quux17h00000000000000ffE.llvm.42");
    lines[1..3].sort_unstable();
    assert_eq!(
        lines[1..],
        [
            "_ZN3foo3bar17h0123456789abcdefE",
            "_ZN3foo3bar17hfedcba9876543210E",
            "_RNvCs1a2B3c_3foo3baz",
        ]
    );
    // The ordering file is removed after the link.
    let file = got[want.len()].trim_start_matches("-Wl,--symbol-ordering-file=");
    assert!(!Path::new(file).exists());
}

#[test]
fn a_name_listed_exactly_takes_only_that_instance() {
    let Some(s) = setup() else { return };
    std::fs::write(
        s.dir.path().join("link/order.txt"),
        "_ZN3foo3bar17hfedcba9876543210E\n_RNvCs1a2B3c_3foo3baz\n",
    )
    .unwrap();
    let out = s.dir.path().join("target/release/deps/mgz-4");
    let (code, _, ordering) = link(&s, &["-fuse-ld=lld", "-o", out.to_str().unwrap()], &[]);
    assert_eq!(code, 0);
    assert_eq!(
        ordering,
        "_ZN3foo3bar17hfedcba9876543210E\n_RNvCs1a2B3c_3foo3baz\n"
    );
}

#[test]
fn every_other_link_is_passed_through_unchanged() {
    let Some(s) = setup() else { return };
    let out = |p: &str| s.dir.path().join(p).display().to_string();
    let (debug, other, release) = (
        out("target/debug/deps/mgz-1"),
        out("target/release/deps/crawl-1"),
        out("target/release/deps/mgz-1"),
    );
    let check = |args: &[&str], env: &[(&str, &str)]| {
        let (code, got, ordering) = link(&s, args, env);
        assert_eq!(code, 0);
        assert_eq!(got, plain(&s, args), "{args:?} {env:?}");
        assert!(ordering.is_empty());
    };
    // A debug build, another crate's binary.
    check(&["-fuse-ld=lld", "-o", &debug], &[]);
    check(&["-fuse-ld=lld", "-o", &other], &[]);
    // Not lld: GNU ld knows no ordering file.
    check(&["-o", &release], &[]);
    // Switched off.
    check(
        &["-fuse-ld=lld", "-o", &release],
        &[("MGZ_LINK_ORDER", "off")],
    );
}

#[test]
fn a_failed_link_is_run_again_plain_and_its_status_returned() {
    let Some(s) = setup() else { return };
    let out = s.dir.path().join("target/release/deps/mgz-2");
    let out = out.to_str().unwrap();
    for args in [vec!["-fuse-ld=lld", "-o", out], vec!["-o", out]] {
        let (code, got, _) = link(&s, &args, &[("FAKE_RC", "3")]);
        assert_eq!(code, 3, "{args:?}");
        // The last call (the stand-in records each) had the plain arguments.
        assert_eq!(got, plain(&s, &args));
    }
}

#[test]
fn no_listed_symbol_means_no_ordering_file() {
    let Some(s) = setup() else { return };
    std::fs::write(s.dir.path().join("link/order.txt"), "_ZN3bar4noneE\n").unwrap();
    let out = s.dir.path().join("target/release/deps/mgz-3");
    let args = ["-fuse-ld=lld", "-o", out.to_str().unwrap()];
    let (code, got, ordering) = link(&s, &args, &[]);
    assert_eq!(code, 0);
    assert_eq!(got, plain(&s, &args));
    assert!(ordering.is_empty());
}
