//! Canonicalisation policy: which optional rules are applied.

/// Which canonicalisation rules apply beyond the always-on `safe` ones.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Policy {
    /// Sort query parameters by name (then value).
    pub sort_query: bool,
    /// Remove session-id parameters (PHPSESSID, jsessionid, sid, ...).
    pub strip_session_ids: bool,
    /// Remove tracking parameters (utm_*, gclid, fbclid).
    pub strip_tracking: bool,
    /// Remove a leading `www.` or `wwwN.` label from the host.
    pub strip_www: bool,
    /// Lowercase the path.
    pub lowercase_path: bool,
    /// Maximum length of the canonical URL in bytes.
    pub max_len: usize,
}

impl Policy {
    /// The default policy: only rules that never merge two different resources.
    pub fn safe() -> Self {
        Policy {
            sort_query: false,
            strip_session_ids: false,
            strip_tracking: false,
            strip_www: false,
            lowercase_path: false,
            max_len: 2048,
        }
    }

    /// Every optional rule on.
    pub fn aggressive() -> Self {
        Policy {
            sort_query: true,
            strip_session_ids: true,
            strip_tracking: true,
            strip_www: true,
            lowercase_path: true,
            ..Policy::safe()
        }
    }
}

impl Policy {
    /// This policy with a different length limit (bytes of canonical text).
    pub fn with_max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy::safe()
    }
}
