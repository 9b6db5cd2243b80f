//! SURT keys ("Sort-friendly URI Reordering Transform") of canonical URLs.
//!
//! `http://www.example.com:8080/a?b` → `com,example)/a?b` with the default
//! options: host labels reversed and joined by `,`, closed by `)`, then
//! path and query; the scheme is dropped and a leading `www`/`wwwN` label
//! is "massaged" away. This is the host order the Wayback Machine's CDX
//! index sorts by. For byte-for-byte agreement with the Python `surt`
//! package (which also lowercases, sorts the query, ...) see [`crate::ia`].

use crate::CanonicalUrl;

/// Options of [`surt`]; [`Default`] is the Internet Archive default
/// (no scheme, no trailing comma, host massage on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SurtOptions {
    /// Prefix `http://(`: `http://(com,example,)/`.
    pub with_scheme: bool,
    /// Put `,` before `)`: `com,example,)/`.
    pub trailing_comma: bool,
    /// Drop a leading `www.` / `wwwN.` label.
    pub host_massage: bool,
}

impl Default for SurtOptions {
    fn default() -> Self {
        SurtOptions {
            with_scheme: false,
            trailing_comma: false,
            host_massage: true,
        }
    }
}

impl SurtOptions {
    /// Sets [`with_scheme`](Self::with_scheme).
    pub fn with_scheme(mut self, on: bool) -> Self {
        self.with_scheme = on;
        self
    }
    /// Sets [`trailing_comma`](Self::trailing_comma).
    pub fn trailing_comma(mut self, on: bool) -> Self {
        self.trailing_comma = on;
        self
    }
    /// Sets [`host_massage`](Self::host_massage).
    pub fn host_massage(mut self, on: bool) -> Self {
        self.host_massage = on;
        self
    }
}

/// The SURT key of `url`.
///
/// ```
/// use mgz_url::{surt, CanonicalUrl, Policy, SurtOptions};
/// let u = CanonicalUrl::parse("http://www.Example.com:8080/a?b", None, &Policy::safe())?;
/// assert_eq!(surt(&u, SurtOptions::default()), "com,example:8080)/a?b");
/// let opts = SurtOptions::default().with_scheme(true).trailing_comma(true);
/// assert_eq!(surt(&u, opts), "http://(com,example:8080,)/a?b");
/// # Ok::<(), mgz_url::UrlError>(())
/// ```
pub fn surt(url: &CanonicalUrl, opts: SurtOptions) -> String {
    let mut host = url.host();
    if opts.host_massage && !url.is_ip_literal() {
        host = crate::canonical::strip_www(host);
    }
    let mut out = String::with_capacity(url.as_str().len() + 4);
    if opts.with_scheme {
        out.push_str(url.scheme());
        out.push_str("://(");
    }
    push_reversed_host(&mut out, host, ",");
    // Port before the comma, as the Python package writes it.
    if let Some(port) = url.port() {
        out.push(':');
        out.push_str(&port.to_string());
    }
    if opts.trailing_comma {
        out.push(',');
    }
    out.push(')');
    out.push_str(url.path_and_query());
    out
}

/// Appends `host` with its labels in reverse order, joined by `sep`.
pub(crate) fn push_reversed_host(out: &mut String, host: &str, sep: &str) {
    if host.starts_with('[') {
        out.push_str(host);
        return;
    }
    for (i, label) in host.rsplit('.').enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(label);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;

    fn s(text: &str, opts: SurtOptions) -> String {
        surt(
            &CanonicalUrl::parse(text, None, &Policy::safe()).unwrap(),
            opts,
        )
    }

    #[test]
    fn default_options() {
        let d = SurtOptions::default();
        assert_eq!(s("http://www.archive.org/", d), "org,archive)/");
        assert_eq!(
            s("https://www2.archive.org/Goo/?b&a", d),
            "org,archive)/Goo/?b&a"
        );
        assert_eq!(s("http://192.0.2.1/x", d), "1,2,0,192)/x");
    }

    #[test]
    fn each_option() {
        let d = SurtOptions::default();
        assert_eq!(
            s("https://www.a.org/", d.with_scheme(true)),
            "https://(org,a)/"
        );
        assert_eq!(s("http://www.a.org/", d.trailing_comma(true)), "org,a,)/");
        assert_eq!(s("http://www.a.org/", d.host_massage(false)), "org,a,www)/");
        assert_eq!(s("http://www.org/", d), "org,www)/");
    }
}
