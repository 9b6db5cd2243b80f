//! Where decided lines go: the output buffer, and the append log first.
//!
//! Lines are gathered per input chunk in one reused buffer and written with a
//! single `write_all` + `flush` when the chunk is done ([`Sink::commit`]): the
//! buffer plays the part of a large `BufWriter`, and committing per chunk
//! keeps the append-before-print order of [`crate::AppendLog`] simple.
//!
//! Lines are printed exactly as read. The one exception joins inputs: when a
//! printed line had no `\n` (the end of one FILE) and another line is printed
//! after it, a `\n` goes between them, so two inputs never glue two lines
//! into one. A single input is reproduced byte for byte.

use std::io::Write;

use crate::{AppendLog, DedupError};

/// Which lines are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Emit {
    /// First occurrences (the default).
    #[default]
    Firsts,
    /// Every occurrence after the first (`--invert`).
    Repeats,
    /// Nothing; only count what `Firsts` would print (`--count`).
    Nothing,
}

/// The output side of a dedupe run.
#[derive(Debug)]
pub struct Sink<W: Write> {
    out: W,
    buf: Vec<u8>,
    emit: Emit,
    append: Option<AppendLog>,
    unterminated: bool,
    printed: u64,
}

impl<W: Write> Sink<W> {
    /// A sink printing `emit` lines to `out`, appending new lines to `append`.
    pub fn new(out: W, emit: Emit, append: Option<AppendLog>) -> Self {
        Sink {
            out,
            buf: Vec::new(),
            emit,
            append,
            unterminated: false,
            printed: 0,
        }
    }

    /// Takes one decided line (`fresh`: first occurrence).
    pub(crate) fn line(&mut self, line: &[u8], fresh: bool) {
        if fresh && let Some(log) = self.append.as_mut() {
            log.push(line);
        }
        let print = match self.emit {
            Emit::Firsts => fresh,
            Emit::Repeats => !fresh,
            Emit::Nothing => {
                self.printed += u64::from(fresh);
                false
            }
        };
        if print {
            self.print(line);
        }
    }

    fn print(&mut self, line: &[u8]) {
        if self.unterminated {
            self.buf.push(b'\n');
        }
        self.buf.extend_from_slice(line);
        self.unterminated = !line.ends_with(b"\n");
        self.printed += 1;
    }

    /// Ends a chunk: makes its new lines durable in the append log, then
    /// writes and flushes its output.
    pub(crate) fn commit(&mut self) -> Result<(), DedupError> {
        if let Some(log) = self.append.as_mut() {
            log.commit()?;
        }
        if !self.buf.is_empty() {
            self.out
                .write_all(&self.buf)
                .map_err(DedupError::from_output)?;
            self.buf.clear();
        }
        self.out.flush().map_err(DedupError::from_output)
    }

    /// Lines printed so far (with [`Emit::Nothing`]: lines that were first
    /// occurrences, i.e. what `--count` reports).
    pub fn printed(&self) -> u64 {
        self.printed
    }

    /// Gives the append log access for preloading.
    pub(crate) fn append_log(&mut self) -> Option<&mut AppendLog> {
        self.append.as_mut()
    }

    /// Returns the underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}
