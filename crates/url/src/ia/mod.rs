//! Internet Archive compatibility: SURT keys equal to what the Python
//! `surt` package's `surt.surt(url)` returns, and the Google Safe Browsing
//! canonicaliser that it runs first.
//!
//! This is a separate, byte-oriented pipeline, not a [`crate::Policy`]: the
//! IA rules accept any scheme (`dns:`, `whois://`, `mailto:`), never fail on
//! odd input, and make lossy choices our `safe` policy refuses (decode `%`
//! repeatedly, lowercase path and query, drop trailing `/`, sort the query).
//! It exists so that keys can be compared with Wayback CDX indexes.
//!
//! ```text
//! text ─ split (scheme, host, port, path, query) ─ google::canonicalize
//!      ─ rules::ia_canonicalize ─ serialise as SURT
//! ```
//! Written from the behaviour of the Python package (checked against it on
//! real URLs, see the crate README), not from its source.

mod google;
mod rules;

use crate::SurtOptions;

/// A URL split into the parts the IA pipeline works on (raw bytes).
#[derive(Debug, Default, Clone)]
pub(crate) struct Parts {
    pub(crate) scheme: Vec<u8>,
    pub(crate) host: Option<Vec<u8>>,
    pub(crate) port: Option<u32>,
    pub(crate) path: Option<Vec<u8>>,
    pub(crate) query: Option<Vec<u8>>,
}

/// Why the IA pipeline gave up (the Python package raises on these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IaError {
    /// The port is not a decimal number in 0..=65535.
    BadPort,
}

impl std::fmt::Display for IaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IaError::BadPort => f.write_str("port is not a number in 0..=65535"),
        }
    }
}

impl std::error::Error for IaError {}

/// The SURT key of `text` as the Python `surt` package computes it
/// (`surt.surt(text, with_scheme=.., trailing_comma=.., host_massage=..)`).
///
/// ```
/// use mgz_url::{ia, SurtOptions};
/// let key = ia::surt("http://www.archive.org/goo/?b&a", SurtOptions::default())?;
/// assert_eq!(key, "org,archive)/goo?a&b");
/// # Ok::<(), ia::IaError>(())
/// ```
pub fn surt(text: &str, opts: SurtOptions) -> Result<String, IaError> {
    if text.is_empty() {
        return Ok("-".to_string());
    }
    if text.starts_with("filedesc") {
        return Ok(text.to_string());
    }
    let mut parts = split(text.as_bytes())?;
    google::canonicalize(&mut parts);
    rules::ia_canonicalize(&mut parts, opts.host_massage);
    Ok(to_string(serialize_surt(&parts, opts)))
}

/// The Google Safe Browsing canonical form of `text` (any scheme; a
/// missing scheme means `http`).
///
/// ```
/// assert_eq!(mgz_url::ia::google_canonicalize("http://host/%25%32%35")?, "http://host/%25");
/// # Ok::<(), mgz_url::ia::IaError>(())
/// ```
pub fn google_canonicalize(text: &str) -> Result<String, IaError> {
    let mut parts = split(text.as_bytes())?;
    let trailing_question = parts.query.is_none() && ends_with_question(text);
    google::canonicalize(&mut parts);
    let mut out = serialize_url(&parts);
    if trailing_question {
        out.push(b'?');
    }
    Ok(to_string(out))
}

fn ends_with_question(text: &str) -> bool {
    text.trim_matches(|c: char| c.is_ascii_whitespace())
        .ends_with('?')
}

fn to_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Trims, drops TAB/CR/LF, adds `http://` when no scheme, collapses
/// `http://https://` runs, then splits RFC 3986 appendix B style.
fn split(raw: &[u8]) -> Result<Parts, IaError> {
    let text: Vec<u8> = raw
        .trim_ascii()
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\r'))
        .collect();
    let mut text = if scheme_len(&text).is_some() {
        text
    } else {
        [&b"http://"[..], &text].concat()
    };
    collapse_protocols(&mut text);
    let scheme_end = scheme_len(&text).unwrap_or(0);
    let mut parts = Parts {
        scheme: text[..scheme_end].to_vec(),
        ..Parts::default()
    };
    let rest = &text[(scheme_end + 1).min(text.len())..];
    let rest = rest.split(|&b| b == b'#').next().unwrap_or(b"");
    let (before_query, query) = match rest.iter().position(|&b| b == b'?') {
        Some(q) => (&rest[..q], Some(&rest[q + 1..])),
        None => (rest, None),
    };
    parts.query = query.filter(|q| !q.is_empty()).map(<[u8]>::to_vec);
    let (netloc, path) = match before_query.strip_prefix(b"//") {
        Some(r) => r.split_at(r.iter().position(|&b| b == b'/').unwrap_or(r.len())),
        None => (&b""[..], before_query),
    };
    set_host_port(&mut parts, netloc)?;
    parts.path = Some(path.to_vec()).filter(|p| !p.is_empty());
    recover_host_from_path(&mut parts);
    Ok(parts)
}

/// Length of a leading `[A-Za-z][A-Za-z0-9+.-]*:` scheme, without the colon.
fn scheme_len(text: &[u8]) -> Option<usize> {
    if !text.first()?.is_ascii_alphabetic() {
        return None;
    }
    let end = text
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (text[end] == b':').then_some(end)
}

/// `http://https://x` → `https://x`: keep the last of a leading run.
fn collapse_protocols(text: &mut Vec<u8>) {
    let mut pos = 0;
    let mut last = None;
    loop {
        let rest = &text[pos..];
        let len = if rest.starts_with(b"http://") {
            7
        } else if rest.starts_with(b"https://") {
            8
        } else {
            break;
        };
        last = Some(pos);
        pos += len;
    }
    if let Some(last) = last {
        text.drain(..last);
    }
}

fn set_host_port(parts: &mut Parts, netloc: &[u8]) -> Result<(), IaError> {
    let mut netloc = netloc;
    while let Some(n) = netloc.strip_suffix(b":") {
        netloc = n;
    }
    let hostinfo = match netloc.iter().rposition(|&b| b == b'@') {
        Some(at) => &netloc[at + 1..],
        None => netloc,
    };
    let (host, port) = match hostinfo.iter().position(|&b| b == b'[') {
        Some(open) => {
            let bracketed = &hostinfo[open + 1..];
            let close = bracketed.iter().position(|&b| b == b']');
            let host = &bracketed[..close.unwrap_or(bracketed.len())];
            let after = close.map_or(&b""[..], |c| &bracketed[c + 1..]);
            let port = after
                .iter()
                .position(|&b| b == b':')
                .map(|c| &after[c + 1..]);
            (host, port)
        }
        None => match hostinfo.iter().position(|&b| b == b':') {
            Some(c) => (&hostinfo[..c], Some(&hostinfo[c + 1..])),
            None => (hostinfo, None),
        },
    };
    parts.host = Some(host.to_ascii_lowercase()).filter(|h| !h.is_empty());
    parts.port = parse_port(port.filter(|p| !p.is_empty()))?;
    Ok(())
}

fn parse_port(port: Option<&[u8]>) -> Result<Option<u32>, IaError> {
    let Some(port) = port else { return Ok(None) };
    if !port.iter().all(u8::is_ascii_digit) {
        return Err(IaError::BadPort);
    }
    let digits = port.iter().skip_while(|&&b| b == b'0').count();
    let value = std::str::from_utf8(port)
        .ok()
        .and_then(|s| s.parse::<u32>().ok());
    match value {
        Some(v) if digits <= 5 && v <= 65535 => Ok(Some(v).filter(|&v| v != 0)),
        _ => Err(IaError::BadPort),
    }
}

/// `http:////www.x.com/a` has no authority; take the host from the path.
fn recover_host_from_path(parts: &mut Parts) {
    if !parts.scheme.starts_with(b"http") || parts.host.is_some() {
        return;
    }
    let Some(path) = parts.path.take() else {
        return;
    };
    let trimmed: &[u8] = &path[path.iter().position(|&b| b != b'/').unwrap_or(path.len())..];
    let slash = trimmed
        .iter()
        .position(|&b| b == b'/')
        .unwrap_or(trimmed.len());
    parts.host = Some(trimmed[..slash].to_vec());
    let mut new_path = b"/".to_vec();
    new_path.extend_from_slice(trimmed.get(slash + 1..).unwrap_or(b""));
    parts.path = Some(new_path);
}

/// Serialises `scheme://host:port/path?query` (Google form).
fn serialize_url(p: &Parts) -> Vec<u8> {
    let mut out = p.scheme.clone();
    out.push(b':');
    if let Some(host) = p.host.as_deref().filter(|h| !h.is_empty()) {
        out.extend_from_slice(b"//");
        out.extend_from_slice(host);
        push_port(&mut out, p.port);
    }
    push_path_query(&mut out, p);
    out
}

fn serialize_surt(p: &Parts, opts: SurtOptions) -> Vec<u8> {
    let host = p.host.as_deref().filter(|h| !h.is_empty());
    let mut out = Vec::new();
    if opts.with_scheme || host.is_none() {
        out.extend_from_slice(&p.scheme);
        out.push(b':');
    }
    if let Some(host) = host {
        if opts.with_scheme {
            if p.scheme != b"dns" {
                out.extend_from_slice(b"//");
            }
            out.push(b'(');
        }
        for (i, label) in host.split(|&b| b == b'.').rev().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(label);
        }
        push_port(&mut out, p.port);
        if opts.trailing_comma {
            out.push(b',');
        }
        out.push(b')');
    }
    push_path_query(&mut out, p);
    out
}

fn push_port(out: &mut Vec<u8>, port: Option<u32>) {
    if let Some(port) = port {
        out.extend_from_slice(format!(":{port}").as_bytes());
    }
}

fn push_path_query(out: &mut Vec<u8>, p: &Parts) {
    match p.path.as_deref().filter(|path| !path.is_empty()) {
        Some(path) => out.extend_from_slice(path),
        None if p.query.is_some() => out.push(b'/'),
        None => {}
    }
    if let Some(q) = &p.query {
        out.push(b'?');
        out.extend_from_slice(q);
    }
}
