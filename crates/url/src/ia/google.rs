//! The Google Safe Browsing canonicaliser, as the IA pipeline runs it:
//! decode `%` escapes repeatedly, IDNA the host, squeeze dots, read numeric
//! hosts as IPv4 (`3279880203` → `195.127.0.11`, `010.1` → `8.0.0.1`),
//! resolve dot segments and drop empty segments, then escape once.

use super::Parts;

pub(super) fn canonicalize(p: &mut Parts) {
    if let Some(q) = p.query.as_mut() {
        *q = escape_once(&unescape_repeatedly(q));
    }
    if let Some(host) = p.host.take() {
        p.host = Some(canonical_host(&host));
    }
    let has_host = p.host.as_deref().is_some_and(|h| !h.is_empty());
    let path = p.path.as_deref().map(unescape_repeatedly);
    let path = if has_host {
        Some(normalize_path(path.as_deref().unwrap_or(b"")))
    } else {
        path
    };
    p.path = path.map(|path| escape_once(&path));
}

fn canonical_host(raw: &[u8]) -> Vec<u8> {
    let mut host = unescape_repeatedly(raw);
    if !host.is_ascii() {
        // Invalid UTF-8 sequences are dropped, as Python's 'ignore' does.
        let text: String = host.utf8_chunks().map(|c| c.valid()).collect();
        if let Some(ascii) = idna_2003ish(&text) {
            host = ascii.into_bytes();
        }
    }
    let host = squeeze_dots(&host);
    match ipv4_forms(&host) {
        Some(ip) => ip.into_bytes(),
        None => escape_once(&host.to_ascii_lowercase()),
    }
}

/// IDNA ToASCII; `None` (keep the raw host) when a label is empty or the
/// name is not valid, as Python's `idna` codec raises on those.
fn idna_2003ish(text: &str) -> Option<String> {
    let body = text.strip_suffix('.').unwrap_or(text);
    if body.split('.').any(str::is_empty) {
        return None;
    }
    idna::domain_to_ascii(text).ok()
}

/// One pass of `..` → `.`, then leading and trailing dots removed.
fn squeeze_dots(host: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(host.len());
    let mut i = 0;
    while i < host.len() {
        out.push(host[i]);
        i += if host[i..].starts_with(b"..") { 2 } else { 1 };
    }
    let start = out.iter().position(|&b| b != b'.').unwrap_or(out.len());
    let end = out
        .iter()
        .rposition(|&b| b != b'.')
        .map_or(start, |e| e + 1);
    out[start..end].to_vec()
}

/// A host of digits (mod 2^32), or 1-4 dotted decimal/octal parts read the
/// way `inet_aton` reads them; `None` for anything else.
fn ipv4_forms(host: &[u8]) -> Option<String> {
    if host.is_empty() || !host.iter().all(|&b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    if host.iter().all(u8::is_ascii_digit) {
        let mut value: u32 = 0;
        for &d in host {
            value = value.wrapping_mul(10).wrapping_add(u32::from(d - b'0'));
        }
        return Some(std::net::Ipv4Addr::from(value).to_string());
    }
    let parts: Vec<&[u8]> = host.split(|&b| b == b'.').collect();
    if parts.len() > 4 || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    // Only shapes the Python package tries: all-octal parts after a leading
    // `0`, or decimal parts after a leading non-zero digit.
    if host[0] == b'0' && parts[1..].iter().any(|p| p.iter().any(|&b| b > b'7')) {
        return None;
    }
    let nums = parts
        .iter()
        .map(|p| inet_part(p))
        .collect::<Option<Vec<u64>>>()?;
    let (last, init) = nums.split_last()?;
    let shift_room = 8 * (4 - init.len() as u32);
    if init.iter().any(|&n| n > 255) || *last >= 1u64 << shift_room {
        return None;
    }
    let mut value = *last;
    for (i, &n) in init.iter().enumerate() {
        value |= n << (24 - 8 * i as u32);
    }
    Some(std::net::Ipv4Addr::from(value as u32).to_string())
}

/// One `inet_aton` part: leading `0` means octal.
fn inet_part(part: &[u8]) -> Option<u64> {
    let (digits, radix) = match part {
        [b'0', rest @ ..] if !rest.is_empty() => (rest, 8),
        _ => (part, 10),
    };
    let text = std::str::from_utf8(digits).ok()?;
    u64::from_str_radix(text, radix)
        .ok()
        .filter(|&n| n <= u64::from(u32::MAX))
}

/// Resolves `.` and `..`, drops empty segments except a trailing one.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for seg in path.split(|&b| b == b'/').skip(1) {
        match seg {
            b"." => {}
            b".." => {
                if kept.pop().is_none() {
                    kept.push(seg);
                }
            }
            _ => kept.push(seg),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, init)) = kept.split_last() {
        for seg in init.iter().filter(|s| !s.is_empty()) {
            out.extend_from_slice(seg);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    char::from(b).to_digit(16).map(|d| d as u8)
}

/// Decodes every valid `%xx` once.
fn unescape_once(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let decoded = (s[i] == b'%')
            .then(|| Some(hex(*s.get(i + 1)?)? << 4 | hex(*s.get(i + 2)?)?))
            .flatten();
        match decoded {
            Some(v) => {
                out.push(v);
                i += 3;
            }
            None => {
                out.push(s[i]);
                i += 1;
            }
        }
    }
    out
}

/// Decodes until nothing changes (`%2525` → `%`).
pub(super) fn unescape_repeatedly(s: &[u8]) -> Vec<u8> {
    let mut cur = s.to_vec();
    loop {
        let next = unescape_once(&cur);
        if next == cur {
            return cur;
        }
        cur = next;
    }
}

/// Escapes control bytes, space, `#`, `%`, DEL and non-ASCII; every other
/// printable ASCII byte stays.
pub(super) fn escape_once(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for &b in s {
        if b <= b' ' || b >= 0x7F || b == b'#' || b == b'%' {
            out.push(b'%');
            out.push(b"0123456789ABCDEF"[usize::from(b >> 4)]);
            out.push(b"0123456789ABCDEF"[usize::from(b & 15)]);
        } else {
            out.push(b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_forms_follow_inet_aton() {
        let f = |s: &str| ipv4_forms(s.as_bytes());
        assert_eq!(f("3279880203").as_deref(), Some("195.127.0.11"));
        assert_eq!(f("1.2.3").as_deref(), Some("1.2.0.3"));
        assert_eq!(f("1.300").as_deref(), Some("1.0.1.44"));
        assert_eq!(f("010.1.1.1").as_deref(), Some("8.1.1.1"));
        assert_eq!(f("09.1.1.1"), None);
        assert_eq!(f("01.9"), None);
        assert_eq!(f("1.2.3.4.5"), None);
        assert_eq!(f("256.1.1.1"), None);
        assert_eq!(f("a.com"), None);
    }

    #[test]
    fn paths_drop_empty_segments_and_dots() {
        assert_eq!(normalize_path(b"//a/./b/../c/"), b"/a/c/");
        assert_eq!(normalize_path(b"/../a"), b"/../a");
        assert_eq!(normalize_path(b""), b"/");
    }

    #[test]
    fn escapes_round_trip_shape() {
        assert_eq!(unescape_repeatedly(b"%2525%41%zz"), b"%A%zz");
        assert_eq!(escape_once(b"a #%\x01\xC3"), b"a%20%23%25%01%C3");
    }
}
