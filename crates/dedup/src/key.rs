//! What a line is deduplicated on: its bytes, or its canonical URL.
//!
//! Plain mode: the key is the line without its `\n` terminator, byte for
//! byte (a `\r` before the `\n` is content, as in huniq: `a\r\n` and `a\n`
//! are two lines). No hashing, so exact backends stay exact for lines of any
//! length.
//!
//! Canonical mode: a line that parses as a crawlable URL is keyed by
//! `CanonicalUrl::key_bytes()` (surrounding whitespace, `\r` included, is
//! ignored by the parser). Every key then starts with a tag byte, so that a
//! plain line can never collide with a URL key that happens to share its
//! bytes:
//!
//! ```text
//!   URL line        [0x00][ key_bytes ...        ]
//!   unparsable line [0x01][ line without "\n" ... ]
//! ```

use mgz_url::{CanonicalUrl, Policy, UrlError};

const URL_TAG: u8 = 0x00;
const PLAIN_TAG: u8 = 0x01;

/// How lines are turned into seen-set keys.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum KeyMode {
    /// The line's bytes, without the `\n`.
    #[default]
    Plain,
    /// The canonical URL under this policy; unparsable lines are keyed as
    /// plain lines (or rejected in strict mode).
    Canonical(Policy),
}

/// The line without its `\n` terminator (the last line may have none).
pub fn content(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

/// Outcome of keying one line in canonical mode.
#[derive(Debug)]
pub(crate) enum Keyed {
    /// Key bytes were appended to the arena.
    Url,
    /// The line does not parse as a URL; a plain key was appended.
    Plain(UrlError),
}

/// Appends the canonical-mode key of `line` to `arena`.
pub(crate) fn canonical_key(line: &[u8], policy: &Policy, arena: &mut Vec<u8>) -> Keyed {
    let text = content(line);
    let parsed = std::str::from_utf8(text)
        .map_err(|e| UrlError::Invalid {
            reason: format!("not UTF-8: {e}"),
        })
        .and_then(|s| CanonicalUrl::parse(s, None, policy));
    match parsed {
        Ok(url) => {
            arena.push(URL_TAG);
            arena.extend_from_slice(&url.key_bytes());
            Keyed::Url
        }
        Err(err) => {
            arena.push(PLAIN_TAG);
            arena.extend_from_slice(text);
            Keyed::Plain(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(line: &[u8]) -> (Vec<u8>, bool) {
        let mut arena = Vec::new();
        let url = matches!(canonical_key(line, &Policy::safe(), &mut arena), Keyed::Url);
        (arena, url)
    }

    #[test]
    fn content_strips_only_the_newline() {
        assert_eq!(content(b"a\r\n"), b"a\r");
        assert_eq!(content(b"a"), b"a");
        assert_eq!(content(b"\n"), b"");
    }

    #[test]
    fn url_variants_share_a_key() {
        let (a, url_a) = key(b"HTTP://Example.COM/a#frag\n");
        let (b, url_b) = key(b"http://example.com/a\r\n");
        assert!(url_a && url_b);
        assert_eq!(a, b);
    }

    #[test]
    fn unparsable_lines_get_a_tagged_plain_key() {
        let (k, url) = key(b"not a url\n");
        assert!(!url);
        assert_eq!(k, b"\x01not a url");
        let (k, url) = key(b"\xff\xfe\n");
        assert!(!url);
        assert_eq!(k, b"\x01\xff\xfe");
    }

    #[test]
    fn a_plain_line_never_equals_a_url_key() {
        let (url_key, _) = key(b"http://example.com/p\n");
        let plain = &url_key[1..];
        let (plain_key, is_url) = key(&[plain, b"\n"].concat());
        assert!(!is_url);
        assert_ne!(url_key, plain_key);
    }
}
