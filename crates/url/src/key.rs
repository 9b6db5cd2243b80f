//! The seen-set key: canonical URL bytes in host-major order.
//!
//! ```text
//!  key  = rhost [ ":" tag ] path-and-query
//!  rhost: host labels in reverse order, joined by "."  (IPv6 "[..]" as is)
//!  tag  : absent → http, default port
//!         "s"    → https, default port
//!         "8080" → http, port 8080
//!         "s8443"→ https, port 8443
//!  path-and-query: starts with "/", exactly as in the canonical URL
//!
//!  http://www.test.com/a        → com.test.www/a
//!  https://www.test.com/a?b     → com.test.www:s/a?b
//!  http://www.test.com:8080/    → com.test.www:8080/
//!  https://[::1]:8443/x         → [::1]:s8443/x
//! ```
//!
//! Why this shape:
//! - Label-reversed hosts (SURT host order) put every key of one domain
//!   under one prefix (`com.test`), every key of one host under a longer
//!   one, and the TLD first, so sorted keys cluster by site: front coding,
//!   tries and FSTs store the shared prefix once, and a frontier can scan a
//!   host as a key range. Label order (not the seed XTrie's byte reversal
//!   `moc.tset.www`) keeps keys readable and equal in order to SURT.
//! - Scheme and non-default port are part of the resource's identity, so
//!   they are in the key, but after the host so they do not split a site's
//!   prefix. Plain http costs 0 extra bytes, https 2 (`:s`), and the tag
//!   byte `:` cannot occur in a domain name (a forbidden host code point),
//!   so the format decodes without ambiguity.
//! - Nothing else is stored: the key is the canonical URL minus the fixed
//!   `://` and scheme text, about 7 bytes shorter than the URL, and
//!   [`CanonicalUrl::from_key_bytes`] rebuilds the URL from it.

use crate::{CanonicalUrl, Policy, UrlError};

impl CanonicalUrl {
    /// The bytes the seen-set stores; see the module docs for the format.
    ///
    /// ```
    /// use mgz_url::{CanonicalUrl, Policy};
    /// let u = CanonicalUrl::parse("https://www.test.com:8443/a?b", None, &Policy::safe())?;
    /// assert_eq!(u.key_bytes(), b"com.test.www:s8443/a?b");
    /// assert_eq!(CanonicalUrl::from_key_bytes(&u.key_bytes())?, u);
    /// # Ok::<(), mgz_url::UrlError>(())
    /// ```
    pub fn key_bytes(&self) -> Vec<u8> {
        let mut key = Vec::with_capacity(self.as_str().len());
        self.write_key(&mut key);
        key
    }

    /// Appends the key bytes to `out` (no allocation when `out` has room).
    pub fn write_key(&self, out: &mut Vec<u8>) {
        write_key_parts(
            out,
            self.host(),
            self.scheme() == "https",
            self.port(),
            self.path_and_query(),
        );
    }

    /// Rebuilds the URL from [`key_bytes`](Self::key_bytes) output.
    ///
    /// Fails with [`UrlError::InvalidKey`] unless `key` is exactly the key of
    /// some canonical URL (so corrupt bytes are detected, not guessed at).
    pub fn from_key_bytes(key: &[u8]) -> Result<CanonicalUrl, UrlError> {
        let text = std::str::from_utf8(key).map_err(|_| invalid("not UTF-8"))?;
        let host_end = if text.starts_with('[') {
            text.find(']').ok_or(invalid("unclosed IPv6 bracket"))? + 1
        } else {
            text.find([':', '/']).ok_or(invalid("no path"))?
        };
        let (rhost, rest) = text.split_at(host_end);
        let (scheme, port, path) = split_tag(rest)?;
        let mut url = String::with_capacity(key.len() + 8);
        url.push_str(scheme);
        url.push_str("://");
        if rhost.starts_with('[') {
            url.push_str(rhost);
        } else {
            for (i, label) in rhost.rsplit('.').enumerate() {
                if i > 0 {
                    url.push('.');
                }
                url.push_str(label);
            }
        }
        if !port.is_empty() {
            url.push(':');
            url.push_str(port);
        }
        url.push_str(path);
        let parsed = CanonicalUrl::parse(&url, None, &Policy::safe().with_max_len(usize::MAX))
            .map_err(|_| invalid("does not parse as a URL"))?;
        if parsed.key_bytes() != key {
            return Err(invalid("not the key of a canonical URL"));
        }
        Ok(parsed)
    }
}

/// Appends the key of a canonical URL given by its parts (host as in the
/// URL, `port` only when not the scheme's default).
pub(crate) fn write_key_parts(
    out: &mut Vec<u8>,
    host: &str,
    https: bool,
    port: Option<u16>,
    path_and_query: &str,
) {
    if host.starts_with('[') {
        out.extend_from_slice(host.as_bytes());
    } else {
        // The labels in reverse order (as `host.rsplit('.')` joined by
        // "."), without the splitter's per-label searcher.
        let h = host.as_bytes();
        out.reserve(h.len() + path_and_query.len() + 2);
        let mut end = h.len();
        while let Some(dot) = h[..end].iter().rposition(|&c| c == b'.') {
            out.extend_from_slice(&h[dot + 1..end]);
            out.push(b'.');
            end = dot;
        }
        out.extend_from_slice(&h[..end]);
    }
    if https || port.is_some() {
        out.push(b':');
    }
    if https {
        out.push(b's');
    }
    if let Some(port) = port {
        push_decimal(out, port);
    }
    out.extend_from_slice(path_and_query.as_bytes());
}

/// Splits `[":" ["s"] [port]] path` into (scheme, port digits, path).
fn split_tag(rest: &str) -> Result<(&'static str, &str, &str), UrlError> {
    let Some(tag_and_path) = rest.strip_prefix(':') else {
        return Ok(("http", "", rest));
    };
    let slash = tag_and_path.find('/').ok_or(invalid("no path"))?;
    let (tag, path) = tag_and_path.split_at(slash);
    let (scheme, port) = match tag.strip_prefix('s') {
        Some(port) => ("https", port),
        None => ("http", tag),
    };
    if !port.bytes().all(|b| b.is_ascii_digit()) || (scheme == "http" && port.is_empty()) {
        return Err(invalid("bad scheme/port tag"));
    }
    Ok((scheme, port, path))
}

/// Writes `n` in decimal without allocating.
fn push_decimal(out: &mut Vec<u8>, mut n: u16) {
    let mut digits = [0u8; 5];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

fn invalid(reason: &'static str) -> UrlError {
    UrlError::InvalidKey { reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> String {
        let u = CanonicalUrl::parse(s, None, &Policy::safe()).unwrap();
        String::from_utf8(u.key_bytes()).unwrap()
    }

    #[test]
    fn format_examples() {
        assert_eq!(key("http://www.test.com/a"), "com.test.www/a");
        assert_eq!(key("https://www.test.com/a?b"), "com.test.www:s/a?b");
        assert_eq!(key("http://www.test.com:8080/"), "com.test.www:8080/");
        assert_eq!(key("https://[::1]:8443/x"), "[::1]:s8443/x");
        assert_eq!(key("http://10.0.0.1/"), "1.0.0.10/");
    }

    #[test]
    fn scheme_and_port_are_distinct() {
        let keys = [
            key("http://a.com/"),
            key("https://a.com/"),
            key("http://a.com:443/"),
            key("https://a.com:80/"),
        ];
        for i in 0..keys.len() {
            for j in i + 1..keys.len() {
                assert_ne!(keys[i], keys[j]);
            }
        }
    }

    #[test]
    fn round_trips() {
        for s in [
            "http://www.test.com/a",
            "https://b.c.d.example.org:81/x%2Fy?q=1&r",
            "http://[2001:db8::1]/",
            "https://192.168.0.1:8443/",
            "http://xn--bcher-kva.ch/",
        ] {
            let u = CanonicalUrl::parse(s, None, &Policy::safe()).unwrap();
            assert_eq!(CanonicalUrl::from_key_bytes(&u.key_bytes()).unwrap(), u);
        }
    }

    #[test]
    fn rejects_malformed_keys() {
        for bad in [
            &b""[..],
            b"com.test",
            b"com.test:/a",
            b"com.test:x/a",
            b"[::1",
            b"com.test/\xff",
            b"com.TEST/a",
            b"com.test:80/a",
            b"com.test/a#f",
        ] {
            assert!(
                matches!(
                    CanonicalUrl::from_key_bytes(bad),
                    Err(UrlError::InvalidKey { .. })
                ),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
