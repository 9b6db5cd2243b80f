//! Crawler traps: URL spaces with no end, each entered from its host's home page.
//!
//! - Calendar: `/calendar/YYYY/MM/` links to the previous and next month
//!   (years 0001..9999), so it only ends where the crawl depth ends.
//! - Session ids: `/shop/` links to `?sid=S0`; `/shop/?sid=S` links to
//!   `item-0.html?sid=S`, `item-1.html?sid=S` and to a new session
//!   `?sid=next(S)`: four URLs per session, one hop deeper each time.
//! - Repeating segments: `/loop/more/` links to `more/` (relative), so
//!   `/loop/more/more/...`; the truth stops at a segment repeated 3 times.
//! - Growing URL: `/grow/s1-<200 hex>/s2-<200 hex>/...`: each hop adds about
//!   205 bytes; the truth stops at the 2,048-byte URL limit.

use crate::hash::{h, mix};
use crate::page::{Html, Resource, parse_index};
use crate::world::{Trap, World};

/// The answer of trap `trap` on host `hi` at `path?query`, if the path belongs to it.
pub(crate) fn route(
    world: &World,
    hi: u32,
    trap: Trap,
    path: &str,
    query: Option<&str>,
) -> Option<Resource> {
    let key = h(world.cfg.seed, &[u64::from(hi), 0x7A4]);
    let html = match trap {
        Trap::Calendar => calendar(path, key)?,
        Trap::Session => session(path, query, key)?,
        Trap::Repeat => repeat(path, key)?,
        Trap::Long => grow(path, key)?,
    };
    Some(Resource::Html(html))
}

fn calendar(path: &str, key: u64) -> Option<Html> {
    let rest = path.strip_prefix("/calendar/")?.strip_suffix('/')?;
    let (y, m) = rest.split_once('/')?;
    if y.len() != 4 || m.len() != 2 || !(y.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit())) {
        return None;
    }
    let (y, m): (u32, u32) = (y.parse().ok()?, m.parse().ok()?);
    if !(1..=9999).contains(&y) || !(1..=12).contains(&m) {
        return None;
    }
    let mut html = Html::new(
        format!("Events in {y:04}-{m:02}"),
        key ^ u64::from(y * 12 + m),
    );
    let month = y * 12 + (m - 1);
    for other in [month - 1, month + 1] {
        let (oy, om) = (other / 12, other % 12 + 1);
        if (1..=9999).contains(&oy) {
            html.anchors.push(format!("../../{oy:04}/{om:02}/"));
        }
    }
    html.anchors.push("/".to_string());
    Some(html)
}

/// A session id: 16 lowercase hex digits.
fn sid_hex(x: u64) -> String {
    format!("{x:016x}")
}

fn session(path: &str, query: Option<&str>, key: u64) -> Option<Html> {
    let sid = query
        .and_then(|q| q.strip_prefix("sid="))
        .filter(|s| s.len() == 16 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    let mut html = Html::new("Shop".to_string(), key);
    match (path, sid) {
        ("/shop/", None) => html.anchors.push(format!("./?sid={}", sid_hex(mix(key)))),
        ("/shop/", Some(s)) => {
            let next = mix(u64::from_str_radix(s, 16).ok()? ^ key);
            html.anchors.push(format!("item-0.html?sid={s}"));
            html.anchors.push(format!("item-1.html?sid={s}"));
            html.anchors.push(format!("?sid={}", sid_hex(next)));
        }
        (p, Some(s)) => {
            let k = parse_index(p.strip_prefix("/shop/item-")?.strip_suffix(".html")?)?;
            if k > 1 {
                return None;
            }
            html.title = format!("Shop item {k}");
            html.anchors.push(format!("./?sid={s}"));
            html.anchors.push(format!("item-{}.html?sid={s}", 1 - k));
        }
        _ => return None,
    }
    html.anchors.push("/".to_string());
    Some(html)
}

fn repeat(path: &str, key: u64) -> Option<Html> {
    let mut rest = path.strip_prefix("/loop/")?;
    let mut level = 0u64;
    while let Some(r) = rest.strip_prefix("more/") {
        rest = r;
        level += 1;
    }
    if !rest.is_empty() {
        return None;
    }
    let mut html = Html::new(format!("More, level {level}"), key ^ level);
    html.anchors.push("more/".to_string());
    if level > 0 {
        html.anchors.push("../".to_string());
    }
    Some(html)
}

/// Segment `n` (1-based) of the growing-URL trap.
fn grow_segment(key: u64, n: u64) -> String {
    let mut seg = format!("s{n}-");
    for i in 0..13 {
        seg.push_str(&format!("{:016x}", mix(key ^ (n << 8) ^ i)));
    }
    seg.truncate(seg.len() - 8);
    seg
}

fn grow(path: &str, key: u64) -> Option<Html> {
    let rest = path.strip_prefix("/grow/")?;
    let mut n = 0u64;
    for seg in rest.split_terminator('/') {
        n += 1;
        if seg != grow_segment(key, n) {
            return None;
        }
    }
    if !rest.is_empty() && !rest.ends_with('/') {
        return None;
    }
    let mut html = Html::new(format!("Growing, level {n}"), key ^ n);
    html.anchors.push(format!("{}/", grow_segment(key, n + 1)));
    html.anchors.push("/".to_string());
    Some(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_stops_at_year_bounds() {
        let first = calendar("/calendar/0001/01/", 1).unwrap();
        assert_eq!(first.anchors, ["../../0001/02/", "/"]);
        assert!(calendar("/calendar/2026/13/", 1).is_none());
        assert!(calendar("/calendar/26/01/", 1).is_none());
    }

    #[test]
    fn session_and_grow_validate_their_ids() {
        assert!(session("/shop/", Some("sid=xyz"), 1).is_some());
        assert!(session("/shop/item-0.html", Some("sid=XYZ"), 1).is_none());
        assert!(session("/shop/item-2.html", Some("sid=0123456789abcdef"), 1).is_none());
        let seg = grow_segment(5, 1);
        assert_eq!(seg.len(), "s1-".len() + 200);
        assert!(grow(&format!("/grow/{seg}/"), 5).is_some());
        assert!(grow(&format!("/grow/{seg}x/"), 5).is_none());
        assert!(grow(&format!("/grow/{seg}"), 5).is_none());
    }
}
