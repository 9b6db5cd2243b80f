//! `select0` with the CPU's `popcnt` and `pdep`, when it has them.
//!
//! The release build targets baseline x86-64, where `count_ones` is a
//! software popcount and select is the byte-table walk of `select_in_word`
//! (~25 operations a word). This copy of the loop is compiled for `popcnt`
//! and BMI2 and chosen at run time after checking the CPU (the check is a
//! cached flag): popcount is one instruction and select in a word is
//! `tzcnt(pdep(1 << r, word))`. Same answers, fewer operations; measured in
//! `docs/BENCHMARKS.md` (fingerprint, session 4).

use super::EliasFano;

/// Whether this CPU has the instructions [`select0`] is compiled for.
#[cfg(target_arch = "x86_64")]
pub(super) fn available() -> bool {
    std::is_x86_feature_detected!("popcnt") && std::is_x86_feature_detected!("bmi2")
}

/// No other architecture has this variant.
#[cfg(not(target_arch = "x86_64"))]
pub(super) fn available() -> bool {
    false
}

/// `found[i] |= contains(values[i])` in one function (no call or CPU
/// check per value); callers check [`available`] first.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1,bmi2")]
pub(super) fn contains_each(ef: &EliasFano, values: &[u64], found: &mut [bool]) {
    for (f, &v) in found.iter_mut().zip(values) {
        *f = *f || contains(ef, v);
    }
}

/// [`EliasFano::contains`] in one function for CPUs with `popcnt` and
/// BMI2 (bucket, select and scan inlined together); callers check
/// [`available`] first.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1,bmi2")]
#[inline]
pub(super) fn contains(ef: &EliasFano, value: u64) -> bool {
    let Some(bucket) = ef.bucket(value) else {
        return false;
    };
    let start = if bucket == 0 {
        0
    } else {
        select0(ef, bucket - 1) + 1
    };
    ef.scan(start, bucket, value)
}

/// [`EliasFano::select0`] for CPUs with `popcnt` and BMI2; callers check
/// [`available`] first.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1,bmi2")]
#[inline]
pub(super) fn select0(ef: &EliasFano, k: u64) -> u64 {
    let (start, mut rest) = ef.zsamp.locate(k);
    let mut w = (start / 64) as usize;
    let mut inv = !ef.high[w] & (u64::MAX << (start % 64));
    loop {
        let c = u64::from(inv.count_ones());
        if rest < c {
            let bit = std::arch::x86_64::_pdep_u64(1 << rest, inv).trailing_zeros();
            return w as u64 * 64 + u64::from(bit);
        }
        rest -= c;
        w += 1;
        inv = !ef.high[w];
    }
}

/// A forward walk over `high` (the merge's `Ranker`): starting at `word`,
/// with `zeros_before` zeros in the words before it, finds zero number `k`
/// (which must exist). Returns the word it is in, the zeros before that
/// word, and its bit position. Callers check [`available`] first.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1,bmi2")]
pub(super) fn zero_from(high: &[u64], mut word: usize, mut zeros_before: u64, k: u64) -> [u64; 3] {
    loop {
        let inv = !high[word];
        let c = u64::from(inv.count_ones());
        if k < zeros_before + c {
            let r = k - zeros_before;
            let bit = std::arch::x86_64::_pdep_u64(1 << r, inv).trailing_zeros();
            return [word as u64, zeros_before, word as u64 * 64 + u64::from(bit)];
        }
        zeros_before += c;
        word += 1;
    }
}

/// Never called: [`available`] is false off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn contains_each(_: &EliasFano, _: &[u64], _: &mut [bool]) {
    unreachable!("contains_each without the CPU features")
}

/// Never called: [`available`] is false off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn contains(_: &EliasFano, _: u64) -> bool {
    unreachable!("contains without the CPU features")
}

/// Never called: [`available`] is false off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn select0(ef: &EliasFano, k: u64) -> u64 {
    ef.select0_soft(k)
}

/// Never called: [`available`] is false off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn zero_from(_: &[u64], _: usize, _: u64, _: u64) -> [u64; 3] {
    unreachable!("zero_from without the CPU features")
}

#[cfg(test)]
mod tests {
    use super::super::EfBuilder;
    use super::*;

    #[test]
    fn hardware_select_agrees_with_the_table_walk() {
        if !available() {
            return; // nothing to compare on this CPU
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut values: Vec<u64> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x >> 24
            })
            .collect();
        values.sort_unstable();
        values.dedup();
        let mut b = EfBuilder::new(values.len(), 1 << 40);
        values.iter().for_each(|&v| b.push(v));
        let ef = b.finish();
        let zeros = ef.high_len - ef.len as u64;
        let (mut word, mut before) = (0usize, 0u64);
        for k in 0..zeros {
            let want = ef.select0_soft(k);
            // SAFETY: `available()` is true: the CPU has popcnt and BMI2.
            let (got, walk) = unsafe { (select0(&ef, k), zero_from(&ef.high, word, before, k)) };
            assert_eq!(got, want, "zero {k}");
            assert_eq!(walk[2], want, "walk to zero {k}");
            (word, before) = (walk[0] as usize, walk[1]);
        }
        for v in values
            .iter()
            .flat_map(|&v| [v, v + 1])
            .chain([0, 1 << 40, u64::MAX])
        {
            let soft = ef.bucket(v).is_some_and(|b| {
                let start = if b == 0 {
                    0
                } else {
                    ef.select0_soft(b - 1) + 1
                };
                ef.scan(start, b, v)
            });
            // SAFETY: as above.
            assert_eq!(unsafe { contains(&ef, v) }, soft, "value {v}");
        }
    }
}
