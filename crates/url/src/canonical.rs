//! The canonical URL type.
//!
//! NOTE: foundation stub; the full rule set lands with issue 2.

use crate::{Policy, UrlError};

/// A URL in canonical form: crawlable scheme, lowercase host, no fragment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CanonicalUrl {
    url: url::Url,
}

impl CanonicalUrl {
    /// Parses `text`, resolved against `base` when given, and canonicalises it under `policy`.
    pub fn parse(
        text: &str,
        base: Option<&CanonicalUrl>,
        policy: &Policy,
    ) -> Result<CanonicalUrl, UrlError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(UrlError::Empty);
        }
        let parsed = match base {
            Some(b) => b.url.join(text),
            None => url::Url::parse(text),
        }
        .map_err(|e| UrlError::Invalid {
            reason: e.to_string(),
        })?;
        match parsed.scheme() {
            "http" | "https" => {}
            other => {
                return Err(UrlError::UnsupportedScheme {
                    scheme: other.to_string(),
                });
            }
        }
        let mut url = parsed;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(UrlError::MissingHost);
        }
        url.set_fragment(None);
        if url.query() == Some("") {
            url.set_query(None);
        }
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

    /// The host (lowercase, IDNA ASCII form).
    pub fn host(&self) -> &str {
        self.url.host_str().unwrap_or("")
    }

    /// The bytes the seen-set stores: reversed host labels, then path and query.
    pub fn key_bytes(&self) -> Vec<u8> {
        let host = self.host();
        let mut key = Vec::with_capacity(self.as_str().len());
        for (i, label) in host.rsplit('.').enumerate() {
            if i > 0 {
                key.push(b'.');
            }
            key.extend_from_slice(label.as_bytes());
        }
        key.extend_from_slice(self.url[url::Position::BeforePath..].as_bytes());
        key
    }
}

impl std::fmt::Display for CanonicalUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
