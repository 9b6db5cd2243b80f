//! From raw link targets to frontier items: canonicalise against the base,
//! apply scope, patterns and trap limits, drop in-page duplicates, charge the
//! host budget, and put the survivors. Every cut is counted. Page links
//! (a base given) already known to the frontier are skipped first, through
//! the cache of [`crate::known`].

use std::collections::HashSet;

use mgz_frontier::{Metadata, PutOutcome, UrlItem};
use mgz_url::{CanonicalUrl, QueueKeyKind, UrlError};

use crate::CrawlError;
use crate::run::Shared;
use crate::stats::Counters;
use crate::traps::{TrapKind, Verdict};

/// The keys of `hrefs` against `base` in the cache of [`crate::known`]
/// (none without a base, or for a base that is not http(s)).
fn link_keys(base: Option<&CanonicalUrl>, hrefs: &[String]) -> Vec<Option<u128>> {
    match base.and_then(|b| crate::known::base_dir(b.as_url())) {
        Some(d) => hrefs.iter().map(|h| crate::known::key(d, h)).collect(),
        None => Vec::new(),
    }
}

/// Keeps `hrefs` (resolved against `base`) at `depth` in the crawl's edge,
/// those the scope, patterns and trap limits admit: the links of a page at
/// `--max-depth`, for a deeper rerun ([`crate::edge`]). Counted nowhere: the
/// run does not queue them. Links the frontier is known to have (the cache
/// of [`crate::known`]) are left out.
pub fn keep_edge(
    sh: &Shared,
    base: Option<&CanonicalUrl>,
    hrefs: &[String],
    depth: u32,
) -> Result<usize, CrawlError> {
    let Some(edge) = &sh.edge else {
        return Ok(0);
    };
    let cached = sh.known_links.contains_each(&link_keys(base, hrefs));
    let mut raw: HashSet<&str> = HashSet::with_capacity(hrefs.len());
    let mut urls = Vec::new();
    for (i, href) in hrefs.iter().enumerate() {
        if cached.get(i).copied().unwrap_or(false) || !raw.insert(href.as_str()) {
            continue;
        }
        let Ok(canon) = CanonicalUrl::parse(href, base, &sh.cfg.policy) else {
            continue;
        };
        if matches!(sh.filter.judge(canon.as_url()), Verdict::Admit) {
            urls.push(canon);
        }
    }
    edge.keep(depth, urls.iter().map(CanonicalUrl::as_str))
}

/// Queues `hrefs` (resolved against `base`) at `depth` with `meta`; returns
/// the URLs that were already known.
pub async fn discover(
    sh: &Shared,
    base: Option<&CanonicalUrl>,
    hrefs: &[String],
    depth: u32,
    meta: Metadata,
) -> Result<Vec<String>, CrawlError> {
    let c = &sh.counters;
    // Links other pages of the same directory had, known to the frontier.
    let keys = link_keys(base, hrefs);
    let cached = sh.known_links.contains_each(&keys);
    // Pages repeat their navigation links: a raw target seen admitted
    // before is a duplicate without paying for canonicalisation again.
    let mut raw: HashSet<&str> = HashSet::with_capacity(hrefs.len());
    let mut local: HashSet<String> = HashSet::with_capacity(hrefs.len());
    let mut items = Vec::new();
    let mut hosts = Vec::new();
    let mut item_keys = Vec::new();
    for (i, href) in hrefs.iter().enumerate() {
        if raw.contains(href.as_str()) || cached.get(i).copied().unwrap_or(false) {
            Counters::bump(&c.duplicates_skipped);
            continue;
        }
        let canon = match CanonicalUrl::parse(href, base, &sh.cfg.policy) {
            Ok(u) => u,
            Err(UrlError::TooLong { .. }) => {
                c.trap(TrapKind::Length);
                continue;
            }
            Err(_) => continue,
        };
        match sh.filter.judge(canon.as_url()) {
            Verdict::Admit => {}
            Verdict::OutOfScope => continue,
            Verdict::Trap(kind) => {
                c.trap(kind);
                continue;
            }
        }
        raw.insert(href.as_str());
        if !local.insert(canon.as_str().to_string()) {
            Counters::bump(&c.duplicates_skipped);
            continue;
        }
        if !sh.filter.try_charge(canon.host()) {
            c.trap(TrapKind::HostBudget);
            continue;
        }
        hosts.push(canon.host().to_string());
        item_keys.push(keys.get(i).copied().flatten());
        // With `--politeness domain` the URL's queue is its registrable
        // domain; `None` is the frontier's default, the host.
        let key = (sh.cfg.politeness != QueueKeyKind::Host)
            .then(|| canon.queue_key(sh.cfg.politeness).to_string());
        items.push(UrlItem {
            url: canon.as_str().to_string(),
            key,
            depth,
            metadata: meta.clone(),
            ..UrlItem::default()
        });
    }
    let (items, outcomes) = sh.queue.discover(items).await?;
    let now_known = outcomes.iter().zip(&item_keys).filter_map(|(o, k)| {
        matches!(o, PutOutcome::New | PutOutcome::Seen | PutOutcome::Updated)
            .then_some(*k)
            .flatten()
    });
    sh.known_links.insert_all(now_known);
    let mut known = Vec::new();
    for ((o, item), host) in outcomes.iter().zip(items).zip(hosts) {
        match o {
            PutOutcome::New => {
                Counters::bump(&c.queued);
                c.queued_url_bytes
                    .fetch_add(item.url.len() as u64, std::sync::atomic::Ordering::Relaxed);
                continue;
            }
            PutOutcome::Seen | PutOutcome::Updated => {
                Counters::bump(&c.duplicates_skipped);
                known.push(item.url);
            }
            PutOutcome::Rejected(_) => c.error("rejected_url"),
            _ => {}
        }
        sh.filter.refund(&host);
    }
    Ok(known)
}
