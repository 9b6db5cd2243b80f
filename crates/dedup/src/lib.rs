//! Streaming first-occurrence dedupe of lines and URLs: the engine of
//! `mgz dedup`, testable without the binary.
//!
//! ```text
//!   inputs ─▶ Chunks (256 KiB reads, whole lines) ─▶ Deduper ─▶ Sink ─▶ output
//!                                                   │  ▲        │
//!                                         keys ─────┘  │        └─▶ AppendLog (fsync first)
//!   recent-key cache (exact; not for fingerprint) ─▶ SeenSet::insert_batch
//!                                                    (fingerprint, compact: split in
//!                                                     hash-routed parts, see `backend`)
//! ```
//!
//! Guarantees:
//! - output is the first occurrence of each line, in input order, byte for
//!   byte as read (bytes, not text: non-UTF-8, `\r`, empty lines, a last line
//!   without `\n` all come back unchanged); identical to `huniq -t`, and to
//!   plain `huniq` whenever the input ends with a newline;
//! - memory is the set, plus one chunk buffer, plus the longest line;
//! - with an exact backend the answer is exact: keys are the line bytes
//!   themselves, never a hash of them;
//! - with `--append-to`, a line is printed only after it is durable in the
//!   file (see [`AppendLog`]).
//!
//! ```
//! use mgz_dedup::{Deduper, Emit, Options, Sink, backend};
//! let set = backend::open("hash", &Default::default()).unwrap();
//! let mut dedup = Deduper::new(set, Options::default());
//! let mut sink = Sink::new(Vec::new(), Emit::Firsts, None);
//! dedup.run(&b"b\na\nb\r\nb\na"[..], &mut sink, &mut |_| {}).unwrap();
//! assert_eq!(sink.into_inner(), b"b\na\nb\r\n");
//! ```
#![warn(missing_docs)]

mod append;
pub mod backend;
mod chunks;
mod engine;
mod error;
mod key;
mod recent;
mod sink;
mod stats;

pub use append::AppendLog;
pub use chunks::{Chunks, DEFAULT_CHUNK_BYTES};
pub use engine::{Deduper, Options, Rejected};
pub use error::DedupError;
pub use key::{KeyMode, content};
pub use sink::{Emit, Sink};
pub use stats::Stats;
