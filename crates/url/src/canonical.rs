//! The canonical URL type and the canonicalisation pipeline.
//!
//! ```text
//! text ─ trim, reject controls, drop TAB/CR/LF ─ WHATWG parse (url crate:
//!   lowercase scheme + host, IDNA → ASCII, IPv4 forms → dotted quad,
//!   default port dropped, dot segments removed, empty path → "/")
//!   ─ scheme http/https? ─ host: strip trailing dots [, www] ─ drop
//!   userinfo and fragment ─ path: %-normalise [, ;jsessionid, lowercase]
//!   ─ query: %-normalise [, strip params, sort], drop empty "?" ─ length
//! ```
//! Brackets are the opt-in rules of [`Policy`]. Every step maps its output
//! into the set of its fixed points, so canonicalising twice changes nothing
//! (checked by a property test). The common case (no `%`, no rule firing)
//! costs one WHATWG parse and a few scans; rewriting steps re-serialise.

use std::borrow::Cow;

use crate::{Policy, UrlError, percent, query};

/// A URL in canonical form: crawlable scheme, lowercase ASCII host, no
/// userinfo, no fragment, normalised percent-encoding.
///
/// Two values are equal exactly when their canonical texts are equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CanonicalUrl {
    pub(crate) url: url::Url,
}

impl CanonicalUrl {
    /// Parses `text`, resolved against `base` when given, and canonicalises it under `policy`.
    ///
    /// ```
    /// use mgz_url::{CanonicalUrl, Policy};
    /// let u = CanonicalUrl::parse("HTTP://Www.Example.COM:80/a/./b/../%7ec?#frag", None, &Policy::safe())?;
    /// assert_eq!(u.as_str(), "http://www.example.com/a/~c");
    /// # Ok::<(), mgz_url::UrlError>(())
    /// ```
    pub fn parse(
        text: &str,
        base: Option<&CanonicalUrl>,
        policy: &Policy,
    ) -> Result<CanonicalUrl, UrlError> {
        let text = prepare(text)?;
        let parsed = match base {
            Some(b) => b.url.join(&text),
            None => url::Url::parse(&text),
        };
        let mut url = parsed.map_err(|e| map_parse_error(e, &text))?;
        match url.scheme() {
            "http" | "https" => {}
            other => {
                return Err(UrlError::UnsupportedScheme {
                    scheme: other.to_string(),
                });
            }
        }
        normalize_host(&mut url, policy)?;
        // Credentials do not name a different resource, and must never end
        // up in a seen-set or a log; both setters fail only without a host.
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.set_fragment(None);
        normalize_path(&mut url, policy);
        normalize_query(&mut url, policy);
        let len = url.as_str().len();
        if len > policy.max_len {
            return Err(UrlError::TooLong {
                len,
                limit: policy.max_len,
            });
        }
        Ok(CanonicalUrl { url })
    }

    /// The canonical URL text.
    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// The scheme: `http` or `https`.
    pub fn scheme(&self) -> &str {
        self.url.scheme()
    }

    /// The host (lowercase, IDNA ASCII form; IPv6 in brackets).
    pub fn host(&self) -> &str {
        self.url.host_str().unwrap_or("")
    }

    /// The explicit port, `None` when it is the scheme's default.
    pub fn port(&self) -> Option<u16> {
        self.url.port()
    }

    /// The path, always starting with `/`.
    pub fn path(&self) -> &str {
        self.url.path()
    }

    /// The query without `?`, `None` when absent (never `Some("")`).
    pub fn query(&self) -> Option<&str> {
        self.url.query()
    }

    /// Path and query as sent in an HTTP request line (`/a?b`).
    pub fn path_and_query(&self) -> &str {
        &self.url[url::Position::BeforePath..]
    }

    /// The parsed URL, for resolving links or building requests.
    pub fn as_url(&self) -> &url::Url {
        &self.url
    }
}

impl std::fmt::Display for CanonicalUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Trims, rejects control characters, and removes TAB/CR/LF (as WHATWG
/// does, so an `href` wrapped over lines still parses).
fn prepare(text: &str) -> Result<Cow<'_, str>, UrlError> {
    let start = text.len() - text.trim_start_matches(|c: char| c <= ' ').len();
    let trimmed = text.trim_matches(|c: char| c <= ' ');
    if trimmed.is_empty() {
        return Err(UrlError::Empty);
    }
    let mut has_tab_or_newline = false;
    for (offset, &byte) in trimmed.as_bytes().iter().enumerate() {
        match byte {
            b'\t' | b'\n' | b'\r' => has_tab_or_newline = true,
            0..=0x1F | 0x7F => {
                return Err(UrlError::ControlCharacter {
                    byte,
                    offset: start + offset,
                });
            }
            _ => {}
        }
    }
    if has_tab_or_newline {
        return Ok(Cow::Owned(trimmed.replace(['\t', '\n', '\r'], "")));
    }
    Ok(Cow::Borrowed(trimmed))
}

fn map_parse_error(err: url::ParseError, text: &str) -> UrlError {
    use url::ParseError as P;
    match err {
        P::EmptyHost => UrlError::MissingHost,
        P::InvalidPort => UrlError::InvalidPort,
        P::RelativeUrlWithoutBase => UrlError::RelativeWithoutBase,
        P::IdnaError | P::InvalidDomainCharacter if host_has_space(text) => {
            UrlError::WhitespaceInHost
        }
        P::IdnaError if !looks_international(raw_host(text)) => UrlError::InvalidHost {
            reason: "forbidden character".to_string(),
        },
        P::IdnaError => UrlError::InvalidIdna,
        P::InvalidDomainCharacter | P::InvalidIpv4Address | P::InvalidIpv6Address => {
            UrlError::InvalidHost {
                reason: err.to_string(),
            }
        }
        other => UrlError::Invalid {
            reason: other.to_string(),
        },
    }
}

/// The host part of the authority of `text`, as written.
fn raw_host(text: &str) -> &str {
    let Some((_, rest)) = text.split_once("//") else {
        return "";
    };
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
    authority.rsplit_once('@').map_or(authority, |(_, h)| h)
}

/// True when the authority of `text` holds a space, raw or as `%20`.
fn host_has_space(text: &str) -> bool {
    let host = raw_host(text);
    host.contains(' ') || host.contains("%20")
}

/// True when `host` has non-ASCII text, non-ASCII escapes or punycode, so
/// that an IDNA failure is about IDNA and not a forbidden ASCII character.
fn looks_international(host: &str) -> bool {
    let b = host.as_bytes();
    !host.is_ascii()
        || host.to_ascii_lowercase().contains("xn--")
        || b.windows(2)
            .any(|w| w[0] == b'%' && matches!(w[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
}

fn normalize_host(url: &mut url::Url, policy: &Policy) -> Result<(), UrlError> {
    let host = match url.host() {
        Some(url::Host::Domain(d)) => d,
        Some(_) => return Ok(()),
        None => return Err(UrlError::MissingHost),
    };
    let mut new = host.trim_end_matches('.');
    if new.is_empty() {
        return Err(UrlError::MissingHost);
    }
    if policy.strip_www {
        new = strip_www(new);
    }
    if new.len() != host.len() {
        let new = new.to_string();
        url.set_host(Some(&new))
            .map_err(|e| map_parse_error(e, ""))?;
    }
    Ok(())
}

/// `www.`, `www2.` ... removed when something with a dot remains.
pub(crate) fn strip_www(host: &str) -> &str {
    let Some(rest) = host.strip_prefix("www") else {
        return host;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    match rest.strip_prefix('.') {
        Some(tail) if tail.contains('.') => tail,
        _ => host,
    }
}

fn normalize_path(url: &mut url::Url, policy: &Policy) {
    let mut path = Cow::Borrowed(url.path());
    if let Some(p) = percent::normalize(&path) {
        path = Cow::Owned(p);
    }
    if policy.strip_session_ids
        && let Some(p) = query::strip_path_session(&path)
    {
        path = Cow::Owned(p);
    }
    if policy.lowercase_path && path.bytes().any(|b| b.is_ascii_uppercase()) {
        path = Cow::Owned(percent::lowercase_outside_escapes(&path));
    }
    if let Cow::Owned(p) = path {
        url.set_path(&p);
    }
}

fn normalize_query(url: &mut url::Url, policy: &Policy) {
    let Some(q) = url.query() else { return };
    let mut q = Cow::Borrowed(q);
    if let Some(n) = percent::normalize(&q) {
        q = Cow::Owned(n);
    }
    if query::rewrites_query(policy) {
        q = Cow::Owned(query::rewrite_query(&q, policy));
    }
    if q.is_empty() {
        url.set_query(None);
    } else if let Cow::Owned(q) = q {
        url.set_query(Some(&q));
    }
}
