//! Byte sizes on the command line: `10M`, `512K`, `1G`, `2048`, `1.5M`.
//!
//! Suffixes are binary (K = 1024, M = 1024², G = 1024³), in either case,
//! optionally followed by `B` or `iB` (`10MiB`, `512kb`). A bare number is
//! bytes. Anything else, an empty string, a negative or non-finite number,
//! or a size past `u64::MAX` is refused with a message that names the input.

/// Parses a size as described in the module docs (a clap `value_parser`).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let unit_at = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(unit_at);
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("{s:?}: expected a size such as 10M, 512K or 2048")),
    };
    if num.is_empty() {
        return Err(format!("{s:?}: expected a number before the unit"));
    }
    if let Ok(n) = num.parse::<u64>() {
        return n
            .checked_mul(mult)
            .ok_or_else(|| format!("{s:?}: larger than {} bytes", u64::MAX));
    }
    match num.parse::<f64>() {
        // 2^64 as f64; `as u64` below saturates, so refuse what would.
        Ok(x) if x.is_finite() && x * (mult as f64) < 18_446_744_073_709_551_616.0 => {
            Ok((x * mult as f64).round() as u64)
        }
        Ok(_) => Err(format!("{s:?}: larger than {} bytes", u64::MAX)),
        Err(_) => Err(format!("{s:?}: {num:?} is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_with_and_without_units() {
        for (s, want) in [
            ("2048", 2048),
            ("0", 0),
            ("10M", 10 << 20),
            ("10m", 10 << 20),
            ("10MiB", 10 << 20),
            ("10 MB", 10 << 20),
            ("512K", 512 << 10),
            ("512kb", 512 << 10),
            ("1G", 1 << 30),
            ("1.5M", 3 << 19),
            ("7b", 7),
            (" 3K ", 3 << 10),
            ("16777216G", 1 << 54),
        ] {
            assert_eq!(parse_size(s), Ok(want), "{s}");
        }
    }

    #[test]
    fn malformed_sizes_are_refused_with_the_input_named() {
        for s in [
            "",
            "M",
            "-1",
            "-1M",
            "10X",
            "ten",
            "1..5M",
            "1e3",
            "10MM",
            "18446744073709551616",
            "17179869184G",
            "99999999999999999999999K",
            "nan",
            "inf",
        ] {
            let err = parse_size(s).expect_err(s);
            assert!(err.contains(&format!("{s:?}")), "{s}: {err}");
        }
    }
}
