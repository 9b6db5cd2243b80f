//! A seen-set split into `P` independent sets by a hash of the key.
//!
//! ```text
//!   key ─ route part of key ─ xxh3_64_with_seed(·, SEED) ─ top log2(P) bits ─▶ part p
//!   parts: [ set 0 ][ set 1 ] ... [ set P-1 ]   each holds ~n/P keys
//! ```
//!
//! Why: LSM-style sets (`fingerprint`) rebuild their largest run when they
//! merge, so for a moment they hold it twice: peak memory about 2x the final
//! size. Split into P parts, only one part merges at a time, so the peak is
//! the final size plus 1/P of it. Bytes per key do not change when every part
//! is sized for its share (n/P keys in a set for C/P: the same `C/n`).
//!
//! Batches are grouped by part (a stable counting sort), so each part sees
//! its keys together while its runs are hot in cache, and equal keys (always
//! in one part) keep their order: `out[i]` is what sequential inserts give.
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
//! can be spread over threads ([`Partitioned::with_threads`]): each thread
//! takes a contiguous slice of parts, so every part sees its keys in input
//! order on one thread and the answers do not depend on the thread count.
//!
//! Cost: one extra hash per key, and per batch 4 bytes + one slice per key.

use mgz_seen::{Guarantee, SeenSet};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Seed of the routing hash (any constant other than the backends' 0).
const SEED: u64 = 0x6d67_7a2d_6465_6475;

/// Which bytes of a key choose its part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
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
                let from = memchr::memmem::find(head, b"://").map_or(0, |i| i + 3);
                let end = memchr::memchr(b'/', &key[from..]).map_or(key.len(), |i| from + i);
                &key[from..end]
            }
        }
    }
}

/// `P` seen-sets behind one, routed by a hash of (part of) the key.
pub(crate) struct Partitioned {
    parts: Vec<Box<dyn SeenSet>>,
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

impl Partitioned {
    /// Joins `parts` (a power of two, at least 1, all of one backend).
    pub(crate) fn new(parts: Vec<Box<dyn SeenSet>>, route_by: Route) -> Self {
        debug_assert!(
            parts.len().is_power_of_two(),
            "part count must be a power of two"
        );
        Partitioned {
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
    pub(crate) fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.clamp(1, self.parts.len());
        self
    }

    fn part(&self, key: &[u8]) -> usize {
        // `checked_shr`: with one part the shift is 64, which means part 0.
        let routed = self.route_by.bytes(key);
        xxh3_64_with_seed(routed, SEED)
            .checked_shr(self.shift)
            .unwrap_or(0) as usize
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

impl SeenSet for Partitioned {
    fn insert(&mut self, key: &[u8]) -> bool {
        let p = self.part(key);
        self.parts[p].insert(key)
    }

    fn contains(&self, key: &[u8]) -> bool {
        self.parts[self.part(key)].contains(key)
    }

    fn len(&self) -> usize {
        self.parts.iter().map(|p| p.len()).sum()
    }

    fn heap_bytes(&self) -> usize {
        let own = self.route.capacity() * 4 + self.sub_out.capacity();
        own + self.parts.iter().map(|p| p.heap_bytes()).sum::<usize>()
    }

    fn guarantee(&self) -> Guarantee {
        let worst = self
            .parts
            .iter()
            .map(|p| p.guarantee())
            .fold(0.0_f64, |w, g| match g {
                Guarantee::FalsePositive { rate } => w.max(rate),
                _ => w,
            });
        if worst > 0.0 {
            Guarantee::FalsePositive { rate: worst }
        } else {
            self.parts[0].guarantee()
        }
    }

    fn name(&self) -> &'static str {
        self.parts[0].name()
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
            insert_parts(&mut self.parts, 0, &starts, &grouped, &mut fresh);
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
    use mgz_seen::hash::HashSeen;

    fn split_by(parts: usize, route: Route) -> Partitioned {
        let sets = (0..parts)
            .map(|_| Box::new(HashSeen::new()) as Box<dyn SeenSet>)
            .collect();
        Partitioned::new(sets, route)
    }

    fn split(parts: usize) -> Partitioned {
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
}
