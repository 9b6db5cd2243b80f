//! Settings a crawl keeps for the life of its state directory: the
//! canonicalisation policy (`--policy`).
//!
//! The frontier and its seen set hold URLs in the canonical form of the
//! policy they were put with, and every settle puts the leased URL back
//! through the policy of the run. A rerun with another policy (say
//! `aggressive`, which strips `www.`, after `safe`) would settle a URL under
//! a different text than it was leased with: the lease would never end, the
//! host's queue would stall until the lease timed out (10 minutes), and the
//! seen set would mix two forms of the same URLs. So the first run writes its
//! policy to `STATE/policy`, and a later run with another one is refused
//! with [`CrawlError::State`], saying which policy the crawl has.
//!
//! Layout: one `name=value` line per rule, in this order:
//! `sort_query`, `strip_session_ids`, `strip_tracking`, `strip_www`,
//! `lowercase_path` (`true` or `false`) and `max_len` (bytes). A state made
//! before this file existed gets the run's policy written (the only one it
//! can have been resumed with safely). A file that does not parse is refused
//! and left as it is.

use std::path::Path;

use mgz_url::Policy;

use crate::{CrawlError, state_file};

/// Name of the policy file in the state directory.
pub const FILE: &str = "policy";
/// Longest file read (the six lines take about 120 bytes).
const MAX_FILE: u64 = 4096;

/// Checks `policy` against the one `dir` was created with, writing it first
/// if `dir` has none.
pub fn check_policy(dir: &Path, policy: &Policy) -> Result<(), CrawlError> {
    let path = dir.join(FILE);
    let Some(bytes) = state_file::read(&path, MAX_FILE)? else {
        return state_file::replace(&path, format(policy).as_bytes(), true).map_err(CrawlError::Io);
    };
    let kept = parse_policy(&bytes).map_err(|r| state_file::bad(&path, r))?;
    if kept != *policy {
        return Err(state_file::bad(
            &path,
            format!(
                "this crawl canonicalises URLs with the {} policy, and this run asks for {}: \
                 rerun with --policy {}, or start another crawl with a new --state",
                name(&kept),
                name(policy),
                name(&kept)
            ),
        ));
    }
    Ok(())
}

/// `safe`, `aggressive`, or the rules spelled out.
fn name(p: &Policy) -> String {
    if *p == Policy::safe() {
        "safe".into()
    } else if *p == Policy::aggressive() {
        "aggressive".into()
    } else {
        format!("custom ({})", format(p).trim_end().replace('\n', ", "))
    }
}

/// The file [`check_policy`] writes for `p`.
pub fn format(p: &Policy) -> String {
    format!(
        "sort_query={}\nstrip_session_ids={}\nstrip_tracking={}\nstrip_www={}\n\
         lowercase_path={}\nmax_len={}\n",
        p.sort_query,
        p.strip_session_ids,
        p.strip_tracking,
        p.strip_www,
        p.lowercase_path,
        p.max_len
    )
}

/// The policy in a policy file ([`format()`]'s lines, exactly), or what is
/// wrong with it.
pub fn parse_policy(bytes: &[u8]) -> Result<Policy, String> {
    if bytes.len() as u64 >= MAX_FILE {
        return Err(format!("longer than {} bytes", MAX_FILE - 1));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "not text".to_string())?;
    const NAMES: [&str; 6] = [
        "sort_query",
        "strip_session_ids",
        "strip_tracking",
        "strip_www",
        "lowercase_path",
        "max_len",
    ];
    let lines: Vec<&str> = text
        .strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .collect();
    if lines.len() != NAMES.len() {
        return Err(format!("{} lines, expected {}", lines.len(), NAMES.len()));
    }
    let mut p = Policy::safe();
    for (line, want) in lines.iter().zip(NAMES) {
        let value = line
            .strip_prefix(want)
            .and_then(|v| v.strip_prefix('='))
            .ok_or_else(|| format!("line {line:?}: expected {want}=…"))?;
        let flag = || match value {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("{want}={value:?}: expected true or false")),
        };
        match want {
            "sort_query" => p.sort_query = flag()?,
            "strip_session_ids" => p.strip_session_ids = flag()?,
            "strip_tracking" => p.strip_tracking = flag()?,
            "strip_www" => p.strip_www = flag()?,
            "lowercase_path" => p.lowercase_path = flag()?,
            _ => {
                if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("max_len={value:?}: expected a number of bytes"));
                }
                p.max_len = value
                    .parse()
                    .map_err(|_| format!("max_len={value:?}: out of range"))?;
            }
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_run_writes_its_policy_and_the_same_one_passes() {
        let dir = tempfile::tempdir().unwrap();
        check_policy(dir.path(), &Policy::aggressive()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert_eq!(parse_policy(text.as_bytes()).unwrap(), Policy::aggressive());
        check_policy(dir.path(), &Policy::aggressive()).unwrap();
        assert!(!dir.path().join("policy.tmp").exists());
        for p in [
            Policy::safe(),
            Policy::safe().with_max_len(77),
            Policy::aggressive().with_max_len(usize::MAX),
        ] {
            assert_eq!(parse_policy(format(&p).as_bytes()).unwrap(), p);
        }
    }

    #[test]
    fn another_policy_is_refused_naming_the_crawls_own() {
        let dir = tempfile::tempdir().unwrap();
        check_policy(dir.path(), &Policy::safe()).unwrap();
        let before = std::fs::read(dir.path().join(FILE)).unwrap();
        for other in [Policy::aggressive(), Policy::safe().with_max_len(100)] {
            match check_policy(dir.path(), &other) {
                Err(CrawlError::State { reason, .. }) => {
                    assert!(reason.contains("--policy safe"), "{reason}");
                }
                r => panic!("{r:?}"),
            }
        }
        assert_eq!(std::fs::read(dir.path().join(FILE)).unwrap(), before);
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused_and_kept() {
        let good = format(&Policy::safe());
        let cases: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"safe\n".to_vec(),
            good.replace("false", "no").into_bytes(),
            good.replace("max_len=2048", "max_len=-1").into_bytes(),
            good.replace("max_len=2048", "max_len=").into_bytes(),
            good.replace("max_len=2048", "max_len=99999999999999999999999")
                .into_bytes(),
            good.replace("sort_query", "sort_queries").into_bytes(),
            good.replace("strip_www=false\n", "").into_bytes(),
            format!("{good}extra=1\n").into_bytes(),
            good.replace('\n', "\r\n").into_bytes(),
            good.replace("=", " = ").into_bytes(),
            vec![0xff, 0xfe, 0x00],
            vec![b'x'; 10_000],
        ];
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(FILE)).unwrap();
        assert!(matches!(
            check_policy(dir.path(), &Policy::safe()),
            Err(CrawlError::State { .. })
        ));
        for bytes in cases {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(FILE);
            std::fs::write(&path, &bytes).unwrap();
            match check_policy(dir.path(), &Policy::safe()) {
                Err(CrawlError::State { path: p, reason }) => {
                    assert!(p.ends_with(FILE) && !reason.is_empty(), "{p}: {reason}");
                }
                r => panic!("{:?} gave {r:?}", String::from_utf8_lossy(&bytes)),
            }
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "left as it was");
        }
    }
}
