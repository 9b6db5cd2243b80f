//! Snapshot form of [`FingerprintSet`]: the Elias–Fano words as they are,
//! so a restore copies and checks them instead of re-inserting every key.
//!
//! ```text
//! version    u8 = 2            (1: the same without min_buffer, read as 0)
//! epsilon    f64 LE            capacity  u64 LE       saturated  u8 (0 | 1)
//! min_buffer u64 LE            (see `FingerprintSet::with_min_buffer`)
//! gens       u32 LE, then per generation (oldest first):
//!   buffered u32 LE, then buffered × u64 LE   (sorted fingerprints)
//!   runs     u32 LE, then per run (oldest first):
//!     len    u64 LE, low words × u64 LE, high words × u64 LE
//! ```
//!
//! Universes and capacities are not stored: they follow from `epsilon` and
//! `capacity` exactly as [`FingerprintSet::new`] and growth derive them, so
//! a snapshot cannot claim a weaker bound than its header. Word counts follow
//! from each run's `len` and its universe. Size: the set's heap bytes minus
//! the select samples, plus ~30 bytes per run.
//!
//! Restore checks every structural invariant that lookups, merges and
//! iteration rely on (word counts, exactly `len` high ones, values strictly
//! increasing below the universe, earlier generations full, buffer below
//! its cap), so any byte string gives a set or [`SeenError::BadSnapshot`],
//! never a panic. Cost: one sequential decode of every run (a few ns per
//! fingerprint) plus rebuilding the select samples. Integrity against bit
//! flips that keep the structure valid is the caller's business (checksums).

use super::FingerprintSet;
use super::ef::{EliasFano, Shape};
use super::lsm::Generation;
use crate::{Chunked, SeenError};

/// Version byte that starts a [`FingerprintSet`] snapshot.
const VERSION: u8 = 2;

/// Header bytes: version, epsilon, capacity, saturated, min_buffer, gens.
const HEADER_LEN: u64 = 1 + 8 + 8 + 1 + 8 + 4;

impl FingerprintSet {
    /// Bytes [`FingerprintSet::stream_snapshot`] writes, from the sizes alone.
    pub(super) fn snapshot_bytes(&self) -> u64 {
        let generation = |g: &Generation| {
            let (buffered, runs) = (g.buffered(), g.runs());
            let words: usize = runs
                .iter()
                .map(|r| r.words().0.len() + r.words().1.len())
                .sum();
            4 + 8 * buffered as u64 + 4 + 8 * runs.len() as u64 + 8 * words as u64
        };
        HEADER_LEN + self.gens.iter().map(generation).sum::<u64>()
    }

    /// Writes the snapshot (see the module layout above) from the runs'
    /// own words: nothing the size of the set is allocated.
    pub(super) fn stream_snapshot(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut w = Chunked::new(out);
        w.put(&[VERSION])?;
        w.put(&self.epsilon.to_le_bytes())?;
        w.u64(self.capacity as u64)?;
        w.put(&[u8::from(self.saturated)])?;
        w.u64(self.min_buffer as u64)?;
        w.put(&(self.gens.len() as u32).to_le_bytes())?;
        for g in &self.gens {
            write_generation(g, &mut w)?;
        }
        w.finish()
    }

    /// Rebuilds a set from [`crate::SeenSet::snapshot`] bytes; it answers
    /// exactly as the set did. Malformed bytes give [`SeenError::BadSnapshot`].
    pub fn restore(bytes: &[u8]) -> Result<Self, SeenError> {
        let mut r = Reader(bytes);
        let version = r.u8()?;
        if version != VERSION && version != 1 {
            return Err(bad(&format!(
                "format version {version}, expected 1 or {VERSION}"
            )));
        }
        let epsilon = f64::from_le_bytes(r.u64()?.to_le_bytes());
        let capacity = usize::try_from(r.u64()?).map_err(|_| bad("capacity"))?;
        let saturated = match r.u8()? {
            0 => false,
            1 => true,
            _ => return Err(bad("saturated flag")),
        };
        let min_buffer = if version == 1 { 0 } else { r.u64()? };
        let min_buffer = usize::try_from(min_buffer).map_err(|_| bad("min_buffer"))?;
        let gens = r.u32()?;
        let mut set = Self::new(capacity, epsilon)
            .map_err(|e| bad(&e.to_string()))?
            .with_min_buffer(min_buffer);
        for i in 0..gens {
            if i > 0 {
                let next = set
                    .next_generation()
                    .ok_or_else(|| bad("too many generations"))?;
                if !set.gens.last().is_some_and(Generation::is_full) {
                    return Err(bad("a generation after one that is not full"));
                }
                set.gens.push(next);
            }
            let g = set.gens.last_mut().expect("a set always has a generation");
            read_generation(g, &mut r)?;
        }
        if gens == 0 || (saturated && set.next_generation().is_some()) {
            return Err(bad("generation count"));
        }
        if !r.0.is_empty() {
            return Err(bad("trailing bytes"));
        }
        set.saturated = saturated;
        set.len = set.gens.iter().map(Generation::len).sum();
        Ok(set)
    }
}

fn write_generation(g: &Generation, w: &mut Chunked<'_>) -> std::io::Result<()> {
    // Sorted copy of the buffer: at most MAX_BUFFER (16,384) fingerprints.
    let (buffer, runs) = g.parts();
    w.put(&(buffer.len() as u32).to_le_bytes())?;
    w.words(&buffer)?;
    w.put(&(runs.len() as u32).to_le_bytes())?;
    for run in runs {
        w.u64(run.len() as u64)?;
        let (low, high) = run.words();
        w.words(low)?;
        w.words(high)?;
    }
    Ok(())
}

fn read_generation(g: &mut Generation, r: &mut Reader<'_>) -> Result<(), SeenError> {
    let buffered = r.u32()? as usize;
    let buffer = r.words(buffered)?;
    let count = r.u32()?;
    let mut runs = Vec::new();
    for _ in 0..count {
        let len = usize::try_from(r.u64()?).map_err(|_| bad("run length"))?;
        if len > super::ef::MAX_LEN {
            return Err(bad("run length"));
        }
        let shape = Shape::of(len, g.universe());
        let low = r.words(shape.low_words)?;
        let high = r.words(shape.high_words)?;
        let run = EliasFano::from_words(len, g.universe(), low, high)
            .ok_or_else(|| bad("run is not a valid Elias–Fano sequence"))?;
        runs.push(run);
    }
    g.refill(&buffer, runs)
        .ok_or_else(|| bad("buffer is not sorted, too big or out of range"))
}

fn bad(reason: &str) -> SeenError {
    SeenError::BadSnapshot {
        backend: "fingerprint".into(),
        reason: reason.into(),
    }
}

/// Little-endian reads that fail on truncation instead of panicking.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], SeenError> {
        let (head, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or_else(|| bad("truncated"))?;
        self.0 = rest;
        Ok(*head)
    }

    fn u8(&mut self) -> Result<u8, SeenError> {
        Ok(self.take::<1>()?[0])
    }

    fn u32(&mut self) -> Result<u32, SeenError> {
        self.take().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, SeenError> {
        self.take().map(u64::from_le_bytes)
    }

    /// `n` words; checks the bytes are there before allocating.
    fn words(&mut self, n: usize) -> Result<Vec<u64>, SeenError> {
        let bytes = n.checked_mul(8).filter(|&b| b <= self.0.len());
        let (head, rest) = self.0.split_at(bytes.ok_or_else(|| bad("truncated"))?);
        self.0 = rest;
        Ok(head
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SeenSet;
    use crate::fingerprint::DEFAULT_EPSILON;
    use proptest::prelude::*;

    fn filled(capacity: usize, n: u64, eps: f64) -> FingerprintSet {
        let mut set = FingerprintSet::new(capacity, eps).unwrap();
        for i in 0..n {
            set.insert(format!("org.example/{i}").as_bytes());
        }
        set
    }

    fn same_answers(a: &FingerprintSet, b: &FingerprintSet, n: u64) {
        assert_eq!(a.len(), b.len());
        assert_eq!(a.guarantee(), b.guarantee());
        for i in 0..n * 2 {
            let k = format!("org.example/{i}");
            assert_eq!(a.contains(k.as_bytes()), b.contains(k.as_bytes()), "{k}");
        }
    }

    #[test]
    fn round_trips_across_generations_and_keeps_growing_alike() {
        // ε = 2^-12 over capacity 300 and 5000 keys: several generations,
        // runs and a part-filled buffer, and false positives to compare.
        let eps = 1.0 / 4096.0;
        let mut a = filled(300, 5000, eps);
        assert!(a.gens.len() >= 3);
        let mut b = FingerprintSet::restore(&a.snapshot().unwrap()).unwrap();
        same_answers(&a, &b, 5000);
        for i in 5000..9000u64 {
            let k = format!("org.example/{i}");
            assert_eq!(a.insert(k.as_bytes()), b.insert(k.as_bytes()));
        }
        same_answers(&a, &b, 9000);
        assert_eq!(a.snapshot(), b.snapshot());
    }

    #[test]
    fn a_bigger_buffer_round_trips_and_version_1_still_reads() {
        let mut a = FingerprintSet::new(100_000, DEFAULT_EPSILON)
            .unwrap()
            .with_min_buffer(1000);
        for i in 0..1500u64 {
            a.insert(format!("org.example/{i}").as_bytes());
        }
        let bytes = a.snapshot().unwrap();
        same_answers(&a, &FingerprintSet::restore(&bytes).unwrap(), 1500);
        // Version 1 is version 2 without the min_buffer field.
        let small = filled(1000, 700, DEFAULT_EPSILON).snapshot().unwrap();
        let mut v1 = vec![1];
        v1.extend_from_slice(&small[1..18]);
        v1.extend_from_slice(&small[26..]);
        let b = FingerprintSet::restore(&v1).unwrap();
        same_answers(&filled(1000, 700, DEFAULT_EPSILON), &b, 700);
    }

    #[test]
    fn empty_and_default_sets_round_trip() {
        let a = FingerprintSet::new(1, DEFAULT_EPSILON).unwrap();
        let b = FingerprintSet::restore(&a.snapshot().unwrap()).unwrap();
        same_answers(&a, &b, 10);
        let a = filled(100_000, 20_000, DEFAULT_EPSILON);
        let b = FingerprintSet::restore(&a.snapshot().unwrap()).unwrap();
        same_answers(&a, &b, 20_000);
    }

    #[test]
    fn every_truncation_and_a_wrong_version_are_refused() {
        let bytes = filled(50, 400, 1.0 / 1024.0).snapshot().unwrap();
        for cut in 0..bytes.len() {
            assert!(FingerprintSet::restore(&bytes[..cut]).is_err(), "cut {cut}");
        }
        let mut wrong = bytes.clone();
        wrong[0] = 3;
        assert!(matches!(
            FingerprintSet::restore(&wrong),
            Err(SeenError::BadSnapshot { .. })
        ));
        let mut longer = bytes;
        longer.push(0);
        assert!(FingerprintSet::restore(&longer).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = FingerprintSet::restore(&bytes);
        }

        #[test]
        fn corrupted_snapshots_never_panic_and_stay_usable(
            edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        ) {
            let mut bytes = filled(40, 300, 1.0 / 1024.0).snapshot().unwrap();
            for (at, x) in edits {
                let i = at % bytes.len();
                bytes[i] ^= x.max(1);
            }
            if let Ok(mut set) = FingerprintSet::restore(&bytes) {
                // Whatever was accepted must work: look up, insert, merge.
                for i in 0..400u64 {
                    let k = format!("net.other/{i}");
                    set.contains(k.as_bytes());
                    set.insert(k.as_bytes());
                }
            }
        }
    }
}
