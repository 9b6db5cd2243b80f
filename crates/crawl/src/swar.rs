//! Eight bytes of text classified at once in a `u64` (SWAR), for the text
//! scans of [`crate::extract`] and [`crate::terms`]. Each function marks a
//! byte by setting its high bit (`0x80`) in the result and leaves the other
//! bits clear. No state: the constants and two byte tests.

/// One in every byte.
pub(crate) const ONES: u64 = u64::MAX / 255;
/// `0x80` in every byte.
pub(crate) const HIGH: u64 = ONES * 0x80;
/// `0x7f` in every byte.
pub(crate) const LOW7: u64 = ONES * 0x7f;

/// The high bit of each byte of `low7` (bytes below `0x80`, such as
/// `x & LOW7`) that lies in `lo..=hi`. Exact for every byte: adding
/// `0x80 - lo` (`0x7f - hi`) to a byte below `0x80` sets its high bit iff
/// it is at least `lo` (above `hi`) and never carries into the next byte.
pub(crate) const fn in_range(low7: u64, lo: u8, hi: u8) -> u64 {
    let at_least_lo = low7 + ONES * (0x80 - lo as u64);
    let above_hi = low7 + ONES * (0x7f - hi as u64);
    at_least_lo & !above_hi & HIGH
}

/// The high bit of each byte of `x` equal to `b`. Exact for every byte:
/// `y = x ^ b` is zero just there, and `(y & 0x7f) + 0x7f`, or `y`, has
/// the high bit iff `y` is not zero, without carrying into the next byte.
pub(crate) const fn equal(x: u64, b: u8) -> u64 {
    let y = x ^ (ONES * b as u64);
    !(((y & LOW7) + LOW7) | y) & HIGH
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value in every position, against the plain tests.
    #[test]
    fn each_byte_is_classified_alone() {
        for v in 0..=255u8 {
            for pos in 0..8 {
                // Neighbours that could carry or borrow into `v`'s byte.
                for fill in [0x00u8, 0x7f, 0x80, 0xff, 0x20] {
                    let mut bytes = [fill; 8];
                    bytes[pos] = v;
                    let x = u64::from_le_bytes(bytes);
                    let bit = 0x80u64 << (8 * pos);
                    let low7 = x & LOW7;
                    let ascii = !x & HIGH;
                    assert_eq!(
                        in_range(low7, b'0', b'9') & ascii & bit != 0,
                        v.is_ascii_digit(),
                        "{v:#x} at {pos}"
                    );
                    assert_eq!(
                        in_range(low7, b'\t', b'\r') & ascii & bit != 0,
                        (b'\t'..=b'\r').contains(&v),
                        "{v:#x} at {pos}"
                    );
                    assert_eq!(equal(x, b' ') & bit != 0, v == b' ', "{v:#x} at {pos}");
                }
            }
        }
    }
}
