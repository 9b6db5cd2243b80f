//! The Internet Archive's rules on top of the Google form: lowercase host,
//! path and query; strip `www`/`wwwN`; drop default ports, a trailing `/`
//! and session ids; sort the query.
//!
//! Session ids are found the way the IA's patterns find them: the *last*
//! occurrence of `name=value` (value of a fixed shape) that ends the query
//! or is followed by `&`; the parameter and that `&` are removed.

use super::Parts;

pub(super) fn ia_canonicalize(p: &mut Parts, host_massage: bool) {
    if let Some(host) = p.host.as_mut() {
        host.make_ascii_lowercase();
        if host_massage && p.scheme != b"dns" {
            let skip = www_prefix_len(host);
            host.drain(..skip);
        }
    }
    let default_port = match p.scheme.to_ascii_lowercase().as_slice() {
        b"http" => Some(80),
        b"https" => Some(443),
        _ => None,
    };
    if p.port.is_some() && p.port == default_port {
        p.port = None;
    }
    if let Some(path) = p.path.as_mut().filter(|path| !path.is_empty()) {
        path.make_ascii_lowercase();
        strip_path_session(path);
        if path.len() > 1 && path.ends_with(b"/") {
            path.pop();
        }
    }
    if let Some(query) = p.query.take() {
        let mut query = strip_query_sessions(query);
        query.make_ascii_lowercase();
        let query = sort_query(&query);
        p.query = Some(query).filter(|q| !q.is_empty());
    }
}

/// Length of a leading `www\d*\.`, or 0.
fn www_prefix_len(host: &[u8]) -> usize {
    if !host.starts_with(b"www") {
        return 0;
    }
    let digits = host[3..].iter().take_while(|b| b.is_ascii_digit()).count();
    if host.get(3 + digits) == Some(&b'.') {
        4 + digits
    } else {
        0
    }
}

/// Sorts `&`-pieces by (name, value), a piece without `=` first.
fn sort_query(query: &[u8]) -> Vec<u8> {
    if query.len() <= 1 {
        return query.to_vec();
    }
    let mut pieces: Vec<(&[u8], Option<&[u8]>)> = query
        .split(|&b| b == b'&')
        .map(|piece| match piece.iter().position(|&b| b == b'=') {
            Some(eq) => (&piece[..eq], Some(&piece[eq + 1..])),
            None => (piece, None),
        })
        .collect();
    pieces.sort();
    let mut out = Vec::with_capacity(query.len());
    for (i, (name, value)) in pieces.into_iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(name);
        if let Some(value) = value {
            out.push(b'=');
            out.extend_from_slice(value);
        }
    }
    out
}

/// A value shape: which bytes, and how many (`None` = one or more, up to `&`).
type Shape = (fn(&u8) -> bool, Option<usize>);

fn alnum(b: &u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn alpha(b: &u8) -> bool {
    b.is_ascii_alphabetic()
}
fn not_amp(b: &u8) -> bool {
    *b != b'&'
}

/// The session-id patterns, applied in order, each to the previous result.
const QUERY_PATTERNS: [&[(&[u8], Shape)]; 5] = [
    &[(b"jsessionid=", (alnum, Some(32)))],
    &[(b"phpsessid=", (alnum, Some(32)))],
    &[(b"sid=", (alnum, Some(32)))],
    &[
        (b"aspsessionid", (alpha, Some(8))),
        (b"=", (alpha, Some(24))),
    ],
    &[(b"cfid=", (not_amp, None)), (b"&cftoken=", (not_amp, None))],
];

fn strip_query_sessions(mut query: Vec<u8>) -> Vec<u8> {
    for pattern in QUERY_PATTERNS {
        let found = (0..=query.len())
            .rev()
            .find_map(|start| match_at(&query, start, pattern).map(|end| (start, end)));
        if let Some((start, end)) = found {
            // Keep what follows the `&` after the match (the Python keeps
            // nothing when that is empty).
            let tail = query.get(end + 1..).unwrap_or(b"").to_vec();
            query.truncate(start);
            query.extend_from_slice(&tail);
        }
    }
    query
}

/// End of `pattern` matched at `start` (case-insensitive literals), if it
/// is followed by the end of the query or by `&`.
fn match_at(s: &[u8], start: usize, pattern: &[(&[u8], Shape)]) -> Option<usize> {
    let mut pos = start;
    for (literal, (class, count)) in pattern {
        let lit = s.get(pos..pos + literal.len())?;
        if !lit.eq_ignore_ascii_case(literal) {
            return None;
        }
        pos += literal.len();
        let run = s[pos..].iter().take_while(|b| class(b)).count();
        let take = match count {
            Some(n) if run >= *n => *n,
            None if run >= 1 => run,
            _ => return None,
        };
        pos += take;
    }
    (pos == s.len() || s[pos] == b'&').then_some(pos)
}

/// `/(a(24 alnum))/x.aspx` or `/(24 alnum)/x.aspx` session segments (on
/// the lowercased path): the last such segment is removed.
fn strip_path_session(path: &mut Vec<u8>) {
    for with_letters in [true, false] {
        let found = (1..path.len())
            .rev()
            .filter(|&i| path[i - 1] == b'/' && path[i] == b'(')
            .find_map(|i| {
                let end = path_session_end(path, i, with_letters)?;
                aspx_follows(&path[end..]).then_some((i, end))
            });
        if let Some((start, end)) = found {
            path.drain(start..end);
        }
    }
}

/// End (after the `/`) of a session segment starting at `path[i] == '('`.
fn path_session_end(path: &[u8], i: usize, with_letters: bool) -> Option<usize> {
    let id = |at: usize| {
        let s = path.get(at..at + 26)?;
        (s[0] == b'(' && s[25] == b')' && s[1..25].iter().all(u8::is_ascii_alphanumeric))
            .then_some(at + 26)
    };
    let mut pos = i + 1;
    if with_letters {
        let mut units = 0;
        while path.get(pos).is_some_and(u8::is_ascii_alphabetic) {
            pos = id(pos + 1)?;
            units += 1;
        }
        if units == 0 || path.get(pos) != Some(&b')') {
            return None;
        }
        pos += 1;
    } else {
        pos = id(i)?;
    }
    (path.get(pos) == Some(&b'/')).then_some(pos + 1)
}

/// `[^?]+\.aspx.*`: something before `.aspx`, and no `?` before it.
fn aspx_follows(rest: &[u8]) -> bool {
    let limit = rest.iter().position(|&b| b == b'?').unwrap_or(rest.len());
    rest[..limit].windows(5).skip(1).any(|w| w == b".aspx")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_the_last_matching_session_id() {
        let id = "0123456789abcdefghijklemopqrstuv";
        let q = format!("PHPSESSID={id}&action=profile;u=4221");
        assert_eq!(
            strip_query_sessions(q.into_bytes()),
            b"action=profile;u=4221"
        );
        let q = format!("a=1&jsessionid={id}");
        assert_eq!(strip_query_sessions(q.into_bytes()), b"a=1&");
        let q = format!("a=1&sid={id}x");
        assert_eq!(strip_query_sessions(q.clone().into_bytes()), q.as_bytes());
        assert_eq!(strip_query_sessions(b"cfid=1&cftoken=2&z".to_vec()), b"z");
    }

    #[test]
    fn sorts_like_tuples() {
        assert_eq!(sort_query(b"b&a=2&a&a=1"), b"a&a=1&a=2&b");
    }

    #[test]
    fn strips_aspx_path_sessions() {
        let mut p = b"/x/(s(0123456789abcdefghijklmn))/default.aspx".to_vec();
        strip_path_session(&mut p);
        assert_eq!(p, b"/x/default.aspx");
        let mut p = b"/(0123456789abcdefghijklmn)/a.aspx?x".to_vec();
        strip_path_session(&mut p);
        assert_eq!(p, b"/a.aspx?x");
    }

    #[test]
    fn www_prefixes() {
        assert_eq!(www_prefix_len(b"www.a.com"), 4);
        assert_eq!(www_prefix_len(b"www12.a.com"), 6);
        assert_eq!(www_prefix_len(b"wwwx.a.com"), 0);
    }
}
