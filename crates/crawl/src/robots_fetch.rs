//! Getting robots.txt (once per origin, one fetch at a time per origin) and
//! the sitemaps it announces.
//!
//! Both files are fetched following redirects, up to [`MAX_FILE_REDIRECTS`]
//! (RFC 9309 §2.3.1.2 asks crawlers to follow at least five, across hosts
//! too: a site moved to `https://` or to `www.` redirects its robots.txt).
//! Each hop waits for its own host's politeness gate and goes through the
//! fetcher's address guard. A chain that is longer, loops or has no usable
//! `Location` ends at its last 3xx response, which counts as robots.txt
//! "unavailable" (everything allowed), and as a failed sitemap fetch.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::CrawlError;
use crate::discover::discover;
use crate::fetch::Fetched;
use crate::gate::Gates;
use crate::robots::{CACHE_TTL, MAX_ROBOTS_BYTES, Robots};
use crate::robots_cache::RobotsCache;
use crate::robots_store::SavedRobots;
use crate::run::{PageGet, Shared};
use crate::sitemap::{self, Sitemap};
use crate::stats::WARNED_ROBOTS;

/// Most sitemap files fetched per origin (index files included).
pub const MAX_SITEMAPS_PER_ORIGIN: usize = 50;
/// Most redirects followed to reach a robots.txt or sitemap file.
pub const MAX_FILE_REDIRECTS: usize = 5;

/// What [`get_following`] came to.
enum FileGet {
    /// The last response of the chain and the URL that gave it (boxed:
    /// the response is large beside the other variant).
    Got(Box<Fetched>, url::Url),
    /// A hop's host has its turn more than the visit's time left away (or
    /// the crawl stops): the visit is handed back for this long.
    Later(Duration),
}

/// Time left until `deadline`.
fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// GET `url` as [`Shared::polite_get`] does, each hop waiting for its
/// host's turn until `deadline` at most, following redirects (see the
/// module doc). `hop_allowed` says whether a hop's host may be asked; a
/// refused hop ends the chain at the response that pointed to it.
async fn get_following(
    sh: &Shared,
    url: &str,
    cap: usize,
    deadline: Instant,
    hop_allowed: impl Fn(&str) -> bool,
) -> Result<FileGet, CrawlError> {
    let mut url = url::Url::parse(url).map_err(|e| CrawlError::Config(format!("{url}: {e}")))?;
    let mut asked = vec![url.to_string()];
    loop {
        let host = url.host_str().unwrap_or("").to_string();
        let resp = match sh
            .polite_get(&host, url.as_str(), cap, left(deadline))
            .await
        {
            PageGet::Done(resp) => resp?,
            PageGet::HandBack(ahead) => return Ok(FileGet::Later(ahead)),
        };
        if !(300..=399).contains(&resp.status) || asked.len() > MAX_FILE_REDIRECTS {
            return Ok(FileGet::Got(Box::new(resp), url));
        }
        let next = (resp.header("location"))
            .and_then(|l| url.join(l.trim()).ok())
            .filter(|n| matches!(n.scheme(), "http" | "https"))
            .filter(|n| hop_allowed(n.host_str().unwrap_or("")))
            .filter(|n| !asked.iter().any(|a| a == n.as_str()));
        match next {
            Some(n) => {
                asked.push(n.to_string());
                url = n;
            }
            None => return Ok(FileGet::Got(Box::new(resp), url)),
        }
    }
}

/// The robots.txt outcome for `url`'s origin, fetching it if needed. The
/// first fetch of an origin at depth `depth` also reads its sitemaps,
/// inside the lease of the URL being visited (`CrawlConfig::lease` is long
/// enough for [`MAX_SITEMAPS_PER_ORIGIN`] files): a crawl killed before
/// they are all read has not settled that URL, so the next run visits it,
/// fetches robots.txt and reads them again.
///
/// Every wait (for the origin's lock, for a host's turn) ends by
/// `deadline`, the visit's share of its lease, and when the crawl stops.
/// `Err(wait)` when one did not come in time: the visit is to be handed
/// back for `wait`, and nothing of this try is remembered (not in the
/// cache, not in `robots.db`), so the next visit fetches robots.txt and
/// reads every sitemap again. A host blocked for an hour by a 429, or a
/// Ctrl-C, thus no longer holds a visit waiting at robots.txt or at a
/// sitemap past its lease or past the stop.
pub async fn robots_for(
    sh: &Shared,
    url: &url::Url,
    depth: u32,
    deadline: Instant,
) -> Result<Arc<Robots>, Duration> {
    let origin = url.origin().ascii_serialization();
    if let Some(r) = sh.robots.get(&origin) {
        return Ok(r);
    }
    // One fetch per origin at a time: the others wait for its outcome.
    let lock = {
        let mut m = sh.robots_locks.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(origin.clone()).or_default().clone()
    };
    let robots = match tokio::time::timeout_at(deadline.into(), lock.lock()).await {
        Ok(_guard) => robots_locked(sh, url, depth, origin.clone(), deadline).await,
        // Another visit is still at it: this one comes back later.
        Err(_) => Err(Duration::ZERO),
    };
    // The lock is forgotten once no task holds it (the map would otherwise
    // keep one per origin ever seen); clones are taken under the map's lock.
    let mut m = sh.robots_locks.lock().unwrap_or_else(|p| p.into_inner());
    if Arc::strong_count(&lock) == 2 {
        m.remove(&origin);
    }
    robots
}

/// [`robots_for`] under the origin's lock.
async fn robots_locked(
    sh: &Shared,
    url: &url::Url,
    depth: u32,
    origin: String,
    deadline: Instant,
) -> Result<Arc<Robots>, Duration> {
    if let Some(r) = sh.robots.get(&origin) {
        return Ok(r);
    }
    // Fetched by this crawl before (its sitemaps read then), and since
    // dropped from the bounded cache or never loaded into it.
    let now = crate::queue::now_s();
    if let Some(e) = sh.robots_store.load(&origin, now) {
        let agent = &sh.robots_agent;
        return Ok(restore(
            &sh.robots,
            &sh.gates,
            agent,
            sh.cfg.politeness,
            &e,
            now,
        ));
    }
    let host = url.host_str().unwrap_or("");
    let mut saved = SavedRobots {
        origin: origin.clone(),
        status: 0,
        body: Vec::new(),
        fetched_at: crate::queue::now_s(),
    };
    let mut robots_url = url::Url::parse(&format!("{origin}/robots.txt")).ok();
    let fetched = match &robots_url {
        // Its own cap, not the page cap: RFC 9309 asks for at least
        // 500 KiB to be parsed, and nothing past that is used.
        Some(at) => get_following(sh, at.as_str(), MAX_ROBOTS_BYTES, deadline, |_| true).await,
        None => Err(CrawlError::Config(format!(
            "no robots.txt URL for {origin}"
        ))),
    };
    let robots = match fetched {
        Ok(FileGet::Got(resp, at)) => {
            robots_url = Some(at);
            (saved.status, saved.body) = (resp.status, resp.body);
            Robots::from_response(saved.status, &saved.body, &sh.robots_agent)
        }
        Ok(FileGet::Later(wait)) => return Err(wait),
        // The page fetch will be refused and recorded by the same guard; a
        // redirect to a refused address leaves robots.txt unavailable (4xx).
        Err(CrawlError::Blocked { .. }) => Robots::AllowAll,
        Err(e) => {
            // Unreachable: the host's URLs wait (`--robots-retry`); the
            // cause (a certificate, a refused connection) is said here.
            let n = sh.counters.robots_failures.fetch_add(1, Ordering::Relaxed) + 1;
            match n.cmp(&WARNED_ROBOTS) {
                std::cmp::Ordering::Less => {
                    tracing::warn!("robots.txt of {origin} unreachable: {e}")
                }
                std::cmp::Ordering::Equal => tracing::warn!(
                    "robots.txt of {origin} unreachable: {e} (later failures of robots.txt are logged at debug level)"
                ),
                std::cmp::Ordering::Greater => {
                    tracing::debug!("robots.txt of {origin} unreachable: {e}")
                }
            }
            Robots::from_response(0, b"", &sh.robots_agent)
        }
    };
    // Fetches in a row without an answer give the host up on robots.txt
    // (`crate::worker`), counted by host: http and https alike.
    if matches!(robots, Robots::Unreachable) {
        sh.health.robots_failed(host);
    } else {
        sh.health.robots_answered(host);
    }
    let persist = !matches!(robots, Robots::Unreachable) && saved.status != 0;
    if let Some(d) = robots.crawl_delay() {
        sh.gates.raise_delay(sh.politeness_unit(host), d);
    }
    // `Sitemap:` lines should be absolute; a relative one is resolved
    // against robots.txt (where its redirects ended), as a browser would.
    let mut maps: Vec<String> = (robots.sitemaps().iter())
        .filter_map(|m| resolve(robots_url.as_ref(), m))
        .collect();
    if sh.cfg.sitemaps == crate::config::Sitemaps::RobotsAndGuess
        && !matches!(robots, Robots::Unreachable)
    {
        maps.push(format!("{origin}/sitemap.xml"));
    }
    if sh.cfg.sitemaps != crate::config::Sitemaps::Off
        && depth < sh.cfg.max_depth
        && !maps.is_empty()
    {
        match read_sitemaps(sh, maps, depth + 1, deadline).await {
            Ok(None) => {}
            // Not all read: neither cached nor remembered, so the visit
            // that comes back reads them all (the URLs already found
            // are known to the frontier by then).
            Ok(Some(wait)) => return Err(wait),
            Err(e) => tracing::warn!("sitemaps of {origin}: {e}"),
        }
    }
    // After the sitemaps: a crawl killed or stopped before this point
    // fetches robots.txt and reads them again.
    let robots = sh.robots.put(&origin, robots, sh.cfg.robots_retry);
    if persist {
        sh.robots_store.save(&saved);
    }
    Ok(robots)
}

/// Puts a remembered outcome `e` (from `robots.db`) into `cache` for what is
/// left of its 24 hours and applies its `Crawl-delay` to the gates.
pub fn restore(
    cache: &RobotsCache,
    gates: &Gates,
    agent: &str,
    politeness: mgz_url::QueueKeyKind,
    e: &SavedRobots,
    now_s: u64,
) -> Arc<Robots> {
    let robots = Robots::from_response(e.status, &e.body, agent);
    if let (Some(d), Ok(u)) = (robots.crawl_delay(), url::Url::parse(&e.origin)) {
        let host = u.host_str().unwrap_or("");
        gates.raise_delay(mgz_url::host_queue_key(host, politeness), d);
    }
    let age = now_s.saturating_sub(e.fetched_at);
    let ttl = Duration::from_secs(CACHE_TTL.as_secs().saturating_sub(age));
    cache.put_for(&e.origin, robots, ttl)
}

/// `map` as an absolute URL, resolved against `base` when it is relative.
fn resolve(base: Option<&url::Url>, map: &str) -> Option<String> {
    url::Url::options()
        .base_url(base)
        .parse(map)
        .ok()
        .map(String::from)
}

/// Reads the sitemap files `todo` (and those their indexes list), each
/// waiting for its host's turn until `deadline` at most: `Some(wait)` when
/// the crawl stopped or a turn was further off (`wait` until it) before
/// they were all read.
async fn read_sitemaps(
    sh: &Shared,
    mut todo: Vec<String>,
    depth: u32,
    deadline: Instant,
) -> Result<Option<Duration>, CrawlError> {
    let mut done = std::collections::HashSet::new();
    while let Some(map) = todo.pop() {
        if sh.stopping() {
            return Ok(Some(Duration::ZERO));
        }
        if done.len() >= MAX_SITEMAPS_PER_ORIGIN || !done.insert(map.clone()) {
            continue;
        }
        let Ok(u) = url::Url::parse(&map) else {
            continue;
        };
        let host = u.host_str().unwrap_or("");
        if !sh.filter.host_in_scope(host) {
            continue;
        }
        let in_scope = |h: &str| sh.filter.host_in_scope(h);
        let cap = sitemap::MAX_SITEMAP_BYTES;
        let (mut resp, u) = match get_following(sh, &map, cap, deadline, in_scope).await {
            Ok(FileGet::Got(r, at)) if r.status == 200 => (r, at),
            Ok(FileGet::Later(wait)) => return Ok(Some(wait)),
            _ => {
                sh.counters.error("sitemap_fetch");
                continue;
            }
        };
        // A gzip file's inflated text (up to 50 MB) counts in the body budget too.
        let (parsed, cut) = match resp.lease.as_mut() {
            Some(lease) => sitemap::parse_covered(&resp.body, lease).await,
            None => sitemap::parse(&resp.body),
        };
        let truncated = resp.truncated;
        drop(resp);
        if truncated || cut {
            // Cut at 50 MB (sent or inflated): what was read is still used.
            sh.counters.error("sitemap_truncated");
        }
        match parsed {
            Ok(Sitemap::Index(more)) => {
                todo.extend(more.iter().filter_map(|m| resolve(Some(&u), m)));
            }
            Ok(Sitemap::Urls(urls)) => {
                // Relative locations, like relative `Sitemap:` lines, resolve
                // against the file that lists them.
                let base = mgz_url::CanonicalUrl::parse(u.as_str(), None, &sh.cfg.policy).ok();
                discover(sh, base.as_ref(), &urls, depth, Default::default()).await?;
            }
            Err(_) => sh.counters.error("sitemap_parse"),
        }
    }
    Ok(None)
}
