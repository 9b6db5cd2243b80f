//! A seen-set split into `P` independent sets by a hash of the key
//! (`fingerprint-parts`, `compact-parts`).
//!
//! ```text
//!   key ─ route part of key ─ xxh3_64_with_seed(·, SEED) ─ top log2(P) bits ─▶ part p
//!   parts: [ set 0 ][ set 1 ] ... [ set P-1 ]   each holds ~n/P keys
//! ```
//!
//! Why: LSM-style sets (`fingerprint`, `compact`) rebuild their largest run
//! when they merge, so for a moment they hold it twice: peak memory about
//! 2x the final size (at 10M URLs in the frontier, 48 MB of fingerprints
//! plus a 48 MB merge). Split into P parts, only one part merges at a time,
//! so the peak is the final size plus 1/P of it. Bytes per key do not
//! change when every part is sized for its share (n/P keys in a set for
//! C/P: the same `C/n`).
//!
//! Batches are grouped by part (a stable counting sort), so each part sees
//! its keys together while its runs are hot in cache, and equal keys (always
//! in one part) keep their order: `out[i]` is what sequential inserts give.
//! When every part is a `fingerprint` set taking its share as a small batch
//! (the frontier's 256-URL batches over 64 parts), the lookups of all parts
//! run as one staged pass (`fingerprint::staged`) before each part inserts
//! its new keys: 10M-URL frontier put phase, 5 % less CPU (docs/BENCHMARKS.md,
//! "Session 18").
//!
//! Guarantee: a lookup consults exactly one part, so the false-positive rate
//! per lookup is the largest of the parts' rates; exact parts stay exact.
//! The routing hash uses its own seed: `fingerprint` derives fingerprints
//! from unseeded xxh3, and routing on those same bits would put fingerprints
//! of one part into 1/P of its universe, multiplying collisions by P.
//!
//! Routing on the whole key suits hashed sets. Sets that compress sorted
//! neighbours (`compact` front-codes a host's URLs together) route on the
//! host ([`Route::Host`]), so each host's keys stay in one part, still sorted
//! together; a very popular host then makes its part bigger than n/P.
//!
//! Parts are independent, so a batch of at least `PARALLEL_MIN_KEYS` keys
//! can be spread over threads ([`Parted::with_threads`]): each thread
//! takes a contiguous slice of parts, so every part sees its keys in input
//! order on one thread and the answers do not depend on the thread count.
//!
//! Invariants: the part count is a power of two, at most [`MAX_PARTS`];
//! a key is only ever in part `part(key)`; `worst` is at least every part's
//! false-positive rate.
//!
//! Cost: one extra hash per key, and per batch 4 bytes + one slice per key.
//! Bytes per URL: the parts' own plus a fixed cost per part (its boxed set
//! and buffers). Measured by `mgz bench frontier` at 10M URLs: 64
//! `fingerprint` parts held 48,301,126 B against 47,950,814 B whole (4.8
//! B/URL either way).
//!
//! Snapshot (when every part has one; all integers little-endian):
//! ```text
//! version u8 = 1 | route u8 (0 key, 1 host) | parts u32 (power of two, <= 65,536)
//! per part: len u64 | the part's own snapshot (len bytes)
//! ```
//! The parts' backend is the name's stem (`fingerprint-parts` → `fingerprint`).

use crate::compact::CompactSet;
use crate::{Guarantee, SeenError, SeenSet};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Seed of the routing hash (any constant other than the backends' 0).
const SEED: u64 = 0x6d67_7a2d_6465_6475;

/// Most parts a set (and a snapshot) may have.
pub const MAX_PARTS: usize = 1 << 16;

/// Parts of `fingerprint-parts` and `compact-parts` (a power of two). More
/// parts make the merge transient (a part's largest run held twice)
/// smaller: on `mgz dedup`'s 10M synthetic list, `compact` in 16 → 64
/// parts took peak RSS from 159.3 to 158.0 MB at the same bytes per line
/// (13.94 → 13.92).
pub const PARTS: usize = 64;

/// Smallest buffer of each `fingerprint` part, in fingerprints (see
/// `FingerprintSet::with_min_buffer`). Bigger buffers merge less but raise
/// peak RSS more than their own bytes; on `mgz dedup`'s 10M synthetic list
/// (whole dedupe loop, CPU s / peak RSS): 256 → 8.31 s / 51.0 MB, 512 →
/// 7.91 s / 53.4 MB, 1024 → 7.25 s / 55.8 MB. 256 is also what a part
/// sized for 2^24 / 64 keys gets by itself (capacity / 1024).
pub const FINGERPRINT_BUFFER: usize = 256;

/// Snapshot format version.
const SNAPSHOT_VERSION: u8 = 1;

/// Snapshot header bytes: version, route, part count.
const HEADER: usize = 6;

/// Which bytes of a key choose its part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The whole key.
    Key,
    /// The host: after a `://` near the start (if any), up to the next `/`.
    /// Canonical keys (`com.example/path`) and raw URL lines both route on
    /// their host; other lines route on what precedes their first `/`.
    Host,
}

impl Route {
    fn bytes(self, key: &[u8]) -> &[u8] {
        match self {
            Route::Key => key,
            Route::Host => {
                let head = &key[..key.len().min(16)];
                let from = head
                    .windows(3)
                    .position(|w| w == b"://")
                    .map_or(0, |i| i + 3);
                let end = key[from..]
                    .iter()
                    .position(|&b| b == b'/')
                    .map_or(key.len(), |i| from + i);
                &key[from..end]
            }
        }
    }
}

/// `P` seen-sets behind one, routed by a hash of (part of) the key.
pub struct Parted {
    parts: Vec<Box<dyn SeenSet>>,
    /// Largest false-positive rate of any part (0 while all are exact),
    /// raised after every insert into a part, so `guarantee` costs no
    /// walk over the parts (the frontier asks on every URL). A part's rate
    /// only grows with its keys; if one fell, this would stay high, which
    /// errs on the safe side.
    worst: f64,
    route_by: Route,
    shift: u32,
    route: Vec<u32>,
    sub_out: Vec<bool>,
    threads: usize,
}

/// Smallest batch worth spreading over threads (a scoped spawn costs tens
/// of microseconds; a 1024-key batch of `compact` inserts, milliseconds).
/// The 64 KiB chunks of `mgz dedup` (~960 URL lines) stay below it, so its
/// parts run on one thread: at 256 the two threads' merges and allocator
/// arenas took peak RSS over ⅛ of `runiq -f simple` (docs/BENCHMARKS.md,
/// "Session 6").
const PARALLEL_MIN_KEYS: usize = 1024;

impl Parted {
    /// Joins `parts` (a power of two, at least 1, at most [`MAX_PARTS`],
    /// all of one backend); other counts give [`SeenError::TooLarge`].
    pub fn new(parts: Vec<Box<dyn SeenSet>>, route_by: Route) -> Result<Self, SeenError> {
        let n = parts.len();
        if !n.is_power_of_two() || n > MAX_PARTS {
            return Err(SeenError::TooLarge {
                expected: n as u64,
                backend: "parts (a power of two up to 65,536)",
            });
        }
        Ok(Parted::assemble(parts, route_by))
    }

    /// [`Parted::new`] without the check: `parts.len()` is a power of two.
    fn assemble(parts: Vec<Box<dyn SeenSet>>, route_by: Route) -> Self {
        let worst = parts.iter().map(|p| rate(&**p)).fold(0.0, f64::max);
        Parted {
            worst,
            route_by,
            shift: 64 - parts.len().trailing_zeros(),
            parts,
            route: Vec::new(),
            sub_out: Vec::new(),
            threads: 1,
        }
    }

    /// Spreads batches over up to `threads` threads (parts are independent
    /// sets; each stays on one thread, so answers do not depend on it).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.clamp(1, self.parts.len());
        self
    }

    /// `fingerprint` in [`PARTS`] parts routed by key, each sized for its
    /// share of `expected` keys at false-positive rate `epsilon`.
    pub fn fingerprint(expected: usize, epsilon: f64) -> Result<Self, SeenError> {
        let capacity = (expected / PARTS).max(1);
        let parts = (0..PARTS)
            .map(|_| {
                let set = crate::fingerprint::FingerprintSet::new(capacity, epsilon)?;
                Ok(Box::new(set.with_min_buffer(FINGERPRINT_BUFFER)) as Box<dyn SeenSet>)
            })
            .collect::<Result<Vec<_>, SeenError>>()?;
        Parted::new(parts, Route::Key)
    }

    /// `compact` in [`PARTS`] parts routed by host.
    pub fn compact() -> Self {
        Self::compact_parts(CompactSet::new)
    }

    /// [`Parted::compact`] whose parts merge on the background thread
    /// ([`CompactSet::with_background_merges`]).
    pub fn compact_background() -> Self {
        Self::compact_parts(|| CompactSet::new().with_background_merges())
    }

    /// [`PARTS`] sets made by `make`, routed by host.
    fn compact_parts(make: fn() -> CompactSet) -> Self {
        let parts = (0..PARTS)
            .map(|_| Box::new(make()) as Box<dyn SeenSet>)
            .collect();
        Parted::assemble(parts, Route::Host)
    }

    /// Rebuilds a set from [`SeenSet::snapshot`] bytes whose parts are of
    /// backend `inner` (`fingerprint`, `compact`, `hash`). Malformed bytes
    /// give [`SeenError::BadSnapshot`], never a panic.
    pub fn restore(inner: &str, bytes: &[u8]) -> Result<Self, SeenError> {
        let bad = |reason: String| SeenError::BadSnapshot {
            backend: format!("{inner}-parts"),
            reason,
        };
        if inner.ends_with("-parts") {
            return Err(bad("parts of parts are not a snapshot form".into()));
        }
        let Some(head) = bytes.get(..HEADER) else {
            return Err(bad(format!(
                "{} bytes, shorter than the header",
                bytes.len()
            )));
        };
        if head[0] != SNAPSHOT_VERSION {
            return Err(bad(format!(
                "version {} (this build reads {SNAPSHOT_VERSION})",
                head[0]
            )));
        }
        let route_by = match head[1] {
            0 => Route::Key,
            1 => Route::Host,
            r => return Err(bad(format!("unknown route {r}"))),
        };
        let n = u32::from_le_bytes([head[2], head[3], head[4], head[5]]) as usize;
        if !n.is_power_of_two() || n > MAX_PARTS {
            return Err(bad(format!("{n} parts (a power of two up to {MAX_PARTS})")));
        }
        let mut at = HEADER;
        let mut parts = Vec::with_capacity(n);
        for i in 0..n {
            let Some(len) = bytes.get(at..at + 8) else {
                return Err(bad(format!("truncated before part {i}")));
            };
            let len = u64::from_le_bytes(len.try_into().unwrap_or([0xff; 8]));
            at += 8;
            let left = (bytes.len() - at) as u64;
            if len > left {
                return Err(bad(format!("part {i} claims {len} bytes, {left} left")));
            }
            let end = at + len as usize;
            let part = crate::restore(inner, &bytes[at..end])
                .map_err(|e| bad(format!("part {i}: {e}")))?;
            parts.push(part);
            at = end;
        }
        if at != bytes.len() {
            return Err(bad(format!("{} trailing bytes", bytes.len() - at)));
        }
        Parted::new(parts, route_by).map_err(|e| bad(e.to_string()))
    }

    /// The parts' snapshot lengths, `None` if one has no snapshot form.
    fn part_lens(&self) -> Option<Vec<u64>> {
        self.parts.iter().map(|p| p.snapshot_len()).collect()
    }

    /// Raises [`Parted::worst`] to part `p`'s rate.
    fn note(&mut self, p: usize) {
        self.worst = self.worst.max(rate(&*self.parts[p]));
    }

    fn part(&self, key: &[u8]) -> usize {
        // `checked_shr`: with one part the shift is 64, which means part 0.
        let routed = self.route_by.bytes(key);
        xxh3_64_with_seed(routed, SEED)
            .checked_shr(self.shift)
            .unwrap_or(0) as usize
    }
}

/// A set's false-positive rate per lookup, 0 for an exact one.
fn rate(set: &dyn SeenSet) -> f64 {
    match set.guarantee() {
        Guarantee::FalsePositive { rate } => rate,
        _ => 0.0,
    }
}

/// Inserts the keys of `parts` (part numbers `first..`) from `grouped`
/// (keys grouped by part, part `p` at `starts[p]..starts[p + 1]`), appending
/// their answers to `fresh` in grouped order.
fn insert_parts(
    parts: &mut [Box<dyn SeenSet>],
    first: usize,
    starts: &[usize],
    grouped: &[&[u8]],
    fresh: &mut Vec<bool>,
) {
    let mut sub = Vec::new();
    for (k, part) in parts.iter_mut().enumerate() {
        let (from, to) = (starts[first + k], starts[first + k + 1]);
        if from < to {
            part.insert_batch(&grouped[from..to], &mut sub);
            fresh.extend_from_slice(&sub);
        }
    }
}

impl SeenSet for Parted {
    fn insert(&mut self, key: &[u8]) -> bool {
        let p = self.part(key);
        let fresh = self.parts[p].insert(key);
        self.note(p);
        fresh
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.parts[self.part(key)].contains(key)
    }

    fn settle(&mut self) {
        self.parts.iter_mut().for_each(|p| p.settle());
    }

    fn len(&self) -> usize {
        self.parts.iter().map(|p| p.len()).sum()
    }

    fn heap_bytes(&self) -> usize {
        let own = self.route.capacity() * 4 + self.sub_out.capacity();
        own + self.parts.iter().map(|p| p.heap_bytes()).sum::<usize>()
    }

    fn guarantee(&self) -> Guarantee {
        if self.worst > 0.0 {
            Guarantee::FalsePositive { rate: self.worst }
        } else {
            self.parts[0].guarantee()
        }
    }

    fn name(&self) -> &'static str {
        match self.parts[0].name() {
            "fingerprint" => "fingerprint-parts",
            "compact" => "compact-parts",
            "hash" => "hash-parts",
            _ => "parts",
        }
    }

    fn snapshot(&self) -> Option<Vec<u8>> {
        crate::snapshot_vec(self)
    }

    fn snapshot_len(&self) -> Option<u64> {
        let lens = self.part_lens()?;
        Some(HEADER as u64 + lens.iter().map(|l| 8 + l).sum::<u64>())
    }

    fn write_snapshot(&self, out: &mut dyn std::io::Write) -> std::io::Result<bool> {
        let Some(lens) = self.part_lens() else {
            return Ok(false);
        };
        let route = match self.route_by {
            Route::Key => 0u8,
            Route::Host => 1,
        };
        out.write_all(&[SNAPSHOT_VERSION, route])?;
        out.write_all(&(self.parts.len() as u32).to_le_bytes())?;
        for (part, len) in self.parts.iter().zip(lens) {
            out.write_all(&len.to_le_bytes())?;
            if !part.write_snapshot(out)? {
                return Err(std::io::Error::other("a part stopped giving snapshots"));
            }
        }
        Ok(true)
    }

    fn insert_batch(&mut self, keys: &[&[u8]], out: &mut Vec<bool>) {
        let mut starts = vec![0usize; self.parts.len() + 1];
        self.route.clear();
        for key in keys {
            let p = self.part(key);
            self.route.push(p as u32);
            starts[p + 1] += 1;
        }
        for p in 0..self.parts.len() {
            starts[p + 1] += starts[p];
        }
        // Stable counting sort: key indexes grouped by part, in input order.
        let mut order = vec![0u32; keys.len()];
        let mut next = starts.clone();
        for (i, &p) in self.route.iter().enumerate() {
            order[next[p as usize]] = i as u32;
            next[p as usize] += 1;
        }
        let grouped: Vec<&[u8]> = order.iter().map(|&i| keys[i as usize]).collect();
        let threads = if keys.len() >= PARALLEL_MIN_KEYS {
            self.threads
        } else {
            1
        };
        // Each thread takes a contiguous slice of parts and answers for
        // their keys in grouped order; concatenated, that is `grouped`'s order.
        let per = self.parts.len().div_ceil(threads);
        let mut fresh = std::mem::take(&mut self.sub_out);
        fresh.clear();
        if threads == 1 {
            // Parts that are `fingerprint` sets answer their shares together
            // (see `fingerprint::staged`), else each part in turn.
            if !crate::fingerprint::staged::insert_parts(
                &mut self.parts,
                &starts,
                &grouped,
                &mut fresh,
            ) {
                insert_parts(&mut self.parts, 0, &starts, &grouped, &mut fresh);
            }
        } else {
            // The calling thread takes the first slice itself: one spawn
            // fewer per batch, and one allocator arena fewer in use.
            let (mine, rest) = self.parts.split_at_mut(per);
            std::thread::scope(|s| {
                let workers: Vec<_> = rest
                    .chunks_mut(per)
                    .enumerate()
                    .map(|(t, parts)| {
                        let (starts, grouped) = (&starts, &grouped);
                        s.spawn(move || {
                            let mut answers = Vec::new();
                            insert_parts(parts, (t + 1) * per, starts, grouped, &mut answers);
                            answers
                        })
                    })
                    .collect();
                insert_parts(mine, 0, &starts, &grouped, &mut fresh);
                for w in workers {
                    fresh.extend(w.join().expect("a part's insert panicked"));
                }
            });
        }
        for p in 0..self.parts.len() {
            if starts[p] < starts[p + 1] {
                self.note(p);
            }
        }
        out.clear();
        out.resize(keys.len(), false);
        for (j, &is_new) in fresh.iter().enumerate() {
            out[order[j] as usize] = is_new;
        }
        self.sub_out = fresh;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashSeen;

    fn split_by(parts: usize, route: Route) -> Parted {
        let sets = (0..parts)
            .map(|_| Box::new(HashSeen::new()) as Box<dyn SeenSet>)
            .collect();
        Parted::new(sets, route).unwrap()
    }

    fn split(parts: usize) -> Parted {
        split_by(parts, Route::Key)
    }

    #[test]
    fn host_routing_keeps_a_host_in_one_part() {
        let set = split_by(16, Route::Host);
        let part = set.part(b"https://www.example.com/a");
        for key in [
            "https://www.example.com/b/c",
            "https://www.example.com",
            "http://www.example.com/x?y",
        ] {
            assert_eq!(set.part(key.as_bytes()), part, "{key}");
        }
        assert_eq!(Route::Host.bytes(b"com.example/p/q"), b"com.example");
        assert_eq!(Route::Host.bytes(b"no slash"), b"no slash");
        assert_eq!(
            Route::Host.bytes(b"http://h.example:8080/p"),
            b"h.example:8080"
        );
    }

    #[test]
    fn batches_answer_like_sequential_inserts() {
        let keys: Vec<Vec<u8>> = (0..3000)
            .map(|i| format!("k{}", i % 1700).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        for (parts, threads) in [(1, 1), (2, 1), (16, 1), (2, 2), (16, 3)] {
            let mut batched = split(parts).with_threads(threads);
            let mut out = Vec::new();
            batched.insert_batch(&refs[..1000], &mut out);
            let mut got = out.clone();
            batched.insert_batch(&refs[1000..], &mut out);
            got.extend_from_slice(&out);
            let mut one = HashSeen::new();
            let want: Vec<bool> = refs.iter().map(|k| one.insert(k)).collect();
            assert_eq!(got, want, "{parts} parts, {threads} threads");
            assert_eq!(batched.len(), 1700);
            assert!(batched.contains(b"k5") && !batched.contains(b"k1700"));
        }
    }

    #[test]
    fn keys_spread_over_all_parts() {
        let mut set = split(8);
        for i in 0..8000 {
            set.insert(format!("https://h{}.example/{i}", i % 13).as_bytes());
        }
        for part in &set.parts {
            assert!(
                (800..1200).contains(&part.len()),
                "part holds {}",
                part.len()
            );
        }
    }

    fn filled(set: &mut dyn SeenSet, n: usize) {
        for i in 0..n {
            set.insert(format!("com.h{}/p/{i}", i % 37).as_bytes());
        }
    }

    #[test]
    fn snapshots_round_trip_for_every_inner_backend() {
        let sets: Vec<Box<dyn SeenSet>> = vec![
            Box::new(split(8)),
            Box::new(split_by(4, Route::Host)),
            Box::new(Parted::fingerprint(5000, 2f64.powi(-20)).unwrap()),
            Box::new(Parted::compact()),
        ];
        for mut set in sets {
            filled(&mut *set, 3000);
            let bytes = set.snapshot().unwrap();
            assert_eq!(bytes.len() as u64, set.snapshot_len().unwrap());
            let name = set.name();
            let back = crate::restore(name, &bytes).unwrap();
            assert_eq!(back.name(), name);
            assert_eq!(back.len(), 3000, "{name}");
            for i in 0..3000 {
                let key = format!("com.h{}/p/{i}", i % 37);
                assert!(back.contains(key.as_bytes()), "{name} lost {key}");
            }
            assert!(!back.contains(b"com.h1/p/absent") || name == "fingerprint-parts");
            // `hash` writes its keys in table order, which a restore may change.
            if name != "hash-parts" {
                assert_eq!(back.snapshot().unwrap(), bytes, "{name}: not stable");
            }
        }
    }

    #[test]
    fn malformed_snapshots_are_refused_with_a_reason() {
        let mut set = split(4);
        filled(&mut set, 200);
        let good = set.snapshot().unwrap();
        let refuse = |bytes: &[u8]| {
            let err = Parted::restore("hash", bytes).err();
            assert!(
                matches!(err, Some(SeenError::BadSnapshot { .. })),
                "accepted {bytes:?}"
            );
        };
        for cut in 0..good.len() {
            refuse(&good[..cut]);
        }
        let mut longer = good.clone();
        longer.push(0);
        refuse(&longer);
        for (at, value) in [(0, 2u8), (1, 7), (2, 3), (2, 0), (5, 0x80)] {
            let mut bad = good.clone();
            bad[at] = value;
            refuse(&bad);
        }
        // A part length pointing past the end.
        let mut bad = good.clone();
        bad[HEADER..HEADER + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        refuse(&bad);
        // Parts of another backend, and parts of parts.
        assert!(Parted::restore("fingerprint", &good).is_err());
        assert!(Parted::restore("hash-parts", &good).is_err());
        assert!(crate::restore("hash-parts", &good).is_ok());
    }

    #[test]
    fn part_counts_must_be_powers_of_two() {
        for n in [0, 3, 12] {
            let sets = (0..n)
                .map(|_| Box::new(HashSeen::new()) as Box<dyn SeenSet>)
                .collect();
            assert!(Parted::new(sets, Route::Key).is_err(), "{n} parts");
        }
    }

    #[test]
    fn guarantee_is_the_worst_part_as_parts_grow() {
        let walk = |set: &Parted| set.parts.iter().map(|p| rate(&**p)).fold(0.0, f64::max);
        // Parts sized for 1 key each: every part adds generations, and its
        // rate moves, as keys arrive one by one and in batches.
        let mut set = Parted::fingerprint(64, 2f64.powi(-12)).unwrap();
        let keys: Vec<Vec<u8>> = (0..6000).map(|i| format!("k{i}").into_bytes()).collect();
        for (i, key) in keys.iter().enumerate().take(3000) {
            set.insert(key);
            if i % 500 == 0 {
                assert_eq!(rate(&set), walk(&set), "after {i} inserts");
            }
        }
        let refs: Vec<&[u8]> = keys[3000..].iter().map(Vec::as_slice).collect();
        set.insert_batch(&refs, &mut Vec::new());
        assert_eq!(rate(&set), walk(&set));
        assert!(rate(&set) > 0.0);
        let back = crate::restore("fingerprint-parts", &set.snapshot().unwrap()).unwrap();
        assert_eq!(rate(&*back), walk(&set));
        assert_eq!(split(4).guarantee(), Guarantee::Exact);
    }
}
