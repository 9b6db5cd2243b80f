//! Percent-encoding normalisation for paths and queries (RFC 3986 §6.2.2).
//!
//! One pass over the bytes, no allocation when nothing changes:
//! - `%xx` naming an unreserved byte (`A-Z a-z 0-9 - . _ ~`) is decoded,
//!   since `%7E` and `~` are the same URL by RFC 3986;
//! - every other valid escape keeps its byte but gets uppercase hex
//!   (`%2f` → `%2F`), so reserved bytes such as `%2F`, `%3F`, `%23`, `%26`
//!   stay escaped and keep their meaning;
//! - a `%` not followed by two hex digits becomes `%25` (otherwise `%%41B`
//!   would decode to `%AB`, a new escape, and the form would not be stable).
//!
//! The output is a fixed point: every `%` in it starts an uppercase escape
//! of a byte that is not unreserved.

/// True for RFC 3986 unreserved bytes.
pub(crate) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The escape at `s[i..]`, if `s[i]` is `%` followed by two hex digits.
fn escape_at(s: &[u8], i: usize) -> Option<u8> {
    if s.get(i) != Some(&b'%') {
        return None;
    }
    let hi = hex_val(*s.get(i + 1)?)?;
    let lo = hex_val(*s.get(i + 2)?)?;
    Some(hi << 4 | lo)
}

/// True when `s` is already in normal form (the common, allocation-free case).
fn is_normal(s: &[u8]) -> bool {
    let mut i = 0;
    while let Some(off) = s[i..].iter().position(|&b| b == b'%') {
        i += off;
        let Some(v) = escape_at(s, i) else {
            return false;
        };
        let lower_hex = s[i + 1].is_ascii_lowercase() || s[i + 2].is_ascii_lowercase();
        if is_unreserved(v) || lower_hex {
            return false;
        }
        i += 1;
    }
    true
}

/// Normalises the escapes of `s`; `None` when `s` is already normal.
pub(crate) fn normalize(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    if is_normal(bytes) {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        match escape_at(bytes, i) {
            Some(v) if is_unreserved(v) => out.push(char::from(v)),
            Some(v) => {
                out.push('%');
                out.push(char::from(b"0123456789ABCDEF"[usize::from(v >> 4)]));
                out.push(char::from(b"0123456789ABCDEF"[usize::from(v & 15)]));
            }
            None if bytes[i] == b'%' => {
                out.push_str("%25");
                i += 1;
                continue;
            }
            None => {
                // Copy one whole char (the input is valid UTF-8).
                let len = utf8_len(bytes[i]);
                out.push_str(&s[i..i + len]);
                i += len;
                continue;
            }
        }
        i += 3;
    }
    Some(out)
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// Lowercases ASCII letters outside `%xx` escapes (escapes keep uppercase hex).
pub(crate) fn lowercase_outside_escapes(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        if escape_at(bytes, i).is_some() {
            out.push_str(&s[i..i + 3]);
            i += 3;
        } else {
            let len = utf8_len(bytes[i]);
            out.push_str(&s[i..i + len].to_ascii_lowercase());
            i += len;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_unreserved_and_uppercases_the_rest() {
        assert_eq!(
            normalize("/%7euser/%41b%2fc").as_deref(),
            Some("/~user/Ab%2Fc")
        );
        assert_eq!(normalize("/a%3f%23%25").as_deref(), Some("/a%3F%23%25"));
    }

    #[test]
    fn leaves_normal_and_broken_escapes() {
        assert_eq!(normalize("/a%2F"), None);
        assert_eq!(normalize("/%zz%4").as_deref(), Some("/%25zz%254"));
        assert_eq!(normalize("/%%41B").as_deref(), Some("/%25AB"));
        assert_eq!(normalize("/é%C3%A9"), None);
        assert_eq!(normalize("/é%c3%a9").as_deref(), Some("/é%C3%A9"));
    }

    #[test]
    fn is_a_fixed_point() {
        for s in ["/%25%37%45", "/%%41", "/%2e%2E", "/x%7E%7e"] {
            let once = normalize(s).unwrap_or_else(|| s.to_string());
            assert_eq!(normalize(&once), None, "{s} -> {once}");
        }
    }

    #[test]
    fn lowercases_outside_escapes_only() {
        assert_eq!(lowercase_outside_escapes("/A%2FB/Ä"), "/a%2Fb/Ä");
    }
}
