//! `mgz dedup`: first occurrence of each line, in input order, in the memory
//! of a compact seen-set. Glue over `mgz-dedup`.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use mgz_dedup::{AppendLog, DedupError, Deduper, Emit, KeyMode, Options, Rejected, Sink, backend};
use mgz_url::Policy;

/// Arguments of `mgz dedup`.
#[derive(clap::Args)]
pub struct DedupArgs {
    /// Inputs, read in order; `-` or none means standard input.
    files: Vec<PathBuf>,
    /// Seen-set backend: compact (exact, compressed), fingerprint (false
    /// positives at --fpr, default 2^-36, ~5 bytes per line), bloom (false
    /// positives at --fpr, default 1%; scalable unless --expected is given),
    /// hash (exact, ~100 bytes per line). A false positive drops a new line.
    #[arg(long, default_value = "compact", value_parser = ["compact", "fingerprint", "bloom", "hash"])]
    seen: String,
    /// Target false-positive rate per line of fingerprint and bloom.
    #[arg(long)]
    fpr: Option<f64>,
    /// Expected number of distinct lines (sizes bloom and fingerprint).
    #[arg(long)]
    expected: Option<u64>,
    /// Dedupe on canonical URLs (printing each first line as given); lines
    /// that are not URLs are deduped as plain lines.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "safe",
          value_parser = ["safe", "aggressive"])]
    canonicalize: Option<String>,
    /// With --canonicalize: report lines that are not URLs on stderr and skip them.
    #[arg(long, requires = "canonicalize")]
    strict: bool,
    /// Print the repeats (every occurrence after the first) instead.
    #[arg(long, conflicts_with = "count")]
    invert: bool,
    /// Print only the number of distinct (new) lines.
    #[arg(long)]
    count: bool,
    /// Write counters and seen-set bytes per distinct line to stderr.
    #[arg(long)]
    stats: bool,
    /// Lines in FILE count as seen; new lines are appended to FILE (made
    /// durable before they are printed) and printed, like `anew`.
    #[arg(long, value_name = "FILE")]
    append_to: Option<PathBuf>,
}

/// Runs `mgz dedup`. Exit 0 also when the reader of stdout goes away.
pub fn run(args: DedupArgs) -> anyhow::Result<ExitCode> {
    if args.seen == "compact" || args.seen == "fingerprint" {
        keep_big_allocations_mapped();
    }
    let set_opts = backend::SeenOptions::new(args.expected, args.fpr);
    let set = backend::open(&args.seen, &set_opts)?;
    let mut dedup = Deduper::new(set, options(&args));
    let emit = match (args.invert, args.count) {
        (true, _) => Emit::Repeats,
        (_, true) => Emit::Nothing,
        _ => Emit::Firsts,
    };
    let stdout = io::stdout().lock();
    let mut sink = match &args.append_to {
        None => Sink::new(stdout, emit, None),
        Some(path) => {
            let (log, existing) = AppendLog::open(path)
                .with_context(|| format!("opening append file {}", path.display()))?;
            let mut sink = Sink::new(stdout, emit, Some(log));
            dedup
                .preload(existing, &mut sink)
                .with_context(|| format!("reading append file {}", path.display()))?;
            sink
        }
    };
    let outcome = run_inputs(&args.files, &mut dedup, &mut sink);
    if args.stats {
        eprint!("{}", dedup.stats());
    }
    match outcome {
        Err(err) if is_output_closed(&err) => return Ok(ExitCode::SUCCESS),
        other => other?,
    }
    if args.count {
        let mut out = sink.into_inner();
        match writeln!(out, "{}", dedup.stats().distinct) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
            other => other.context("writing the count")?,
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Large allocations (the seen-set's runs, rebuilt by every merge) get
/// their own mappings, handed back to the system when freed. glibc raises
/// that threshold after each such free (up to 32 MiB), and then freed runs
/// stay behind as heap fragments: `mgz dedup --seen compact` on the 10M
/// synthetic list peaked at 158.0 MB with the default and 147.3 MB with
/// the threshold fixed at 128 KiB (same binary, same session; set 128.3 MB).
/// Also for `fingerprint` (merges free its runs the same way): on the same
/// list 54.9 → 54.8 MB peak (bench/dedup.sh) and 6.7-7.0 → 5.3-5.6 s wall
/// (`/usr/bin/time`, back to back). The other backends were measured with
/// the default.
fn keep_big_allocations_mapped() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter (it takes glibc's
    // arena lock); no memory is touched and no pointer is passed.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn options(args: &DedupArgs) -> Options {
    let mut opts = Options::default();
    opts.key = match args.canonicalize.as_deref() {
        None => KeyMode::Plain,
        Some("aggressive") => KeyMode::Canonical(Policy::aggressive()),
        Some(_) => KeyMode::Canonical(Policy::safe()),
    };
    opts.strict = args.strict;
    opts
}

/// Feeds every input, in order, through one deduper.
fn run_inputs<W: Write>(
    files: &[PathBuf],
    dedup: &mut Deduper,
    sink: &mut Sink<W>,
) -> anyhow::Result<()> {
    let stdin_only = [PathBuf::from("-")];
    let files = if files.is_empty() {
        &stdin_only[..]
    } else {
        files
    };
    for path in files {
        let name = path.display().to_string();
        let mut report = |r: Rejected<'_>| report_rejected(&name, &r);
        if path.as_os_str() == "-" {
            dedup.run(io::stdin().lock(), sink, &mut report)
        } else {
            let file = File::open(path).with_context(|| format!("opening {name}"))?;
            dedup.run(file, sink, &mut report)
        }
        .with_context(|| format!("deduping {name}"))?;
    }
    Ok(())
}

fn report_rejected(input: &str, r: &Rejected<'_>) {
    let line = String::from_utf8_lossy(mgz_dedup::content(r.line));
    eprintln!(
        "mgz dedup: {input}:{}: skipped, not a URL ({}): {line}",
        r.line_no, r.error
    );
}

fn is_output_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        matches!(
            e.downcast_ref::<DedupError>(),
            Some(DedupError::OutputClosed)
        )
    })
}
