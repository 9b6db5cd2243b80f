//! Lookups in many Elias–Fano sequences at once, staged so that the cache
//! misses of all of them overlap.
//!
//! ```text
//! probes (sequence, value, answer slot), e.g. every run of 64 parts × 4 keys
//!   pass 1: bucket of each value; prefetch its select sample
//!   pass 2: read the sample;      prefetch the first `high` word select reads
//!   pass 3: select the bucket's start (popcounts on cached words); prefetch
//!           the value's `low` word
//!   pass 4: scan the bucket on cached words
//! ```
//!
//! [`EliasFano::contains_many`] stages the lookups of one sequence; a
//! `Parted` set hands each of its parts only a few keys of a batch (~4 of a
//! 256-URL frontier batch over 64 parts), so per part only a dozen misses
//! overlap. Here a pass covers every probe of the batch, hundreds of
//! independent lines, and prefetches (which retire at once) instead of
//! loads. Answers are those of [`EliasFano::contains`]: prefetching changes
//! no state.

use super::EliasFano;

/// One lookup: whether `value` is in `ef`; the answer is or-ed into slot `at`.
pub(crate) struct Probe<'a> {
    pub(crate) ef: &'a EliasFano,
    pub(crate) value: u64,
    pub(crate) at: usize,
}

/// Asks the CPU to bring `slice[i]`'s cache line in; nothing if out of range.
#[inline(always)]
pub(crate) fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = slice.get(i) {
        // SAFETY: a prefetch reads nothing architecturally and cannot fault;
        // the pointer is in bounds anyway. SSE is baseline on x86-64.
        #[allow(unused_unsafe)]
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (x as *const T).cast::<i8>(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

/// No bucket: the value is above the sequence's range, or its slot is
/// answered already.
const NONE: u64 = u64::MAX;

/// `found[p.at] |= p.ef.contains(p.value)` for every probe.
pub(crate) fn contains_probes(probes: &[Probe<'_>], found: &mut [bool]) {
    let buckets: Vec<u64> = probes
        .iter()
        .map(|p| {
            let b = if found[p.at] {
                None
            } else {
                p.ef.bucket(p.value)
            };
            b.map_or(NONE, |b| {
                p.ef.zsamp.prefetch(b.saturating_sub(1));
                b
            })
        })
        .collect();
    for (p, &b) in probes.iter().zip(&buckets) {
        if b != NONE {
            let first = if b == 0 { 0 } else { p.ef.sample_of(b) };
            prefetch(&p.ef.high, (first / 64) as usize);
        }
    }
    let starts: Vec<u64> = probes
        .iter()
        .zip(&buckets)
        .map(|(p, &b)| {
            if b == NONE {
                return 0;
            }
            let start = p.ef.bucket_start(b);
            let l = u64::from(p.ef.low_bits);
            prefetch(&p.ef.low, ((start - b) * l / 64) as usize);
            start
        })
        .collect();
    for ((p, &b), &start) in probes.iter().zip(&buckets).zip(&starts) {
        if b != NONE && !found[p.at] {
            found[p.at] = p.ef.scan(start, b, p.value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::build;
    use super::*;

    /// Probes over several sequences (dense, sparse, empty), values present,
    /// absent and out of range, several probes per slot: the same answers
    /// as one `contains` at a time.
    #[test]
    fn staged_probes_answer_like_contains() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let sizes = [
            (5000usize, 1u64 << 36),
            (300, 1 << 20),
            (0, 1 << 10),
            (40_000, 1 << 17),
        ];
        let stored: Vec<Vec<u64>> = sizes
            .iter()
            .map(|&(n, u)| {
                let mut v: Vec<u64> = (0..n).map(|_| next() % u).collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let seqs: Vec<(EliasFano, u64)> = (stored.iter().zip(&sizes))
            .map(|(v, &(_, u))| (build(v, u), u))
            .collect();
        let mut values = Vec::new();
        let mut probes_of = Vec::new();
        for slot in 0..2000usize {
            let (_, u) = &seqs[slot % seqs.len()];
            let v = match slot % 3 {
                0 => stored[slot % seqs.len()]
                    .get(slot * 7 % stored[slot % seqs.len()].len().max(1))
                    .copied()
                    .unwrap_or(7),
                1 => next() % u,
                _ => u + slot as u64,
            };
            values.push(v);
            // Each slot asks one sequence, and every third also a second one.
            probes_of.push(slot % seqs.len());
            if slot % 3 == 0 {
                probes_of.push((slot + 1) % seqs.len());
            }
        }
        let mut probes = Vec::new();
        let mut want = vec![false; values.len()];
        let mut k = 0;
        for (slot, &v) in values.iter().enumerate() {
            let n = if slot % 3 == 0 { 2 } else { 1 };
            for _ in 0..n {
                let ef = &seqs[probes_of[k]].0;
                want[slot] |= ef.contains(v);
                probes.push(Probe {
                    ef,
                    value: v,
                    at: slot,
                });
                k += 1;
            }
        }
        let mut found = vec![false; values.len()];
        contains_probes(&probes, &mut found);
        assert_eq!(found, want);
        assert!(
            want.iter().filter(|&&w| w).count() > 500,
            "the test asks present values"
        );
    }
}
