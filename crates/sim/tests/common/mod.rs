//! A small crawler written against the HTTP-level answers of the sim
//! (`Sim::respond`): it parses the rendered HTML with lol_html, decodes
//! charsets, reads robots.txt with texting_robots and follows redirects.
//! It shares nothing with the sim's truth walker but the documented rules,
//! so `crawl(...).pages == truth(...)` checks the truth against the bytes.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use mgz_sim::{Sim, SimResponse, admissible};
use mgz_url::{CanonicalUrl, Policy};
use texting_robots::Robot;

/// What a crawl saw.
#[derive(Debug, Default)]
pub struct Crawl {
    /// Canonical URLs of fetched 200 text/html pages.
    pub pages: BTreeSet<String>,
    /// Every URL fetched (pages, redirects, errors, resources), canonical.
    pub fetched: Vec<String>,
    /// Count of answers per status (0: stalled).
    pub statuses: BTreeMap<u16, usize>,
    /// Features observed (see `note`).
    pub features: BTreeSet<String>,
    /// URLs dropped by the trap limits.
    pub cut: Vec<String>,
    /// Pages that carry meta robots noindex.
    pub noindex: BTreeSet<String>,
}

impl Crawl {
    fn note(&mut self, feature: &str) {
        self.features.insert(feature.to_string());
    }
}

/// Splits an absolute canonical URL into (host, path?query).
pub fn split(url: &CanonicalUrl) -> (String, String) {
    let parsed = url::Url::parse(url.as_str()).expect("canonical URLs parse");
    let mut target = parsed.path().to_string();
    if let Some(q) = parsed.query() {
        target.push('?');
        target.push_str(q);
    }
    (parsed.host_str().unwrap_or("").to_string(), target)
}

fn header<'a>(resp: &'a SimResponse, name: &str) -> Option<&'a str> {
    resp.rendered
        .headers
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
}

/// Decodes an HTML body by its header charset, else a meta charset in the first 1 KiB.
fn decode(resp: &SimResponse, crawl: &mut Crawl) -> String {
    let ctype = header(resp, "content-type")
        .unwrap_or("")
        .to_ascii_lowercase();
    let head = String::from_utf8_lossy(&resp.rendered.body[..resp.rendered.body.len().min(1024)])
        .to_ascii_lowercase();
    let label = if let Some(cs) = ctype.split("charset=").nth(1) {
        if cs != "utf-8" {
            crawl.note(&format!("header charset {cs}"));
        }
        cs.to_string()
    } else if let Some(rest) = head.split("charset=").nth(1) {
        let cs: String = rest
            .trim_start_matches(['"', '\''])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        crawl.note(&format!("meta charset {cs}"));
        cs
    } else {
        "utf-8".to_string()
    };
    let enc = encoding_rs::Encoding::for_label(label.as_bytes()).unwrap_or(encoding_rs::UTF_8);
    let (text, _, had_errors) = enc.decode(&resp.rendered.body);
    assert!(!had_errors, "body does not decode as {label}");
    if !text.is_ascii() && enc != encoding_rs::UTF_8 {
        crawl.note("non-ascii text in a non-utf-8 page");
    }
    text.into_owned()
}

/// Links and directives of one HTML page.
#[derive(Debug, Default)]
pub struct Parsed {
    pub anchors: Vec<String>,
    pub images: Vec<String>,
    pub base: Option<String>,
    pub meta_robots: String,
}

/// Extracts `<a href>`, `<img src>`, `<base href>` and `<meta name=robots>` with lol_html.
pub fn parse_html(text: &str) -> Parsed {
    use lol_html::{RewriteStrSettings, element, rewrite_str};
    let out = std::cell::RefCell::new(Parsed::default());
    let unescape = |v: String| v.replace("&amp;", "&");
    rewrite_str(
        text,
        RewriteStrSettings {
            element_content_handlers: vec![
                element!("a[href]", |el| {
                    out.borrow_mut()
                        .anchors
                        .push(unescape(el.get_attribute("href").unwrap_or_default()));
                    Ok(())
                }),
                element!("img[src]", |el| {
                    out.borrow_mut()
                        .images
                        .push(unescape(el.get_attribute("src").unwrap_or_default()));
                    Ok(())
                }),
                element!("base[href]", |el| {
                    let mut o = out.borrow_mut();
                    if o.base.is_none() {
                        o.base = el.get_attribute("href");
                    }
                    Ok(())
                }),
                element!("meta[name=robots]", |el| {
                    out.borrow_mut().meta_robots = el.get_attribute("content").unwrap_or_default();
                    Ok(())
                }),
            ],
            ..RewriteStrSettings::new()
        },
    )
    .expect("lol_html parses any input");
    out.into_inner()
}

/// The crawler's state.
struct Crawler<'a> {
    sim: &'a Sim,
    max_depth: u32,
    obey_robots: bool,
    sitemaps: bool,
    policy: Policy,
    depth: HashMap<String, u32>,
    queue: VecDeque<(CanonicalUrl, u32)>,
    robots: HashMap<String, Option<Robot>>,
    crawl: Crawl,
}

/// Crawls `sim` from its seeds.
pub fn crawl(sim: &Sim, max_depth: u32, obey_robots: bool, sitemaps: bool) -> Crawl {
    let mut c = Crawler {
        sim,
        max_depth,
        obey_robots,
        sitemaps,
        policy: Policy::safe(),
        depth: HashMap::new(),
        queue: VecDeque::new(),
        robots: HashMap::new(),
        crawl: Crawl::default(),
    };
    for seed in sim.seeds() {
        let url = CanonicalUrl::parse(&seed, None, &c.policy).expect("seeds parse");
        c.push(url, 0, false);
    }
    while let Some((url, d)) = c.queue.pop_front() {
        if c.depth[url.as_str()] < d {
            continue;
        }
        c.visit(&url, d);
    }
    c.crawl
}

impl Crawler<'_> {
    fn push(&mut self, url: CanonicalUrl, d: u32, front: bool) {
        if !admissible(url.as_str()) {
            self.crawl.cut.push(url.as_str().to_string());
            return;
        }
        if self.depth.get(url.as_str()).is_some_and(|&b| b <= d) {
            if url.as_str().contains("/redirect/loop-") && front {
                self.crawl.note("redirect loop closed");
            }
            return;
        }
        self.depth.insert(url.as_str().to_string(), d);
        if front {
            self.queue.push_front((url, d))
        } else {
            self.queue.push_back((url, d))
        }
    }

    fn get(&mut self, host: &str, target: &str) -> SimResponse {
        let resp = self.sim.respond(host, target);
        let status = if resp.stall { 0 } else { resp.rendered.status };
        *self.crawl.statuses.entry(status).or_default() += 1;
        resp
    }

    fn allowed(&mut self, host: &str, url: &CanonicalUrl, d: u32) -> bool {
        if !self.robots.contains_key(host) {
            let resp = self.get(host, "/robots.txt");
            let robot = match (resp.stall, resp.rendered.status) {
                (true, _) => {
                    self.crawl.note("robots timeout");
                    None
                }
                (false, 200) => {
                    let text = String::from_utf8_lossy(&resp.rendered.body).to_string();
                    for (needle, feature) in [
                        ("Crawl-delay", "robots crawl-delay"),
                        ("$\n", "robots $ pattern"),
                        ("/*", "robots * pattern"),
                        ("Allow:", "robots allow"),
                    ] {
                        if text.contains(needle) {
                            self.crawl.note(feature);
                        }
                    }
                    Robot::new("mgz", &resp.rendered.body).ok()
                }
                (false, s) if s < 500 => {
                    self.crawl.note("robots 4xx");
                    Robot::new("mgz", b"").ok()
                }
                (false, _) => {
                    self.crawl.note("robots 5xx");
                    None
                }
            };
            if let Some(r) = &robot
                && self.sitemaps
                && d < self.max_depth
            {
                for sm in r.sitemaps.clone() {
                    self.read_sitemap(&sm, d);
                }
            }
            self.robots.insert(host.to_string(), robot);
        }
        match &self.robots[host] {
            _ if !self.obey_robots => true,
            Some(r) => r.allowed(url.as_str()),
            None => false,
        }
    }

    fn read_sitemap(&mut self, loc: &str, d: u32) {
        let url = CanonicalUrl::parse(loc, None, &self.policy).expect("sitemap URL parses");
        let (host, target) = split(&url);
        let resp = self.get(&host, &target);
        let xml = String::from_utf8_lossy(&resp.rendered.body).to_string();
        for part in xml.split("<loc>").skip(1) {
            let loc = part.split("</loc>").next().unwrap_or("");
            if let Ok(u) = CanonicalUrl::parse(loc, None, &self.policy) {
                self.crawl.note("sitemap url");
                self.push(u, d + 1, false);
            }
        }
    }

    fn visit(&mut self, url: &CanonicalUrl, d: u32) {
        let (host, target) = split(url);
        if !host.ends_with(".sim") || !self.allowed(&host, url, d) {
            return;
        }
        self.crawl.fetched.push(url.as_str().to_string());
        let resp = self.get(&host, &target);
        let status = resp.rendered.status;
        if matches!(status, 301 | 302 | 307 | 308) {
            let loc = header(&resp, "location").expect("redirects carry Location");
            if let Ok(t) = CanonicalUrl::parse(loc, Some(url), &self.policy) {
                self.push(t, d, true);
            }
            return;
        }
        if matches!(status, 503 | 429) && header(&resp, "retry-after").is_some() {
            self.crawl.note("retry-after");
        }
        let ctype = header(&resp, "content-type").unwrap_or("").to_string();
        if status != 200 || !ctype.starts_with("text/html") {
            if status == 200 {
                self.crawl.note(&format!("resource {ctype}"));
            }
            return;
        }
        self.page(url, d, &resp);
    }

    fn page(&mut self, url: &CanonicalUrl, d: u32, resp: &SimResponse) {
        self.crawl.pages.insert(url.as_str().to_string());
        if resp.rendered.body.len() > 200_000 {
            self.crawl.note("oversized page");
        }
        let text = decode(resp, &mut self.crawl);
        if !text.trim_end().ends_with("</html>") {
            self.crawl.note("malformed html");
        }
        let parsed = parse_html(&text);
        if parsed.meta_robots.contains("noindex") {
            self.crawl.noindex.insert(url.as_str().to_string());
        }
        for word in ["noindex", "nofollow"] {
            if parsed.meta_robots.contains(word) {
                self.crawl.note(&format!("meta {word}"));
            }
        }
        if parsed.meta_robots.contains("nofollow") || d >= self.max_depth {
            return;
        }
        let base = parsed.base.as_deref().and_then(|b| {
            self.crawl.note("base href");
            CanonicalUrl::parse(b, Some(url), &self.policy).ok()
        });
        let base = base.unwrap_or_else(|| url.clone());
        for img in &parsed.images {
            if let Ok(t) = CanonicalUrl::parse(img, Some(&base), &self.policy) {
                let (h, p) = split(&t);
                let r = self.sim.respond(&h, &p);
                let ct = header(&r, "content-type").unwrap_or("").to_string();
                self.crawl.note(&format!("image {ct}"));
            }
        }
        for href in parsed.anchors {
            if href.starts_with("//") {
                self.crawl.note("protocol-relative link");
            }
            match CanonicalUrl::parse(&href, Some(&base), &self.policy) {
                Ok(t) => {
                    if t.host() != url.host() {
                        self.crawl.note("cross-host link");
                    }
                    self.push(t, d + 1, false);
                }
                Err(_) => self.crawl.cut.push(format!("{}{href}", base.as_str())),
            }
        }
    }
}
