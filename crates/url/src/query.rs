//! Opt-in query and path rules of [`crate::Policy`]: dropping session-id and
//! tracking parameters, sorting parameters, and `;jsessionid=` path params.
//!
//! Parameters are the `&`-separated pieces of the query; a piece's name is
//! the text before its first `=`, compared ASCII-case-insensitively.
//! These rules can merge URLs that a server treats as different (a `sid`
//! that is not a session, an order-sensitive API), which is why they are off
//! in [`crate::Policy::safe`].

use crate::Policy;

/// Names of session-id parameters (lowercase); `aspsessionid*` is a prefix.
const SESSION_NAMES: [&str; 5] = ["phpsessid", "jsessionid", "sid", "cfid", "cftoken"];
/// Names of click-tracking parameters (lowercase); `utm_*` is a prefix.
const TRACKING_NAMES: [&str; 2] = ["gclid", "fbclid"];

fn name_of(piece: &str) -> &str {
    piece.split_once('=').map_or(piece, |(name, _)| name)
}

fn is_session(name: &str) -> bool {
    SESSION_NAMES.iter().any(|s| name.eq_ignore_ascii_case(s))
        || starts_with_ignore_case(name, "aspsessionid")
}

fn is_tracking(name: &str) -> bool {
    TRACKING_NAMES.iter().any(|s| name.eq_ignore_ascii_case(s))
        || starts_with_ignore_case(name, "utm_")
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// True when `policy` rewrites queries at all (the fast path skips them).
pub(crate) fn rewrites_query(policy: &Policy) -> bool {
    policy.sort_query || policy.strip_session_ids || policy.strip_tracking
}

/// Applies the query rules of `policy`; empty pieces (`a&&b`) are dropped.
pub(crate) fn rewrite_query(query: &str, policy: &Policy) -> String {
    let mut pieces: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter(|p| !(policy.strip_session_ids && is_session(name_of(p))))
        .filter(|p| !(policy.strip_tracking && is_tracking(name_of(p))))
        .collect();
    if policy.sort_query {
        // By name, then by the whole piece: `a=1&a=2` keeps a stable order.
        pieces.sort_by(|a, b| name_of(a).cmp(name_of(b)).then(a.cmp(b)));
    }
    pieces.join("&")
}

/// Removes `;jsessionid=...` path parameters (up to the next `;` or `/`).
/// `None` when the path has none.
pub(crate) fn strip_path_session(path: &str) -> Option<String> {
    const KEY: &str = ";jsessionid=";
    let lower = path.to_ascii_lowercase();
    lower.find(KEY)?;
    let mut out = String::with_capacity(path.len());
    let mut rest = 0;
    while let Some(off) = lower[rest..].find(KEY) {
        let start = rest + off;
        out.push_str(&path[rest..start]);
        let after = start + KEY.len();
        let end = lower[after..]
            .find([';', '/'])
            .map_or(path.len(), |e| after + e);
        rest = end;
    }
    out.push_str(&path[rest..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_sessions_and_tracking_then_sorts() {
        let p = Policy::aggressive();
        let q = "z=1&PHPSESSID=abc&utm_source=x&a=2&&ASPSESSIONIDQQ=1&gclid=9&a=1&Sid=3";
        assert_eq!(rewrite_query(q, &p), "a=1&a=2&z=1");
    }

    #[test]
    fn keeps_lookalike_names() {
        let p = Policy::aggressive();
        assert_eq!(
            rewrite_query("side=1&utm=2&xsid=3", &p),
            "side=1&utm=2&xsid=3"
        );
    }

    #[test]
    fn sort_only_keeps_everything() {
        let mut p = Policy::safe();
        p.sort_query = true;
        assert_eq!(rewrite_query("b&sid=1&a=", &p), "a=&b&sid=1");
    }

    #[test]
    fn strips_jsessionid_path_params() {
        assert_eq!(
            strip_path_session("/a.jsp;JSESSIONID=x1;v=2/b").as_deref(),
            Some("/a.jsp;v=2/b")
        );
        assert_eq!(
            strip_path_session("/a;jsessionid=1"),
            Some("/a".to_string())
        );
        assert_eq!(strip_path_session("/plain"), None);
    }
}
