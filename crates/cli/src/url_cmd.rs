//! `mgz url canonicalize` and `mgz url surt`: line-aligned filters.
//!
//! One input line → exactly one output line, so `paste in out` lines up.
//! A line that fails prints `ERROR<TAB>input<TAB>reason` (control bytes of
//! the input shown as `\xNN`, invalid UTF-8 as U+FFFD). Memory is constant:
//! one reused line buffer of at most [`MAX_LINE`] bytes; longer lines are
//! skipped to their end and reported as errors.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use mgz_url::{CanonicalUrl, Policy, SurtOptions};

/// Longest input line processed; far above any canonical URL limit.
const MAX_LINE: usize = 64 * 1024;

/// Arguments of `mgz url`.
#[derive(clap::Args)]
pub struct UrlArgs {
    #[command(subcommand)]
    command: UrlCommand,
}

#[derive(clap::Subcommand)]
enum UrlCommand {
    /// Print the canonical form of each URL (one per line).
    Canonicalize {
        /// Which canonicalisation rules apply.
        #[arg(long, value_enum, default_value_t = PolicyName::Safe)]
        policy: PolicyName,
        /// Input file, `-` or nothing for stdin.
        file: Option<PathBuf>,
    },
    /// Print the SURT key of each URL (one per line).
    Surt {
        /// Prefix the scheme: `http://(com,example)/`.
        #[arg(long)]
        with_scheme: bool,
        /// Write `com,example,)` instead of `com,example)`.
        #[arg(long)]
        trailing_comma: bool,
        /// Keep a leading `www`/`wwwN` label.
        #[arg(long)]
        no_host_massage: bool,
        /// Use the Internet Archive canonicaliser (Python `surt.surt` output)
        /// instead of the `safe` policy.
        #[arg(long)]
        ia: bool,
        /// Input file, `-` or nothing for stdin.
        file: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum PolicyName {
    Safe,
    Aggressive,
}

/// Runs `mgz url ...`.
pub fn run(args: UrlArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        UrlCommand::Canonicalize { policy, file } => {
            let policy = match policy {
                PolicyName::Safe => Policy::safe(),
                PolicyName::Aggressive => Policy::aggressive(),
            };
            let convert = move |line: &str| {
                CanonicalUrl::parse(line, None, &policy)
                    .map(|u| u.to_string())
                    .map_err(|e| e.to_string())
            };
            run_filter("canonicalize", file, convert)
        }
        UrlCommand::Surt {
            with_scheme,
            trailing_comma,
            no_host_massage,
            ia,
            file,
        } => {
            let opts = SurtOptions::default()
                .with_scheme(with_scheme)
                .trailing_comma(trailing_comma)
                .host_massage(!no_host_massage);
            let policy = Policy::safe();
            let convert = move |line: &str| match ia {
                true if line.trim().is_empty() => Err(mgz_url::UrlError::Empty.to_string()),
                true => mgz_url::ia::surt(line, opts).map_err(|e| e.to_string()),
                false => CanonicalUrl::parse(line, None, &policy)
                    .map(|u| mgz_url::surt(&u, opts))
                    .map_err(|e| e.to_string()),
            };
            run_filter("surt", file, convert)
        }
    }
}

fn run_filter<F>(name: &str, file: Option<PathBuf>, convert: F) -> anyhow::Result<ExitCode>
where
    F: Fn(&str) -> Result<String, String>,
{
    let input: Box<dyn Read> = match file.as_deref() {
        None => Box::new(io::stdin().lock()),
        Some(p) if p.as_os_str() == "-" => Box::new(io::stdin().lock()),
        Some(p) => Box::new(File::open(p).with_context(|| open_error(name, p))?),
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let source = match file.as_deref() {
        Some(p) if p.as_os_str() != "-" => p.display().to_string(),
        _ => "standard input".to_string(),
    };
    let stats = filter_lines(BufReader::new(input), &mut out, convert)
        .with_context(|| format!("mgz url {name} {source}"))?;
    out.flush().context("writing output")?;
    let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    eprintln!(
        "mgz url {name}: {} in {}",
        plural(stats.errors, "error"),
        plural(stats.lines, "line")
    );
    Ok(ExitCode::SUCCESS)
}

/// What a failed open of `path` says: a missing "file" that looks like a URL
/// was most likely meant as one, so the message says how to pass it.
fn open_error(name: &str, path: &std::path::Path) -> String {
    let shown = path.display();
    if !path.exists() && path.to_string_lossy().contains("://") {
        format!(
            "opening {shown} (`mgz url {name}` reads URLs one per line from a file or \
             standard input; for this one: echo '{shown}' | mgz url {name})"
        )
    } else {
        format!("opening {shown}")
    }
}

/// Lines read and lines that failed.
#[derive(Debug, Default, PartialEq, Eq)]
struct Stats {
    lines: u64,
    errors: u64,
}

/// The streaming core: one output line per input line.
fn filter_lines<R, W, F>(mut input: R, out: &mut W, convert: F) -> anyhow::Result<Stats>
where
    R: BufRead,
    W: Write,
    F: Fn(&str) -> Result<String, String>,
{
    let mut stats = Stats::default();
    let mut buf = Vec::with_capacity(4096);
    loop {
        buf.clear();
        let complete = read_line_capped(&mut input, &mut buf).context("reading input")?;
        if buf.is_empty() && complete.is_none() {
            return Ok(stats);
        }
        stats.lines += 1;
        let line = trim_eol(&buf);
        let result = match (complete, std::str::from_utf8(line)) {
            (Some(false), _) => Err(format!("line longer than {MAX_LINE} bytes")),
            (_, Err(_)) => Err("invalid UTF-8".to_string()),
            (_, Ok(text)) => convert(text),
        };
        match result {
            Ok(s) => writeln!(out, "{s}"),
            Err(reason) => {
                stats.errors += 1;
                writeln!(out, "ERROR\t{}\t{reason}", shown(line))
            }
        }
        .context("writing output")?;
    }
}

/// Reads one line into `buf`, keeping at most `MAX_LINE` bytes and skipping
/// the rest. `None` at end of input, else `Some(fits)`.
fn read_line_capped<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> io::Result<Option<bool>> {
    let mut fits = true;
    let mut any = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            return Ok(any.then_some(fits));
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(nl) => (nl + 1, true),
            None => (chunk.len(), false),
        };
        let room = MAX_LINE + 1 - buf.len().min(MAX_LINE + 1);
        buf.extend_from_slice(&chunk[..take.min(room)]);
        fits &= take <= room;
        input.consume(take);
        if done {
            return Ok(Some(fits));
        }
    }
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The input as printed in an error line: lossy UTF-8, controls as `\xNN`.
fn shown(line: &[u8]) -> String {
    let line = &line[..line.len().min(MAX_LINE)];
    String::from_utf8_lossy(line)
        .chars()
        .map(|c| match c {
            c if c.is_control() => format!("\\x{:02X}", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8]) -> (String, Stats) {
        let mut out = Vec::new();
        let policy = Policy::safe();
        let convert = |l: &str| {
            CanonicalUrl::parse(l, None, &policy)
                .map(|u| u.to_string())
                .map_err(|e| e.to_string())
        };
        let stats = filter_lines(input, &mut out, convert).unwrap();
        (String::from_utf8(out).unwrap(), stats)
    }

    #[test]
    fn one_line_out_per_line_in() {
        let (out, stats) = run(b"HTTP://A.com\r\n\nftp://x\n\xff\nhttp://b.com/#x");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0], "http://a.com/");
        assert_eq!(lines[1], "ERROR\t\tempty URL");
        assert!(lines[2].starts_with("ERROR\tftp://x\tunsupported scheme"));
        assert_eq!(lines[3], "ERROR\t\u{fffd}\tinvalid UTF-8");
        assert_eq!(lines[4], "http://b.com/");
        assert_eq!(
            stats,
            Stats {
                lines: 5,
                errors: 3
            }
        );
    }

    #[test]
    fn overlong_lines_are_errors_and_skipped() {
        let mut input = b"http://a.com/".to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 * MAX_LINE));
        input.extend_from_slice(b"\nhttp://b.com\n");
        let (out, stats) = run(&input);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].ends_with("\tline longer than 65536 bytes"));
        assert_eq!(lines[1], "http://b.com/");
        assert_eq!(stats.errors, 1);
    }

    #[test]
    fn control_bytes_are_escaped_in_error_lines() {
        let (out, _) = run(b"http://a.com/\x01\tx\n");
        assert_eq!(
            out,
            "ERROR\thttp://a.com/\\x01\\x09x\tcontrol character 0x01 at byte 13\n"
        );
    }
}
