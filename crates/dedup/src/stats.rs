//! Counters of a dedupe run (`--stats`).

use std::fmt;

/// What a run read and decided, and what the set costs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Seen-set backend name.
    pub backend: &'static str,
    /// Input lines read (the append file not included).
    pub lines_read: u64,
    /// Input lines that were first occurrences.
    pub distinct: u64,
    /// Input lines that repeated an earlier line (or a line of the append file).
    pub duplicates: u64,
    /// Lines skipped by `--strict` because they are not URLs.
    pub rejected: u64,
    /// Lines read from the `--append-to` file before the input.
    pub preloaded: u64,
    /// Distinct keys in the set (input and append file together).
    pub distinct_total: u64,
    /// Heap bytes of the seen-set.
    pub set_bytes: u64,
    /// Heap bytes of the fixed recent-key cache in front of the set (0 without one).
    pub cache_bytes: u64,
}

impl Stats {
    /// Seen-set heap bytes per distinct key (0 when the set is empty).
    pub fn bytes_per_distinct(&self) -> f64 {
        if self.distinct_total == 0 {
            0.0
        } else {
            self.set_bytes as f64 / self.distinct_total as f64
        }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "lines read:        {}", self.lines_read)?;
        writeln!(f, "distinct:          {}", self.distinct)?;
        writeln!(f, "duplicates:        {}", self.duplicates)?;
        if self.rejected > 0 {
            writeln!(f, "rejected (strict): {}", self.rejected)?;
        }
        if self.preloaded > 0 {
            writeln!(f, "append-file lines: {}", self.preloaded)?;
        }
        writeln!(
            f,
            "seen-set:          {} ({} bytes, {:.2} bytes per distinct line)",
            self.backend,
            self.set_bytes,
            self.bytes_per_distinct()
        )?;
        writeln!(f, "recent-key cache:  {} bytes (fixed)", self.cache_bytes)
    }
}
