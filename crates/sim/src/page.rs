//! The model of one answer: what a (host, path) request returns, before it is
//! turned into bytes. The server renders it (`render.rs`); the ground truth
//! (`truth.rs`) reads its links directly, so both always agree.
//!
//! Regular page `j` of a host lives at `/` (j = 0) or `/{section}/{slug}-{j}.html`,
//! where section and slug are drawn from (seed, host, j); a path that does not
//! match the drawn names exactly is a 404. Nothing is stored: a request parses
//! the path back to `j` and regenerates the page.

use crate::hash::h;

/// Section names (the first path segment of a regular page).
pub(crate) const SECTIONS: [&str; 12] = [
    "docs", "news", "blog", "products", "about", "help", "private", "wiki", "forum", "events",
    "guides", "team",
];

/// Slugs (the file name stem of a regular page).
pub(crate) const SLUGS: [&str; 24] = [
    "intro", "overview", "release", "notes", "press", "install", "faq", "pricing", "contact",
    "history", "roadmap", "report", "summary", "guide", "tutorial", "changes", "story", "review",
    "update", "index-of", "article", "post", "item", "detail",
];

/// One HTML page: its links and the flags that shape its markup.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Html {
    pub title: String,
    /// `<base href>`, when the page declares one.
    pub base: Option<String>,
    /// `<a href>` values, in document order.
    pub anchors: Vec<String>,
    /// `<img src>` values.
    pub images: Vec<String>,
    pub noindex: bool,
    pub nofollow: bool,
    pub malformed: bool,
    pub oversized: bool,
    /// Seeds the filler text.
    pub text_key: u64,
}

impl Html {
    /// An empty page titled `title` whose text is drawn from `text_key`.
    pub(crate) fn new(title: String, text_key: u64) -> Html {
        Html {
            title,
            base: None,
            anchors: Vec::new(),
            images: Vec::new(),
            noindex: false,
            nofollow: false,
            malformed: false,
            oversized: false,
            text_key,
        }
    }
}

/// What a request gets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resource {
    /// 200 text/html.
    Html(Html),
    /// 200 text/plain robots.txt.
    Robots(String),
    /// 200 application/xml sitemap.
    Sitemap(String),
    /// 200 with a non-HTML body.
    Binary {
        content_type: &'static str,
        body: Vec<u8>,
    },
    /// 301, 302, 307 or 308 to `location` (relative to the request URL).
    Redirect { status: u16, location: String },
    /// An error status; 503 and 429 carry `Retry-After`.
    Status(u16),
    /// 404 Not Found.
    NotFound,
    /// No answer: wait, then close the connection.
    Stall,
}

/// The path of regular page `j` of host `host`.
pub(crate) fn page_path(seed: u64, host: u32, j: u32) -> String {
    if j == 0 {
        return "/".to_string();
    }
    let (section, slug) = page_names(seed, host, j);
    format!("/{section}/{slug}-{j}.html")
}

/// The section and slug of page `j`.
pub(crate) fn page_names(seed: u64, host: u32, j: u32) -> (&'static str, &'static str) {
    let x = h(seed, &[u64::from(host), u64::from(j), 0x5EC7]);
    let section = SECTIONS[(x % SECTIONS.len() as u64) as usize];
    let slug = SLUGS[((x >> 20) % SLUGS.len() as u64) as usize];
    (section, slug)
}

/// The index of the regular page at `path` on a host with `pages` pages.
pub(crate) fn parse_page_path(seed: u64, host: u32, pages: u32, path: &str) -> Option<u32> {
    if path == "/" {
        return Some(0);
    }
    let rest = path.strip_prefix('/')?.strip_suffix(".html")?;
    let (section, file) = rest.split_once('/')?;
    let (slug, num) = file.rsplit_once('-')?;
    if num.is_empty() || num.starts_with('0') || num.len() > 10 {
        return None;
    }
    let j: u32 = num.parse().ok()?;
    let valid = j > 0 && j < pages && page_names(seed, host, j) == (section, slug);
    valid.then_some(j)
}

/// The path of sitemap-only page `k`.
pub(crate) fn orphan_path(k: u32) -> String {
    format!("/archive/old-{k}.html")
}

/// The index of the sitemap-only page at `path`, if any.
pub(crate) fn parse_orphan_path(orphans: u32, path: &str) -> Option<u32> {
    let num = path.strip_prefix("/archive/old-")?.strip_suffix(".html")?;
    parse_index(num).filter(|&k| k < orphans)
}

/// A decimal index without sign or leading zero.
pub(crate) fn parse_index(num: &str) -> Option<u32> {
    let canonical = !num.is_empty() && (num == "0" || !num.starts_with('0')) && num.len() <= 10;
    if canonical && num.bytes().all(|b| b.is_ascii_digit()) {
        num.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_paths_round_trip() {
        for j in 0..500 {
            let p = page_path(9, 3, j);
            assert_eq!(parse_page_path(9, 3, 500, &p), Some(j), "{p}");
            assert_eq!(parse_page_path(9, 3, j, &p), (j == 0).then_some(0));
        }
    }

    #[test]
    fn near_miss_paths_are_rejected() {
        let p = page_path(9, 3, 7);
        let (section, slug) = page_names(9, 3, 7);
        for bad in [
            format!("/{section}/{slug}-07.html"),
            format!("/{section}/{slug}-7.htm"),
            format!("/{section}x/{slug}-7.html"),
            format!("/{section}/{slug}-7.html/"),
            p.to_uppercase(),
            "/a/b/c-1.html".to_string(),
            "".to_string(),
        ] {
            assert_eq!(parse_page_path(9, 3, 100, &bad), None, "{bad}");
        }
        assert_eq!(parse_orphan_path(3, "/archive/old-2.html"), Some(2));
        assert_eq!(parse_orphan_path(3, "/archive/old-3.html"), None);
        assert_eq!(parse_orphan_path(3, "/archive/old-01.html"), None);
    }
}
