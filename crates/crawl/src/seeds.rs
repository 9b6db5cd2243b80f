//! Seed URLs: those given one by one ([`CrawlConfig::seeds`]), then the
//! lines of a seeds file ([`CrawlConfig::seeds_file`]), read in batches of
//! at most [`BATCH`] so that a million seeds never sit in memory at once.
//!
//! The file is read twice, each time one batch at a time: once before the
//! crawl opens, for the scope (the seeds' hosts, kept as 8-byte keys by
//! [`crate::traps::SeedScope`]) and to refuse a seed list with no usable
//! URL; then to queue the seeds, with the stop flag checked between batches
//! (a Ctrl-C or `--max-time` during a long seeding stops it: the next run
//! puts every seed again and the seen set drops those already known).
//!
//! A line is trimmed; blank lines and lines starting with `#` are skipped.
//! A line that is not UTF-8 is a bad seed, skipped and reported as one that
//! is not a URL is ([`Seed::Unreadable`]).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::{CrawlConfig, CrawlError};

/// Most seeds read into one batch.
pub const BATCH: usize = 10_000;

/// One seed read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seed {
    /// A seed's text (not yet checked as a URL).
    Text(String),
    /// A line of the file that is not UTF-8: its number (1-based).
    Unreadable(u64),
}

/// Reads the seeds in batches.
pub struct Seeds<'a> {
    inline: std::slice::Iter<'a, String>,
    file: Option<(PathBuf, BufReader<File>)>,
    line_no: u64,
    buf: Vec<u8>,
}

impl<'a> Seeds<'a> {
    /// The seeds of `cfg`, from the first; a seeds file that cannot be
    /// opened is a [`CrawlError::Config`] naming it.
    pub fn open(cfg: &'a CrawlConfig) -> Result<Seeds<'a>, CrawlError> {
        let file = match &cfg.seeds_file {
            Some(p) => Some((
                p.clone(),
                BufReader::new(File::open(p).map_err(|e| bad(p, e))?),
            )),
            None => None,
        };
        Ok(Seeds {
            inline: cfg.seeds.iter(),
            file,
            line_no: 0,
            buf: Vec::new(),
        })
    }

    /// The next at most `max` seeds (at least one); empty at the end.
    pub fn next_batch(&mut self, max: usize) -> Result<Vec<Seed>, CrawlError> {
        let max = max.max(1);
        let mut out = Vec::with_capacity(max.min(BATCH));
        out.extend(self.inline.by_ref().take(max).cloned().map(Seed::Text));
        let Some((path, reader)) = &mut self.file else {
            return Ok(out);
        };
        while out.len() < max {
            self.buf.clear();
            let n = reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| bad(path, e))?;
            if n == 0 {
                break;
            }
            self.line_no += 1;
            let Ok(line) = std::str::from_utf8(&self.buf) else {
                out.push(Seed::Unreadable(self.line_no));
                continue;
            };
            let line = line.trim();
            if !line.is_empty() && !line.starts_with('#') {
                out.push(Seed::Text(line.to_string()));
            }
        }
        Ok(out)
    }

    /// The next at most `max` seeds' texts (lines that are not UTF-8
    /// left out); empty at the end.
    pub fn next_texts(&mut self, max: usize) -> Result<Vec<String>, CrawlError> {
        loop {
            let batch = self.next_batch(max)?;
            if batch.is_empty() {
                return Ok(Vec::new());
            }
            let texts: Vec<String> = batch
                .into_iter()
                .filter_map(|s| match s {
                    Seed::Text(t) => Some(t),
                    Seed::Unreadable(_) => None,
                })
                .collect();
            if !texts.is_empty() {
                return Ok(texts);
            }
        }
    }
}

fn bad(path: &Path, e: std::io::Error) -> CrawlError {
    CrawlError::Config(format!("seeds file {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(inline: &[&str], file: Option<&Path>) -> CrawlConfig {
        CrawlConfig {
            seeds: inline.iter().map(|s| s.to_string()).collect(),
            seeds_file: file.map(Path::to_path_buf),
            ..CrawlConfig::default()
        }
    }

    fn all(cfg: &CrawlConfig, max: usize) -> Vec<Vec<Seed>> {
        let mut s = Seeds::open(cfg).unwrap();
        let mut out = Vec::new();
        loop {
            let b = s.next_batch(max).unwrap();
            if b.is_empty() {
                return out;
            }
            assert!(b.len() <= max);
            out.push(b);
        }
    }

    #[test]
    fn inline_seeds_then_the_files_lines_in_batches() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("seeds.txt");
        let mut text = b"# comment\n\n  http://c.test/  \r\nhttp://d.test/\n".to_vec();
        text.extend_from_slice(b"http://\xff.test/\nhttp://e.test/");
        std::fs::write(&f, text).unwrap();
        let c = cfg(&["http://a.test/", "http://b.test/"], Some(&f));
        let t = |s: &str| Seed::Text(s.into());
        let want = vec![
            t("http://a.test/"),
            t("http://b.test/"),
            t("http://c.test/"),
            t("http://d.test/"),
            Seed::Unreadable(5),
            t("http://e.test/"),
        ];
        for max in [1, 2, 3, 4, 100] {
            let got = all(&c, max);
            assert_eq!(got.concat(), want, "max {max}");
        }
        let mut s = Seeds::open(&c).unwrap();
        assert_eq!(
            s.next_texts(5).unwrap(),
            [
                "http://a.test/",
                "http://b.test/",
                "http://c.test/",
                "http://d.test/"
            ]
        );
        assert_eq!(s.next_texts(5).unwrap(), ["http://e.test/"]);
        assert!(s.next_texts(5).unwrap().is_empty());
    }

    #[test]
    fn no_file_and_an_empty_file_and_a_file_that_cannot_be_opened() {
        assert_eq!(all(&cfg(&["x"], None), 10), [[Seed::Text("x".into())]]);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("empty.txt");
        std::fs::write(&f, "# nothing\n\n").unwrap();
        assert!(all(&cfg(&[], Some(&f)), 10).is_empty());
        // Only unreadable lines: `next_texts` goes past them to the end.
        std::fs::write(&f, b"\xfe\n\xff\n").unwrap();
        assert!(
            Seeds::open(&cfg(&[], Some(&f)))
                .unwrap()
                .next_texts(1)
                .unwrap()
                .is_empty()
        );
        let missing = dir.path().join("missing.txt");
        match Seeds::open(&cfg(&[], Some(&missing))) {
            Err(CrawlError::Config(m)) => assert!(m.contains("missing.txt"), "{m}"),
            r => panic!("{:?}", r.err()),
        }
        // A directory opens but cannot be read: the error names it.
        let c = cfg(&[], Some(dir.path()));
        match Seeds::open(&c).and_then(|mut s| s.next_batch(1)) {
            Err(CrawlError::Config(m)) => assert!(m.contains("seeds file"), "{m}"),
            r => panic!("{r:?}"),
        }
    }
}
