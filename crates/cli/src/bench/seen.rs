//! `mgz bench seen`: every chosen seen-set backend, in turn and in one
//! process, gets the same canonical keys; memory comes from the counting
//! allocator (the delta across the backend's life, so the bench's own key
//! list is excluded), time from the thread's on-CPU clock ([`super::clock`]),
//! errors from the exact answer.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use mgz_seen::{BACKENDS, BackendOptions, SeenSet, backend};

use super::clock::Clock;
use super::keys::{self, KeyArena, Loaded};
use super::peers::{FastBloom, QFilter};
use super::probes::{Probes, Truth};
use super::report::{self, Row};
use crate::alloc;

/// Library peers accepted by `--backends` besides the registry's names.
const PEERS: &[&str] = &["fastbloom", "qfilter"];
/// Backends planned in `mgz-seen` that a given build may not have yet.
const PLANNED: &[&str] = &["fingerprint", "compact"];
/// The qfilter peer's rate: the fingerprint set's default, 2^-36.
const QFILTER_FPR: f64 = 1.0 / (1u64 << 36) as f64;
/// Above this many URLs the default run leaves out the per-byte tries
/// (`xtrie` ~1.3 KB/URL, `tst` ~0.65 KB/URL at 1M: 13 and 6.5 GB at 10M).
const TRIE_DEFAULT_LIMIT: usize = 2_000_000;
/// The backends that limit applies to.
const PER_BYTE_TRIES: &[&str] = &["xtrie", "tst"];
/// Keys handed to `insert_batch` at a time.
const CHUNK: usize = 1024;

/// Arguments of `mgz bench seen`.
#[derive(clap::Args)]
pub struct SeenArgs {
    /// URLs, one per line (lines that fail to canonicalise are counted and skipped).
    #[arg(
        long,
        conflicts_with = "generate",
        required_unless_present = "generate"
    )]
    input: Option<PathBuf>,
    /// Generate N synthetic URLs instead (Zipf hosts, shared paths, ~20 % duplicates).
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    generate: Option<usize>,
    /// Comma-separated backends, in run order: names, `all` (every built
    /// backend plus fastbloom,qfilter: the default), `-name` to drop one.
    #[arg(long, value_delimiter = ',')]
    backends: Option<Vec<String>>,
    /// One JSON object per backend on stdout instead of a table.
    #[arg(long)]
    json: bool,
    /// Build and probe each backend this many times; report the fastest
    /// insert and lookup times (the machine is shared and noisy).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Write the canonical keys, one per line in input order, to FILE and
    /// stop (no backend runs): the input of the seen-set crate's `seen_time`
    /// example and of `bench/seen_key_order.py`.
    #[arg(long, value_name = "FILE")]
    dump_keys: Option<PathBuf>,
}

/// `--generate`'s count: a run over no URL measures nothing (its table
/// would divide by zero).
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("give at least 1 URL to measure".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Builds backend `name` for `unique` keys.
fn make(name: &str, unique: usize) -> anyhow::Result<Box<dyn SeenSet>> {
    let bloom_fpr = mgz_seen::bloom::DEFAULT_FPR;
    Ok(match name {
        "fastbloom" => Box::new(FastBloom::new(unique, bloom_fpr)),
        "qfilter" => Box::new(QFilter::new(unique, QFILTER_FPR)?),
        _ => match backend(
            name,
            &BackendOptions {
                expected: unique,
                fpr: None,
            },
        ) {
            Ok(set) => set,
            Err(_) if PLANNED.contains(&name) => {
                bail!(
                    "backend {name:?} is not built into this mgz (mgz-seen has: {})",
                    BACKENDS.join(", ")
                )
            }
            Err(e) => return Err(e).context("--backends"),
        },
    })
}

/// Every backend built into `mgz-seen`, then the peers.
fn all_backends() -> Vec<String> {
    BACKENDS
        .iter()
        .chain(PEERS)
        .map(|s| s.to_string())
        .collect()
}

/// Expands `--backends`: `all` is [`all_backends`], `-name` drops a name.
fn expand(list: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for token in list.iter().map(|s| s.trim()) {
        if token == "all" {
            names.extend(all_backends());
        } else if let Some(drop) = token.strip_prefix('-') {
            names.retain(|n| n != drop);
        } else {
            names.push(token.to_string());
        }
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

fn chosen(args: &SeenArgs) -> anyhow::Result<Vec<String>> {
    let names = match &args.backends {
        Some(list) => expand(list),
        None => all_backends(),
    };
    if names.is_empty() {
        bail!("--backends names no backend");
    }
    for name in &names {
        make(name, 1)?; // fail before the long part of the run
    }
    Ok(names)
}

/// Inserts every key, then runs the probes, measuring as the module doc says.
fn measure(name: &str, keys: &KeyArena, truth: &Truth) -> anyhow::Result<Row> {
    let mut refs: Vec<&[u8]> = Vec::with_capacity(CHUNK);
    let mut out = Vec::with_capacity(CHUNK);
    let before = alloc::live();
    alloc::reset_peak();
    let clock = Clock::start();
    let mut set = make(name, truth.unique)?;
    for first in (0..keys.len()).step_by(CHUNK) {
        refs.clear();
        refs.extend((first..keys.len().min(first + CHUNK)).map(|i| keys.get(i)));
        set.insert_batch(&refs, &mut out);
    }
    // No-op for the backends built here (none merges in the background).
    set.settle();
    let ns_insert = clock.elapsed_ns() / keys.len() as f64;
    let final_bytes = alloc::live().saturating_sub(before);
    let peak_bytes = alloc::peak().saturating_sub(before);
    let (ns_lookup, false_positives, false_negatives) = lookups(&*set, &truth.probes);
    Ok(Row {
        backend: name.to_string(),
        urls: keys.len(),
        unique: truth.unique,
        peak_bytes,
        final_bytes,
        bytes_per_url: final_bytes as f64 / truth.unique.max(1) as f64,
        ns_insert,
        ns_lookup,
        false_positives,
        false_negatives,
    })
}

fn lookups(set: &dyn SeenSet, probes: &Probes) -> (f64, usize, usize) {
    let (mut fp, mut fneg) = (0, 0);
    let clock = Clock::start();
    for (i, key) in probes.keys.iter().enumerate() {
        let got = set.contains(key);
        let want = probes.present[i];
        fp += usize::from(got && !want);
        fneg += usize::from(!got && want);
    }
    let ns = clock.elapsed_ns() / probes.present.len().max(1) as f64;
    (ns, fp, fneg)
}

/// Writes `keys` to `path`, one per line (a canonical key has no newline;
/// one that did would be refused rather than split).
fn dump(keys: &KeyArena, path: &std::path::Path) -> anyhow::Result<()> {
    use std::io::Write;
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for key in keys.iter() {
        if key.contains(&b'\n') {
            bail!("a key holds a newline: cannot write it one per line");
        }
        out.write_all(key)?;
        out.write_all(b"\n")?;
    }
    out.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Runs `mgz bench seen`.
pub fn run(args: SeenArgs) -> anyhow::Result<ExitCode> {
    let mut names = chosen(&args)?;
    let Loaded { keys, failed } = match (&args.input, args.generate) {
        (Some(path), _) => keys::load_file(path)?,
        (None, Some(n)) => keys::generate(n)?,
        (None, None) => bail!("give --input FILE or --generate N"),
    };
    if args.backends.is_none() && keys.len() > TRIE_DEFAULT_LIMIT {
        names.retain(|n| !PER_BYTE_TRIES.contains(&n.as_str()));
        eprintln!(
            "mgz bench seen: leaving out {} above {TRIE_DEFAULT_LIMIT} URLs (~1 KB per URL each); \
             name them in --backends to run them anyway",
            PER_BYTE_TRIES.join(", ")
        );
    }
    if let Some(path) = &args.dump_keys {
        dump(&keys, path)?;
        eprintln!(
            "mgz bench seen: {} keys written to {}",
            keys.len(),
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let truth = Truth::new(&keys)?;
    eprintln!(
        "mgz bench seen: {} URLs used, {} failed to canonicalise, {} unique, mean key {:.1} B, {} lookups ({} present)",
        keys.len(),
        failed,
        truth.unique,
        keys.total_bytes() as f64 / keys.len().max(1) as f64,
        truth.probes.present.len(),
        truth.probes.present.iter().filter(|p| **p).count(),
    );
    eprintln!("  times are {}", Clock::kind());
    let mut rows = Vec::new();
    for name in &names {
        eprintln!("  {name} ...");
        let mut row = measure(name, &keys, &truth)?;
        for _ in 1..args.repeat {
            let again = measure(name, &keys, &truth)?;
            row.ns_insert = row.ns_insert.min(again.ns_insert);
            row.ns_lookup = row.ns_lookup.min(again.ns_lookup);
        }
        if args.json {
            report::print_json(std::slice::from_ref(&row))?;
        }
        rows.push(row);
    }
    if !args.json {
        report::print_table(&rows);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    /// `--generate 0` printed a table of `inf` and `NaN`: now refused
    /// when the arguments are read.
    #[test]
    fn generating_no_url_is_refused() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: SeenArgs,
        }
        let err = Cli::try_parse_from(["bench", "--generate", "0"])
            .err()
            .expect("--generate 0 was taken");
        assert!(err.to_string().contains("at least 1 URL"), "{err}");
        assert!(Cli::try_parse_from(["bench", "--generate", "-3"]).is_err());
        let ok = Cli::try_parse_from(["bench", "--generate", "5"]).unwrap();
        assert_eq!(ok.args.generate, Some(5));
    }

    #[test]
    fn backends_list_expands_all_and_drops() {
        let got = expand(&strings(&[
            "all",
            "-xtrie",
            "-tst",
            "bloom-classic",
            "hash",
        ]));
        assert_eq!(got[0], "hash");
        assert!(!got.contains(&"xtrie".to_string()) && !got.contains(&"tst".to_string()));
        assert_eq!(got.last().map(String::as_str), Some("bloom-classic"));
        assert_eq!(got.iter().filter(|n| *n == "hash").count(), 1);
    }

    #[test]
    fn dumped_keys_read_back_one_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.txt");
        let mut keys = KeyArena::default();
        for k in [&b"com.example.www/a"[..], b"org.test/b?q=1", b""] {
            keys.push(k).unwrap();
        }
        dump(&keys, &path).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"com.example.www/a\norg.test/b?q=1\n\n"
        );
        let mut bad = KeyArena::default();
        bad.push(b"a\nb").unwrap();
        let err = dump(&bad, &path).unwrap_err().to_string();
        assert!(err.contains("newline"), "{err}");
    }

    #[test]
    fn unbuilt_backend_is_a_clear_error() {
        let err = make("compact", 1).err().map(|e| e.to_string());
        if !BACKENDS.contains(&"compact") {
            assert!(err.unwrap().contains("not built"));
        }
        assert!(make("nonsense", 1).is_err());
    }
}
