//! Getting robots.txt (once per origin, one fetch at a time per origin) and
//! the sitemaps it announces.

use std::sync::Arc;

use crate::CrawlError;
use crate::discover::discover;
use crate::robots::Robots;
use crate::robots_store::SavedRobots;
use crate::run::Shared;
use crate::sitemap::{self, Sitemap};

/// Most sitemap files fetched per origin (index files included).
pub const MAX_SITEMAPS_PER_ORIGIN: usize = 50;

/// The robots.txt outcome for `url`'s origin, fetching it if needed. The
/// first fetch of an origin at depth `depth` also reads its sitemaps.
pub async fn robots_for(sh: &Shared, url: &url::Url, depth: u32) -> Arc<Robots> {
    let origin = url.origin().ascii_serialization();
    if let Some(r) = sh.robots.get(&origin) {
        return r;
    }
    let lock = {
        let mut m = sh.robots_locks.lock().unwrap_or_else(|p| p.into_inner());
        m.entry(origin.clone()).or_default().clone()
    };
    let _guard = lock.lock().await;
    if let Some(r) = sh.robots.get(&origin) {
        return r;
    }
    let host = url.host_str().unwrap_or("");
    let mut saved = SavedRobots {
        origin: origin.clone(),
        status: 0,
        body: Vec::new(),
        fetched_at: crate::queue::now_s(),
    };
    let robots = match sh.polite_get(host, &format!("{origin}/robots.txt")).await {
        Ok(resp) => {
            (saved.status, saved.body) = (resp.status, resp.body);
            Robots::from_response(saved.status, &saved.body, &sh.robots_agent)
        }
        // The page fetch will be refused and recorded by the same guard.
        Err(CrawlError::Blocked { .. }) => Robots::AllowAll,
        Err(_) => Robots::from_response(0, b"", &sh.robots_agent),
    };
    let persist = !matches!(robots, Robots::Unreachable) && saved.status != 0;
    if let Some(d) = robots.crawl_delay() {
        sh.gates.raise_delay(host, d);
    }
    // `Sitemap:` lines should be absolute; a relative one is resolved
    // against robots.txt, as a browser would resolve it.
    let robots_url = url::Url::parse(&format!("{origin}/robots.txt")).ok();
    let mut maps: Vec<String> = (robots.sitemaps().iter())
        .filter_map(|m| resolve(robots_url.as_ref(), m))
        .collect();
    if sh.cfg.sitemaps == crate::config::Sitemaps::RobotsAndGuess
        && !matches!(robots, Robots::Unreachable)
    {
        maps.push(format!("{origin}/sitemap.xml"));
    }
    let robots = sh.robots.put(&origin, robots, sh.cfg.robots_retry);
    if sh.cfg.sitemaps != crate::config::Sitemaps::Off
        && depth < sh.cfg.max_depth
        && !maps.is_empty()
        && let Err(e) = read_sitemaps(sh, maps, depth + 1).await
    {
        tracing::warn!("sitemaps of {origin}: {e}");
    }
    // After the sitemaps: a crawl killed before this point reads them again.
    if persist {
        sh.robots_store.save(&saved);
    }
    robots
}

/// `map` as an absolute URL, resolved against `base` when it is relative.
fn resolve(base: Option<&url::Url>, map: &str) -> Option<String> {
    url::Url::options()
        .base_url(base)
        .parse(map)
        .ok()
        .map(String::from)
}

async fn read_sitemaps(sh: &Shared, mut todo: Vec<String>, depth: u32) -> Result<(), CrawlError> {
    let mut done = std::collections::HashSet::new();
    while let Some(map) = todo.pop() {
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
        let resp = match sh
            .polite_get_capped(host, &map, sitemap::MAX_SITEMAP_BYTES)
            .await
        {
            Ok(r) if r.status == 200 => r,
            _ => {
                sh.counters.error("sitemap_fetch");
                continue;
            }
        };
        let (parsed, cut) = sitemap::parse(&resp.body);
        if resp.truncated || cut {
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
                let base = mgz_url::CanonicalUrl::parse(&map, None, &sh.cfg.policy).ok();
                discover(sh, base.as_ref(), &urls, depth, Default::default()).await?;
            }
            Err(_) => sh.counters.error("sitemap_parse"),
        }
    }
    Ok(())
}
