//! Plain URLs: text already in canonical form, recognised without parsing.
//!
//! Most URLs a frontier receives were canonicalised once already (by the
//! crawler that extracted them, or by this crate on the way in), and most
//! of them have a plain shape:
//!
//! ```text
//! http[s]://host/path[?query]
//!   host : labels [a-z0-9-]{1,63} joined by ".", <= 253 bytes; the last
//!          label starts with a letter (so it is not an IPv4 address); no
//!          label starts or ends with "-" or has "--" at bytes 3-4 (punycode)
//!   path : "/" then A-Z a-z 0-9 - . _ ~ ! $ & ( ) * + , ; = : @ /,
//!          no "." or ".." segment
//!   query: non-empty, the path's bytes plus "?"
//! ```
//!
//! For such text [`CanonicalUrl::parse`](crate::CanonicalUrl::parse) changes
//! nothing: no escape to normalise (no `%`), nothing the WHATWG parser
//! escapes or rewrites (no space, quote, `'`, `\`, `<`, `>`, `` ` ``, `{`,
//! `}`, `|`, `^`, `[`, `]`, non-ASCII), no port, credentials or fragment, no
//! dot segment, an IDNA no-op host. [`PlainUrl::check`] recognises it in
//! one pass over the bytes and answers host and key from the text itself,
//! with no allocation; anything else is `None` and goes through the full
//! parser. With a policy's optional rules on, text they could change is
//! `None` too (a `www` host, an uppercase path, a `;` in the path, any
//! query when the query is rewritten).
//!
//! Invariant (property- and data-tested in `tests/plain.rs`): when `check`
//! returns `Some`, `CanonicalUrl::parse(text, None, policy)` returns a URL
//! whose text, host and key bytes equal the `PlainUrl`'s.

use crate::{Policy, query};

/// Byte classes of the plain shape.
const HOST: u8 = 1;
const PATH: u8 = 2;
const QUERY: u8 = 4;
/// Path bytes that the policy's optional rules look at: an uppercase
/// letter, `;`.
const UPPER: u8 = 8;
const SEMI: u8 = 16;

/// Class bits of every byte (0 for bytes outside the plain shape).
static CLASS: [u8; 256] = classes();

const fn classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let host = c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'.';
        let path = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
                    | b'/'
            );
        let mut bits = 0;
        if host {
            bits |= HOST;
        }
        if path {
            bits |= PATH | QUERY;
        }
        if c == b'?' {
            bits |= QUERY;
        }
        if c.is_ascii_uppercase() {
            bits |= UPPER;
        }
        if c == b';' {
            bits |= SEMI;
        }
        t[b] = bits;
        b += 1;
    }
    t
}

/// A URL whose text is already canonical, borrowed from that text; see the
/// module docs for the shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlainUrl<'a> {
    text: &'a str,
    /// Byte range of the host in `text`.
    host: (usize, usize),
}

impl<'a> PlainUrl<'a> {
    /// `Some` when `text` has the plain shape and `policy` would not change
    /// it, so that it is its own canonical form.
    ///
    /// ```
    /// use mgz_url::{CanonicalUrl, PlainUrl, Policy};
    /// let p = PlainUrl::check("https://www.test.com/a?b", &Policy::safe()).unwrap();
    /// assert_eq!(p.host(), "www.test.com");
    /// assert_eq!(p.key_bytes(), b"com.test.www:s/a?b");
    /// assert!(PlainUrl::check("https://WWW.test.com/a", &Policy::safe()).is_none());
    /// ```
    pub fn check(text: &'a str, policy: &Policy) -> Option<PlainUrl<'a>> {
        if text.len() > policy.max_len {
            return None;
        }
        let b = text.as_bytes();
        let start = if b.starts_with(b"https://") {
            8
        } else if b.starts_with(b"http://") {
            7
        } else {
            return None;
        };
        let host_end = host_end(b, start)?;
        let host = &text[start..host_end];
        if policy.strip_www && host.starts_with("www") {
            return None;
        }
        let rest = &b[host_end..];
        let path_end = plain_path(rest, policy)?;
        if let Some(q) = rest.get(path_end + 1..)
            && (q.is_empty()
                || query::rewrites_query(policy)
                || !q.iter().all(|&c| CLASS[usize::from(c)] & QUERY != 0))
        {
            return None;
        }
        Some(PlainUrl {
            text,
            host: (start, host_end),
        })
    }

    /// The URL text (canonical).
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// The host.
    pub fn host(&self) -> &'a str {
        &self.text[self.host.0..self.host.1]
    }

    /// True for `https`.
    pub fn is_https(&self) -> bool {
        self.host.0 == 8
    }

    /// Path and query (`/a?b`).
    pub fn path_and_query(&self) -> &'a str {
        &self.text[self.host.1..]
    }

    /// The seen-set key, as [`CanonicalUrl::key_bytes`](crate::CanonicalUrl::key_bytes).
    pub fn key_bytes(&self) -> Vec<u8> {
        let mut key = Vec::with_capacity(self.text.len());
        self.write_key(&mut key);
        key
    }

    /// Appends the key bytes to `out`.
    pub fn write_key(&self, out: &mut Vec<u8>) {
        crate::key::write_key_parts(
            out,
            self.host(),
            self.is_https(),
            None,
            self.path_and_query(),
        );
    }
}

/// End of a plain host starting at `start`, which must be followed by `/`.
fn host_end(b: &[u8], start: usize) -> Option<usize> {
    let mut label = start;
    let mut i = start;
    loop {
        let c = *b.get(i)?;
        if c == b'.' || c == b'/' {
            if !plain_label(&b[label..i]) {
                return None;
            }
            if c == b'/' {
                let last_ok = b[label].is_ascii_lowercase();
                return (last_ok && i - start <= 253).then_some(i);
            }
            label = i + 1;
        } else if CLASS[usize::from(c)] & HOST == 0 {
            return None;
        }
        i += 1;
    }
}

/// A label of `[a-z0-9-]`, 1..=63 bytes, no edge hyphen, no `--` at 3-4.
fn plain_label(l: &[u8]) -> bool {
    !l.is_empty()
        && l.len() <= 63
        && l[0] != b'-'
        && l[l.len() - 1] != b'-'
        && l.get(2..4) != Some(b"--")
}

/// The length of the plain path (under `policy`, see the module docs) at
/// the start of `rest`, which ends there or at its first `?`; `None` if
/// that path is not plain.
///
/// One pass: the AND of the bytes' classes says whether all are path
/// bytes, their OR whether an uppercase letter or `;` occurs, and a `.`
/// right after a `/` whether a dot segment may (only then are the
/// segments compared).
fn plain_path(rest: &[u8], policy: &Policy) -> Option<usize> {
    if rest.first() != Some(&b'/') {
        return None;
    }
    let mut all = PATH;
    let mut any = 0;
    let mut slash_dot = false;
    let mut prev = 0u8;
    let mut end = rest.len();
    for (i, &c) in rest.iter().enumerate() {
        if c == b'?' {
            end = i;
            break;
        }
        let k = CLASS[usize::from(c)];
        all &= k;
        any |= k;
        slash_dot |= prev == b'/' && c == b'.';
        prev = c;
    }
    let path = &rest[..end];
    let plain = all & PATH != 0
        && !(policy.lowercase_path && any & UPPER != 0)
        && !(policy.strip_session_ids && any & SEMI != 0)
        && !(slash_dot && path.split(|&c| c == b'/').any(|s| s == b"." || s == b".."));
    plain.then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(s: &str) -> bool {
        PlainUrl::check(s, &Policy::safe()).is_some()
    }

    #[test]
    fn accepts_the_plain_shape() {
        for s in [
            "http://a.com/",
            "https://www.site12.com/news/blog/page-7.html",
            "https://x.y.example.org/a/b?id=3&x=y/z?",
            "http://localhost/x",
            "https://a-b.c0.com/~u/(1)*+,;=:@!$/",
            "http://a.com//double//slash",
            "http://a.com/.hidden/..x/x..",
            "https://docs.example.co.uk/A/B",
        ] {
            assert!(plain(s), "{s}");
        }
    }

    #[test]
    fn leaves_everything_else_to_the_parser() {
        for s in [
            "",
            "ftp://a.com/",
            "HTTP://a.com/",
            "http://A.com/",
            "http://a.com",
            "http://a.com:80/",
            "http://u@a.com/",
            "http://a.com./",
            "http://.a.com/",
            "http://a..com/",
            "http://1.2.3.4/",
            "http://a.0x7f/",
            "http://-a.com/",
            "http://a-.com/",
            "http://xn--bcher-kva.ch/",
            "http://ab--c.com/",
            "http://a.com/x#f",
            "http://a.com/x?",
            "http://a.com/%7E",
            "http://a.com/./x",
            "http://a.com/x/..",
            "http://a.com/a b",
            "http://a.com/a'b",
            "http://a.com/x?a'b",
            "http://a.com/\\x",
            "http://a.com/é",
            " http://a.com/",
            "http://a.com/\t",
            "http://a_b.com/",
        ] {
            assert!(!plain(s), "{s}");
        }
        let long_label = format!("http://{}.com/", "a".repeat(64));
        assert!(!plain(&long_label));
        let long_host = format!("http://{}com/", "a.".repeat(127));
        assert!(!plain(&long_host));
    }

    #[test]
    fn policy_rules_that_would_change_the_text_fall_back() {
        let aggressive = Policy::aggressive();
        for s in [
            "http://www.a.com/x",
            "http://a.com/X",
            "http://a.com/x;jsessionid=1",
            "http://a.com/x?b=1",
        ] {
            assert!(plain(s), "{s}");
            assert!(PlainUrl::check(s, &aggressive).is_none(), "{s}");
        }
        assert!(PlainUrl::check("http://a.com/x", &aggressive).is_some());
        let short = Policy::safe().with_max_len(10);
        assert!(PlainUrl::check("http://a.com/xyz", &short).is_none());
    }

    #[test]
    fn host_key_and_scheme() {
        let p = PlainUrl::check("http://b.a.com/x?y", &Policy::safe()).unwrap();
        assert_eq!((p.host(), p.is_https()), ("b.a.com", false));
        assert_eq!(p.path_and_query(), "/x?y");
        assert_eq!(p.key_bytes(), b"com.a.b/x?y");
    }
}
