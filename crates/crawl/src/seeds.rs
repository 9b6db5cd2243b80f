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
//! A seeds file that cannot be read twice (a pipe, a shell's `<(…)`, a
//! terminal) is read whole in the first pass and its bytes kept for the
//! second ([`Spool`]): memory as the file's size, as every seeds file took
//! before session 52.
//!
//! A line is trimmed; blank lines and lines starting with `#` are skipped.
//! A line that is not UTF-8, or longer than [`MAX_LINE`] bytes, is a bad
//! seed, skipped and reported as one that is not a URL is
//! ([`Seed::Unreadable`]); a file with no line break (a binary file given by
//! mistake) is read [`MAX_LINE`] bytes at a time, never whole.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{CrawlConfig, CrawlError};

/// Most seeds read into one batch.
pub const BATCH: usize = 10_000;

/// Longest line read as a seed, in bytes (a crawl cuts URLs far shorter
/// than this as traps, 2,048 bytes by default).
pub const MAX_LINE: u64 = 64 * 1024;

/// One seed read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seed {
    /// A seed's text (not yet checked as a URL).
    Text(String),
    /// A line of the file that cannot be a seed.
    Unreadable {
        /// Its number (1-based).
        line: u64,
        /// Why: not UTF-8, or longer than [`MAX_LINE`].
        why: &'static str,
    },
}

/// The seeds of a seeds file's lines, one at a time, from any reader.
pub struct SeedLines<R> {
    reader: R,
    line_no: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> SeedLines<R> {
    /// Reads `reader` from its start.
    pub fn new(reader: R) -> SeedLines<R> {
        SeedLines {
            reader,
            line_no: 0,
            buf: Vec::new(),
        }
    }

    /// The next seed (blank and comment lines passed over); `None` at the end.
    pub fn next_seed(&mut self) -> std::io::Result<Option<Seed>> {
        loop {
            self.buf.clear();
            if read_line(&mut self.reader, &mut self.buf)? == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            let line = self.line_no;
            let content = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
            if content.len() as u64 > MAX_LINE {
                let why = "longer than 64 KiB";
                return Ok(Some(Seed::Unreadable { line, why }));
            }
            let Ok(text) = std::str::from_utf8(content) else {
                let why = "not UTF-8";
                return Ok(Some(Seed::Unreadable { line, why }));
            };
            let text = text.trim();
            if !text.is_empty() && !text.starts_with('#') {
                return Ok(Some(Seed::Text(text.to_string())));
            }
        }
    }
}

/// The bytes of a seeds file that cannot be read twice, kept between the
/// two passes.
#[derive(Debug, Clone)]
pub struct Spool(Arc<Vec<u8>>);

impl AsRef<[u8]> for Spool {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Spool {
    /// The bytes of `cfg`'s seeds file when it is not a regular file (nor
    /// a directory, which fails to read in [`Seeds`]): `None` for a file
    /// that can be read again, or no seeds file.
    pub fn of(cfg: &CrawlConfig) -> Result<Option<Spool>, CrawlError> {
        let Some(p) = &cfg.seeds_file else {
            return Ok(None);
        };
        let kind = std::fs::metadata(p).map_err(|e| bad(p, e))?.file_type();
        if kind.is_file() || kind.is_dir() {
            return Ok(None);
        }
        let bytes = std::fs::read(p).map_err(|e| bad(p, e))?;
        Ok(Some(Spool(Arc::new(bytes))))
    }
}

/// Reads the seeds in batches.
pub struct Seeds<'a> {
    inline: std::slice::Iter<'a, String>,
    file: Option<(PathBuf, SeedLines<Box<dyn BufRead + Send>>)>,
}

impl<'a> Seeds<'a> {
    /// The seeds of `cfg`, from the first, the file's read from `spool`
    /// when there is one ([`Spool::of`]); a seeds file that cannot be
    /// opened is a [`CrawlError::Config`] naming it.
    pub fn open(cfg: &'a CrawlConfig, spool: Option<&Spool>) -> Result<Seeds<'a>, CrawlError> {
        let file = match (&cfg.seeds_file, spool) {
            (Some(p), Some(spool)) => {
                let r: Box<dyn BufRead + Send> = Box::new(std::io::Cursor::new(spool.clone()));
                Some((p.clone(), SeedLines::new(r)))
            }
            (Some(p), None) => {
                let f = File::open(p).map_err(|e| bad(p, e))?;
                let r: Box<dyn BufRead + Send> = Box::new(BufReader::new(f));
                Some((p.clone(), SeedLines::new(r)))
            }
            (None, _) => None,
        };
        Ok(Seeds {
            inline: cfg.seeds.iter(),
            file,
        })
    }

    /// The next at most `max` seeds (at least one); empty at the end.
    pub fn next_batch(&mut self, max: usize) -> Result<Vec<Seed>, CrawlError> {
        let max = max.max(1);
        let mut out = Vec::with_capacity(max.min(BATCH));
        out.extend(self.inline.by_ref().take(max).cloned().map(Seed::Text));
        let Some((path, lines)) = &mut self.file else {
            return Ok(out);
        };
        while out.len() < max {
            match lines.next_seed().map_err(|e| bad(path, e))? {
                Some(seed) => out.push(seed),
                None => break,
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
                    Seed::Unreadable { .. } => None,
                })
                .collect();
            if !texts.is_empty() {
                return Ok(texts);
            }
        }
    }
}

/// Reads one line into `buf` (its break included), keeping at most
/// [`MAX_LINE`] + 1 bytes of it: the rest of a longer line is read and
/// dropped. Returns the bytes read (0 at the end).
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = std::io::Read::take(&mut *reader, MAX_LINE + 1).read_until(b'\n', buf)?;
    if buf.last() == Some(&b'\n') || total == 0 {
        return Ok(total);
    }
    loop {
        // Past the cap: skip to the line's end, a buffer at a time.
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(total);
        }
        let (used, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
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
        let mut s = Seeds::open(cfg, None).unwrap();
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
            Seed::Unreadable {
                line: 5,
                why: "not UTF-8",
            },
            t("http://e.test/"),
        ];
        for max in [1, 2, 3, 4, 100] {
            let got = all(&c, max);
            assert_eq!(got.concat(), want, "max {max}");
        }
        let mut s = Seeds::open(&c, None).unwrap();
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

    /// The model: the bytes split at each line break, each line judged on
    /// its own.
    fn model(data: &[u8]) -> Vec<Seed> {
        let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        if data.ends_with(b"\n") || data.is_empty() {
            lines.pop();
        }
        let mut out = Vec::new();
        for (i, l) in lines.into_iter().enumerate() {
            let line = i as u64 + 1;
            if l.len() as u64 > MAX_LINE {
                let why = "longer than 64 KiB";
                out.push(Seed::Unreadable { line, why });
            } else if let Ok(t) = std::str::from_utf8(l) {
                let t = t.trim();
                if !t.is_empty() && !t.starts_with('#') {
                    out.push(Seed::Text(t.to_string()));
                }
            } else {
                let why = "not UTF-8";
                out.push(Seed::Unreadable { line, why });
            }
        }
        out
    }

    fn read_all(mut lines: SeedLines<impl BufRead>) -> Vec<Seed> {
        std::iter::from_fn(|| lines.next_seed().unwrap()).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Any bytes, read whole or through a 7-byte buffer, give the
        /// model's seeds; some lines run past the cap.
        #[test]
        fn seed_lines_agree_with_the_model(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => proptest::collection::vec(
                        proptest::sample::select(
                            b" \t\r\n#ax/:.\xff\xc3\xa9".to_vec()
                        ),
                        0..12,
                    ),
                    1 => proptest::strategy::Strategy::prop_map(0u64..3, |k| vec![b'x'; (MAX_LINE + k) as usize - 1]),
                ],
                0..8,
            ),
        ) {
            let data = parts.concat();
            let want = model(&data);
            proptest::prop_assert_eq!(&read_all(SeedLines::new(&data[..])), &want);
            let small = SeedLines::new(std::io::BufReader::with_capacity(7, &data[..]));
            proptest::prop_assert_eq!(&read_all(small), &want);
        }
    }

    #[test]
    fn a_line_past_the_cap_is_one_bad_seed_and_the_next_line_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("seeds.txt");
        let cap = MAX_LINE as usize;
        let mut text = format!("http://a.test/{}\n", "x".repeat(cap)).into_bytes();
        // Exactly at the cap (its break not counted) is still read.
        let at_cap = format!("http://b.test/{}", "y".repeat(cap - 14));
        text.extend_from_slice(format!("{at_cap}\nhttp://c.test/\n").as_bytes());
        // A last line with no break, far past the cap.
        text.extend(std::iter::repeat_n(b'z', 3 * cap));
        std::fs::write(&f, text).unwrap();
        let long = |line| Seed::Unreadable {
            line,
            why: "longer than 64 KiB",
        };
        let want = vec![
            long(1),
            Seed::Text(at_cap),
            Seed::Text("http://c.test/".into()),
            long(4),
        ];
        assert_eq!(all(&cfg(&[], Some(&f)), 2).concat(), want);
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
            Seeds::open(&cfg(&[], Some(&f)), None)
                .unwrap()
                .next_texts(1)
                .unwrap()
                .is_empty()
        );
        let missing = dir.path().join("missing.txt");
        match Seeds::open(&cfg(&[], Some(&missing)), None) {
            Err(CrawlError::Config(m)) => assert!(m.contains("missing.txt"), "{m}"),
            r => panic!("{:?}", r.err()),
        }
        // A directory opens but cannot be read: the error names it.
        let c = cfg(&[], Some(dir.path()));
        match Seeds::open(&c, None).and_then(|mut s| s.next_batch(1)) {
            Err(CrawlError::Config(m)) => assert!(m.contains("seeds file"), "{m}"),
            r => panic!("{r:?}"),
        }
    }
}
