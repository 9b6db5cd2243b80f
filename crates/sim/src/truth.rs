//! The ground truth: the canonical URLs of the HTML pages a correct crawler
//! fetches, computed by walking the sim's page models (no HTTP, no HTML
//! parsing) with the same routing the server uses.
//!
//! A 0-1 breadth-first search over canonical URLs: a link costs one hop, a
//! redirect costs none (the target inherits the depth of the source), so
//! each URL gets its least depth. Cost: one hash-map entry per reachable URL
//! (about 100 bytes), and one page generation per URL. The rules are listed
//! in the crate README ("Ground truth").

use std::collections::{BTreeSet, HashMap, VecDeque};

use mgz_url::{CanonicalUrl, Policy};
use texting_robots::Robot;

use crate::page::{Html, Resource};
use crate::route::{route, sitemap_urls};
use crate::sim::Sim;
use crate::world::World;

/// Longest URL (bytes, canonical form) a crawler fetches.
pub const MAX_URL_LEN: usize = 2048;
/// A URL whose path has one segment this many times or more is a trap and never fetched.
pub const MAX_SEGMENT_REPEATS: usize = 3;

/// How the truth walks the web.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthOptions {
    /// Links followed from a seed (seeds have depth 0; a redirect adds nothing).
    pub max_depth: u32,
    /// Obey robots.txt (absent or 4xx: allow all; 5xx or no answer: disallow all).
    pub obey_robots: bool,
    /// Also fetch the URLs of sitemaps announced in robots.txt (depth: see README).
    pub follow_sitemaps: bool,
    /// The user agent matched against robots.txt groups.
    pub user_agent: String,
    /// List pages carrying `<meta name="robots" content="noindex">` (they are fetched either way).
    pub include_noindex: bool,
}

impl TruthOptions {
    /// Depth `max_depth`, obeying robots.txt, not following sitemaps, agent `mgz`, noindex pages listed.
    pub fn new(max_depth: u32) -> Self {
        TruthOptions {
            max_depth,
            obey_robots: true,
            follow_sitemaps: false,
            user_agent: "mgz".to_string(),
            include_noindex: true,
        }
    }
}

/// Whether a crawler fetches `url` at all: length and repeated-segment limits.
pub fn admissible(url: &str) -> bool {
    if url.len() > MAX_URL_LEN {
        return false;
    }
    let path = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = path.find('/').map_or("", |i| &path[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    let mut counts: HashMap<&str, usize> = HashMap::new();
    path.split('/').filter(|s| !s.is_empty()).all(|seg| {
        let c = counts.entry(seg).or_default();
        *c += 1;
        *c < MAX_SEGMENT_REPEATS
    })
}

/// Per-host robots verdicts: `None` means disallow all.
type RobotsCache = HashMap<u32, Option<Robot>>;

struct Walk<'a> {
    world: &'a World,
    opts: &'a TruthOptions,
    policy: Policy,
    depth: HashMap<String, u32>,
    queue: VecDeque<(CanonicalUrl, u32)>,
    robots: RobotsCache,
    pages: BTreeSet<String>,
}

impl Sim {
    /// The seed URLs: home pages of the `seed_count` most popular hosts.
    pub fn seeds(&self) -> Vec<String> {
        let n = self.world.cfg.seed_count.min(self.world.hosts.len() as u32);
        (0..n as usize)
            .map(|i| format!("http://{}/", self.world.hosts[i].name))
            .collect()
    }

    /// The sorted canonical URLs of the HTML pages a correct crawler fetches.
    pub fn truth(&self, opts: &TruthOptions) -> Vec<String> {
        let mut walk = Walk {
            world: &self.world,
            opts,
            policy: Policy::safe(),
            depth: HashMap::new(),
            queue: VecDeque::new(),
            robots: HashMap::new(),
            pages: BTreeSet::new(),
        };
        for seed in self.seeds() {
            if let Ok(url) = CanonicalUrl::parse(&seed, None, &walk.policy) {
                walk.push(url, 0, false);
            }
        }
        while let Some((url, d)) = walk.queue.pop_front() {
            if walk.depth.get(url.as_str()).is_some_and(|&best| best < d) {
                continue;
            }
            walk.visit(&url, d);
        }
        walk.pages.into_iter().collect()
    }

    /// The links of the HTML page at `url`, from its model (no HTML
    /// parsing): each anchor resolved against the page's `<base href>` (or
    /// the page) and canonicalised with the safe policy, distinct and
    /// sorted; empty for a page marked `nofollow`. What a crawler that
    /// records a page's outgoing links and honours `nofollow` stores.
    /// `None` when `url` is not an HTML page of this web.
    pub fn page_links(&self, url: &str) -> Option<Vec<String>> {
        let policy = Policy::safe();
        let url = CanonicalUrl::parse(url, None, &policy).ok()?;
        let hi = self.world.lookup(url.host())?;
        let parsed = url::Url::parse(url.as_str()).ok()?;
        let Resource::Html(html) = route(&self.world, hi, parsed.path(), parsed.query()) else {
            return None;
        };
        if html.nofollow {
            return Some(Vec::new());
        }
        let links: BTreeSet<String> = anchor_targets(&html, &url, &policy)
            .map(|u| u.as_str().to_string())
            .collect();
        Some(links.into_iter().collect())
    }
}

/// The canonical targets of `html`'s anchors on the page at `url`, resolved
/// against its `<base href>` (or the page); anchors that do not parse are
/// left out.
fn anchor_targets<'a>(
    html: &'a Html,
    url: &CanonicalUrl,
    policy: &'a Policy,
) -> impl Iterator<Item = CanonicalUrl> + 'a {
    let base = html
        .base
        .as_deref()
        .and_then(|b| CanonicalUrl::parse(b, Some(url), policy).ok())
        .unwrap_or_else(|| url.clone());
    html.anchors
        .iter()
        .filter_map(move |href| CanonicalUrl::parse(href, Some(&base), policy).ok())
}

impl Walk<'_> {
    fn push(&mut self, url: CanonicalUrl, d: u32, front: bool) {
        if !admissible(url.as_str()) || self.depth.get(url.as_str()).is_some_and(|&best| best <= d)
        {
            return;
        }
        self.depth.insert(url.as_str().to_string(), d);
        if front {
            self.queue.push_front((url, d));
        } else {
            self.queue.push_back((url, d));
        }
    }

    fn visit(&mut self, url: &CanonicalUrl, d: u32) {
        let Some(hi) = self.world.lookup(url.host()) else {
            return;
        };
        let Ok(parsed) = url::Url::parse(url.as_str()) else {
            return;
        };
        if parsed.port().is_some() || parsed.scheme() != "http" || !self.allowed(hi, url, d) {
            return;
        }
        match route(self.world, hi, parsed.path(), parsed.query()) {
            Resource::Html(html) => self.page(url, d, &html),
            Resource::Redirect { location, .. } => {
                if let Ok(target) = CanonicalUrl::parse(&location, Some(url), &self.policy) {
                    self.push(target, d, true);
                }
            }
            _ => {}
        }
    }

    /// Whether robots.txt of host `hi` lets `url` be fetched (read on first use).
    fn allowed(&mut self, hi: u32, url: &CanonicalUrl, d: u32) -> bool {
        if !self.robots.contains_key(&hi) {
            self.read_robots(hi, d);
        }
        match &self.robots[&hi] {
            _ if !self.opts.obey_robots => true,
            Some(robot) => robot.allowed(url.as_str()),
            None => false,
        }
    }

    /// Lists an HTML page and queues its links one hop deeper.
    fn page(&mut self, url: &CanonicalUrl, d: u32, html: &Html) {
        if self.opts.include_noindex || !html.noindex {
            self.pages.insert(url.as_str().to_string());
        }
        if html.nofollow || d >= self.opts.max_depth {
            return;
        }
        let targets: Vec<CanonicalUrl> = anchor_targets(html, url, &self.policy).collect();
        for target in targets {
            self.push(target, d + 1, false);
        }
    }

    /// Reads host `hi`'s robots.txt (first visit, at depth `d`) and its sitemaps.
    fn read_robots(&mut self, hi: u32, d: u32) {
        let robot = match route(self.world, hi, "/robots.txt", None) {
            Resource::Robots(text) => Robot::new(&self.opts.user_agent, text.as_bytes()).ok(),
            Resource::NotFound => Robot::new(&self.opts.user_agent, b"").ok(),
            _ => None,
        };
        let has_robots = robot.is_some();
        self.robots.insert(hi, robot);
        if self.opts.follow_sitemaps && has_robots && d < self.opts.max_depth {
            for loc in sitemap_urls(self.world, hi) {
                if let Ok(url) = CanonicalUrl::parse(&loc, None, &self.policy) {
                    self.push(url, d + 1, false);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admissible_limits() {
        assert!(admissible("http://a.sim/loop/more/more/"));
        assert!(!admissible("http://a.sim/loop/more/more/more/"));
        assert!(!admissible("http://a.sim/x/a/x/b/x"));
        assert!(admissible("http://a.sim/x/?q=/x/x/x"));
        let long = format!("http://a.sim/{}", "a".repeat(MAX_URL_LEN));
        assert!(!admissible(&long));
    }
}
