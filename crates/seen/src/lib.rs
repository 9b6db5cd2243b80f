//! Visited-URL sets.
//!
//! Every backend implements [`SeenSet`]. Keys are opaque bytes, normally
//! `mgz_url::CanonicalUrl::key_bytes()`.
//!
//! | backend | module | guarantee | bytes per URL (formula) |
//! |---|---|---|---|
//! | `hash` | [`hash`] | exact | key + ~40 |
//! | `xtrie` | [`xtrie`] | exact, plus the seed's to-do list | 32 per new byte |
//! | `tst` | [`tst`] | exact | 16 per new byte |
//! | `bloom` | [`bloom`] | false positives <= p | 1.44 log2(1/p) / 8 |
//! | `fingerprint` | [`fingerprint`] | false positives <= ε (2^-36) | 4.84 (≈ (log2(1/ε) + 2.7) / 8) |
//! | `compact` | [`compact`] | exact, enumerable (`iter()`) | 15.3 (12.3–12.7 on real lists) |
//!
//! Pick one by name with [`backend`]; [`BACKENDS`] lists the names.
#![warn(missing_docs)]

pub mod bloom;
pub mod compact;
mod error;
pub mod fingerprint;
pub mod hash;
pub mod parted;
mod registry;
pub mod tst;
pub mod xtrie;

pub use error::SeenError;
pub use registry::{BACKENDS, BackendOptions, VARIANTS, backend, restore};

/// What a backend promises about its answers.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Guarantee {
    /// `contains` is exactly right: no false positives, no false negatives.
    Exact,
    /// No false negatives; a key never inserted is reported present with
    /// probability at most `rate` per lookup.
    FalsePositive {
        /// Upper bound on the false-positive probability per lookup.
        rate: f64,
    },
}

/// A set of byte keys that answers "seen before?".
pub trait SeenSet: Send {
    /// Inserts `key`; returns `true` when it was not present before.
    fn insert(&mut self, key: &[u8]) -> bool;
    /// Whether `key` is (probably, see [`SeenSet::guarantee`]) present.
    fn contains(&self, key: &[u8]) -> bool;
    /// Number of distinct keys inserted (for probabilistic sets: inserts that returned `true`).
    fn len(&self) -> usize;
    /// Whether no key was inserted.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Heap bytes owned by the structure.
    fn heap_bytes(&self) -> usize;
    /// What the answers guarantee.
    fn guarantee(&self) -> Guarantee;
    /// Short backend name (`hash`, `compact`, ...).
    fn name(&self) -> &'static str;
    /// Inserts many keys; `out[i]` is what `insert(keys[i])` would have returned.
    /// Backends override this when batching lets them sort or prefetch.
    fn insert_batch(&mut self, keys: &[&[u8]], out: &mut Vec<bool>) {
        out.clear();
        out.extend(keys.iter().map(|k| self.insert(k)));
    }
    /// Waits for work the set left to a background thread (a `compact` set
    /// built with background merges), so that its structure and
    /// [`SeenSet::heap_bytes`] are what they would be without it. Answers
    /// never depend on it. The default has nothing to wait for.
    fn settle(&mut self) {}
    /// This set as a [`fingerprint::FingerprintSet`], if it is one: a
    /// [`parted::Parted`] set of them looks a batch up in all its parts
    /// together (`fingerprint::staged`). `None` for every other backend.
    #[doc(hidden)]
    fn as_fingerprint_mut(&mut self) -> Option<&mut fingerprint::FingerprintSet> {
        None
    }
    /// Serialises the whole set so [`restore`] can rebuild it without the
    /// keys (the frontier reloads its seen index this way). `None` when the
    /// backend has no snapshot form: callers rebuild it from the keys instead.
    /// The bytes start with the backend's own format version; integrity
    /// (checksums) is the caller's business. The bytes are a full-size copy
    /// of the set: to write them somewhere, [`SeenSet::write_snapshot`]
    /// streams the same bytes without that copy.
    fn snapshot(&self) -> Option<Vec<u8>> {
        None
    }
    /// How many bytes [`SeenSet::write_snapshot`] writes (the length of
    /// [`SeenSet::snapshot`]), so a caller can frame them before streaming;
    /// `None` when the backend has no snapshot form. The default counts a
    /// write into a sink; backends that can, compute it.
    fn snapshot_len(&self) -> Option<u64> {
        let mut count = CountingSink(0);
        match self.write_snapshot(&mut count) {
            Ok(true) => Some(count.0),
            _ => None,
        }
    }
    /// Writes exactly the bytes of [`SeenSet::snapshot`] to `out`, straight
    /// from the set's own structures where the backend overrides it (no
    /// full-size temporary: at 10M URLs that copy was 48 MB of peak RSS in
    /// the frontier). `Ok(false)`, with nothing written, when the backend
    /// has no snapshot form. The default writes `snapshot()`.
    fn write_snapshot(&self, out: &mut dyn std::io::Write) -> std::io::Result<bool> {
        match self.snapshot() {
            Some(bytes) => out.write_all(&bytes).map(|()| true),
            None => Ok(false),
        }
    }
}

/// A writer that only counts the bytes written to it.
struct CountingSink(u64);

impl std::io::Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// [`SeenSet::snapshot`] for a backend that streams: its
/// [`SeenSet::write_snapshot`] into a `Vec` of the announced size.
pub(crate) fn snapshot_vec(set: &dyn SeenSet) -> Option<Vec<u8>> {
    let len = usize::try_from(set.snapshot_len()?).ok()?;
    let mut out = Vec::with_capacity(len);
    // Writing into a Vec fails only if the backend refuses (Ok(false) or an
    // error such as a key too long to frame): no snapshot then.
    matches!(set.write_snapshot(&mut out), Ok(true)).then_some(out)
}

/// Collects small writes into `CHUNK`-byte blocks before passing them to a
/// `dyn Write`, so a backend streaming words or varints costs one virtual
/// call per block instead of one per field.
pub(crate) struct Chunked<'a> {
    out: &'a mut dyn std::io::Write,
    buf: Vec<u8>,
}

/// Bytes [`Chunked`] gathers before each write.
const CHUNK: usize = 64 << 10;

impl<'a> Chunked<'a> {
    pub(crate) fn new(out: &'a mut dyn std::io::Write) -> Self {
        Chunked {
            out,
            buf: Vec::with_capacity(CHUNK),
        }
    }

    /// Appends `bytes`, writing a block out whenever it fills.
    pub(crate) fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.buf.len() + bytes.len() > CHUNK {
            self.drain()?;
        }
        if bytes.len() >= CHUNK {
            return self.out.write_all(bytes);
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Appends a little-endian `u64`.
    pub(crate) fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.put(&v.to_le_bytes())
    }

    /// Appends little-endian `u64` words.
    pub(crate) fn words(&mut self, words: &[u64]) -> std::io::Result<()> {
        words.iter().try_for_each(|&w| self.u64(w))
    }

    fn drain(&mut self) -> std::io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Writes what is left (call once, at the end).
    pub(crate) fn finish(mut self) -> std::io::Result<()> {
        self.drain()
    }
}
