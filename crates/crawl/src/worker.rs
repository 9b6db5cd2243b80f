//! One lease, start to finish: robots.txt, politeness gate, fetch, then by
//! status — page (extract, discover links, store), redirect (send the target
//! back through discovery), 429/503 (block the host's queue), 5xx and network
//! errors (retry with back-off, at most 3 times), others recorded.
//!
//! Order of effects for a page, so SIGKILL at any point loses nothing
//! acknowledged: links are put (durable) → the row is stored (committed) →
//! the URL is completed in the frontier. A URL served again after a kill is
//! found in the store and completed without a fetch.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use mgz_frontier::{Metadata, UrlRecord};
use mgz_url::{CanonicalUrl, Policy};
use sha2::{Digest, Sha256};

use crate::discover::{discover, keep_edge};
use crate::fetch::{Fetched, retry_after};
use crate::queue::is_retrying;
use crate::robots::Robots;
use crate::run::{PageGet, Shared, UNSLOTTED_AT};
use crate::stats::Counters;
use crate::store::PageRow;
use crate::{CrawlError, extract, terms};

/// Retries for network errors and 5xx.
pub const MAX_RETRIES: u32 = 3;
/// Retries of a 429/503 before the URL is recorded as failed.
pub const MAX_THROTTLED: u32 = 3;
/// Longest redirect chain followed.
pub const MAX_HOPS: usize = 5;

/// What to do with the lease afterwards.
pub enum Next {
    /// Done with this URL for good.
    Complete,
    /// Serve it again at this time (seconds since the epoch).
    Retry(u64),
}

fn meta_num(m: &Metadata, key: &str) -> u32 {
    m.get(key)
        .and_then(|v| v.first())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

pub(crate) fn bump_meta(m: &mut Metadata, key: &str) -> u32 {
    let n = meta_num(m, key);
    m.insert(key.to_string(), vec![(n + 1).to_string()]);
    n
}

/// The whole second (since the epoch) from which a URL or queue waiting
/// `d` (at least a second) may be served again.
fn later(d: Duration) -> u64 {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
    later_at(now_ms, d)
}

/// [`later`] at `now_ms`: rounded up, so the wait is never shorter than
/// `d` (the frontier serves from `until × 1000` ms). Rounding `now` down
/// first, as until session 41, cut up to a second off it: a `Retry-After:
/// 1` was honoured after 0–1 s.
fn later_at(now_ms: u64, d: Duration) -> u64 {
    let wait_ms = u64::try_from(d.max(Duration::from_secs(1)).as_millis()).unwrap_or(u64::MAX);
    now_ms.saturating_add(wait_ms).div_ceil(1000)
}

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn base_row(rec: &UrlRecord, status: u16) -> PageRow {
    PageRow {
        url: rec.url.clone(),
        final_url: rec.url.clone(),
        status,
        depth: rec.depth,
        fetched_at: now_rfc3339(),
        ..PageRow::default()
    }
}

/// Handles one lease and settles it in the frontier; `slot` is the task's
/// fetch slot (see [`Shared::fetch_slots`]).
pub async fn process(
    sh: Arc<Shared>,
    mut rec: UrlRecord,
    slot: OwnedSemaphorePermit,
) -> Result<(), CrawlError> {
    let was_retrying = is_retrying(&rec.metadata);
    let mut slot = Some(slot);
    match handle(&sh, &mut rec, &mut slot).await? {
        Next::Complete => sh.queue.complete(rec, was_retrying).await,
        Next::Retry(at) => {
            if !was_retrying && is_retrying(&rec.metadata) {
                sh.queue.set_retrying(rec.depth, true);
            }
            sh.queue.reschedule(rec, at).await
        }
    }
}

async fn handle(
    sh: &Shared,
    rec: &mut UrlRecord,
    slot: &mut Option<OwnedSemaphorePermit>,
) -> Result<Next, CrawlError> {
    // The patterns judged every URL when it was found, but a rerun may
    // bring new ones (a trap noticed mid-crawl, excluded on the rerun): the
    // URLs queued before are judged again, and those rejected are settled
    // unfetched, as they would not have been queued.
    if sh.filter.has_patterns() && !sh.filter.patterns_admit(&rec.url) {
        Counters::bump(&sh.counters.unmatched_queued);
        return Ok(Next::Complete);
    }
    // Only a resumed crawl can be served a URL it already stored.
    if sh.store.rows_at_open() > 0 && sh.store.contains(&rec.url).await {
        Counters::bump(&sh.counters.duplicates_skipped);
        return Ok(Next::Complete);
    }
    let Ok(url) = url::Url::parse(&rec.url) else {
        sh.counters.error("bad_url");
        return Ok(Next::Complete);
    };
    let host = url.host_str().unwrap_or("").to_string();
    if sh.health.is_dead(&host) {
        sh.counters.error("host_unreachable");
        let mut row = base_row(rec, 0);
        row.error = Some(format!(
            "host unreachable: given up after {} network failures in a row",
            sh.cfg.max_host_failures
        ));
        sh.store.store(row).await?;
        return Ok(Next::Complete);
    }
    // A host's turn may come after this lease ends (a long delay, many of
    // its URLs leased at once, a 429's Retry-After): the frontier would
    // serve the URL again and it would be fetched twice. The visit's waits
    // (robots.txt, sitemaps, the page) end by half the lease, the other
    // half being for the requests themselves (`config::lease_for`); the URL
    // is handed back until the host's turn instead.
    let now = std::time::Instant::now();
    // A lease too long for the clock (a library caller's `Duration::MAX`):
    // a year is as good as forever here.
    let deadline = (now.checked_add(sh.cfg.lease / 2))
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600));
    if !sh.cfg.ignore_robots {
        if sh.health.robots_given_up(&host) {
            sh.counters.error("robots_unreachable");
            Counters::bump(&sh.counters.robots_excluded);
            return Ok(Next::Complete);
        }
        let robots = match crate::robots_fetch::robots_for(sh, &url, rec.depth, deadline).await {
            Ok(robots) => robots,
            Err(ahead) => {
                tracing::debug!("{url}: handed back for {ahead:?}, before robots.txt");
                return Ok(hand_back(sh, rec, ahead));
            }
        };
        if !robots.allowed(url.as_str()) {
            return robots_refused(sh, rec, &host, &robots).await;
        }
    }
    if wait_unslotted(sh, &host, deadline, slot).await {
        // Fetch slots were so busy that the lease's time for waits ran
        // out: the frontier may serve it again soon, so it goes back.
        return Ok(hand_back(sh, rec, Duration::ZERO));
    }
    let max_wait = deadline.saturating_duration_since(std::time::Instant::now());
    let fetched = match sh.page_get(&host, url.as_str(), max_wait).await {
        PageGet::HandBack(ahead) => {
            tracing::debug!("{url}: handed back for {ahead:?}, its host's next slot");
            return Ok(hand_back(sh, rec, ahead));
        }
        PageGet::Done(fetched) => fetched,
    };
    match fetched {
        Err(e) => {
            if matches!(e.kind(), "connect" | "timeout" | "tls") && sh.health.failed(&host) {
                tracing::warn!(
                    "giving {host} up: {} network failures in a row, the last: {e}",
                    sh.cfg.max_host_failures
                );
                drain(sh, &rec.key, &host).await?;
            }
            on_error(sh, rec, e).await
        }
        Ok(resp) => {
            sh.health.answered(&host);
            on_response(sh, rec, resp).await
        }
    }
}

/// Waits for `host`'s next turn without holding a fetch slot, when it is
/// [`UNSLOTTED_AT`] or more away and comes before `deadline` (a later one
/// is handed back by the page's GET) and a waiting place is free
/// ([`Shared::waiting`]); then takes a slot again. The GET that follows
/// reserves the host's turn as always, so the spacing a server sees does
/// not change: only what the crawl does meanwhile. A broad polite crawl
/// waits once per host (its first page comes one delay after its
/// robots.txt), and with a slot held each such wait took a slot for a
/// delay: 100,000 hosts at `--delay 1000` ran at 433 pages/s
/// (docs/BENCHMARKS.md, "Session 57"). A stop ends the wait at once.
/// Returns whether the slot came back only after `deadline`.
async fn wait_unslotted(
    sh: &Shared,
    host: &str,
    deadline: std::time::Instant,
    slot: &mut Option<OwnedSemaphorePermit>,
) -> bool {
    let now = std::time::Instant::now();
    let ahead = sh.gates.ahead(sh.politeness_unit(host));
    if ahead < UNSLOTTED_AT || now + ahead > deadline {
        return false;
    }
    let Ok(place) = sh.waiting.try_acquire() else {
        return false;
    };
    drop(slot.take());
    sh.rest_until(now + ahead).await;
    *slot = sh.fetch_slots.clone().acquire_owned().await.ok();
    drop(place);
    std::time::Instant::now() > deadline
}

/// Hands a URL back to the frontier until a host's turn, `ahead` away. A
/// turn further off than the crawl waits for retries (`max_retry_wait`: a
/// 429's hour-long block, say) makes the URL a retry (`far_turn`), so it
/// does not keep a crawl from ending, as the 429's own URL does not: it
/// stays in the state for a later run. A stop's hand-back marks nothing.
fn hand_back(sh: &Shared, rec: &mut UrlRecord, ahead: Duration) -> Next {
    if !sh.stopping() && ahead > sh.cfg.max_retry_wait {
        bump_meta(&mut rec.metadata, "far_turn");
    }
    Next::Retry(later(ahead))
}

/// A URL robots.txt keeps out; when robots.txt could not be had, asked
/// again `--robots-retries` times first, `--robots-retry` apart: by this
/// URL, or by the host's other URLs ([`HostHealth::robots_hopeless`]: a
/// host's URLs are served in order, a retried one after all the others,
/// so each URL waiting out its own retries took three passes of the
/// whole queue). Then the host is given up on robots.txt: its other URLs
/// are settled as they are served, and served at once ([`drain`]).
///
/// [`HostHealth::robots_hopeless`]: crate::health::HostHealth::robots_hopeless
async fn robots_refused(
    sh: &Shared,
    rec: &mut UrlRecord,
    host: &str,
    robots: &Robots,
) -> Result<Next, CrawlError> {
    if matches!(robots, Robots::Unreachable) {
        let span = sh.cfg.robots_retry.saturating_mul(sh.cfg.robots_retries);
        if meta_num(&rec.metadata, "robots_tries") < sh.cfg.robots_retries
            && !sh.health.robots_hopeless(host, sh.cfg.robots_retries, span)
        {
            bump_meta(&mut rec.metadata, "robots_tries");
            return Ok(Next::Retry(later(sh.cfg.robots_retry)));
        }
        sh.counters.error("robots_unreachable");
        if sh.health.give_up_robots(host) {
            tracing::warn!(
                "giving {host} up: its robots.txt could not be fetched, asked {} times",
                sh.cfg.robots_retries + 1
            );
            drain(sh, &rec.key, host).await?;
        }
    }
    Counters::bump(&sh.counters.robots_excluded);
    Ok(Next::Complete)
}

/// Lets the frontier serve the rest of a host given up (`host`, queue
/// `key`) without its politeness delay: each of its URLs is then settled
/// without a request as soon as it is leased, where one URL per `--delay`
/// took an hour for a thousand. Only when the queue is the host's own
/// (`--politeness host`, the default): a domain's queue keeps its delay
/// for its other hosts. The crawler's gates still space every request, so
/// no host is asked faster for it.
async fn drain(sh: &Shared, key: &str, host: &str) -> Result<(), CrawlError> {
    if key == host {
        sh.queue.set_queue_delay(key.to_string(), 0).await?;
    }
    Ok(())
}

fn backoff(sh: &Shared, tries: u32) -> Duration {
    sh.cfg.backoff * 2u32.saturating_pow(tries.min(10))
}

async fn on_error(sh: &Shared, rec: &mut UrlRecord, e: CrawlError) -> Result<Next, CrawlError> {
    // Neither a refused address nor a TLS failure (a certificate not
    // trusted, expired or for another name; a handshake the server
    // refuses) changes by asking again: recorded at once.
    let retryable = !matches!(e, CrawlError::Blocked { .. }) && e.kind() != "tls";
    if retryable && meta_num(&rec.metadata, "tries") < MAX_RETRIES {
        let tries = bump_meta(&mut rec.metadata, "tries");
        return Ok(Next::Retry(later(backoff(sh, tries))));
    }
    sh.counters.error(e.kind());
    let mut row = base_row(rec, 0);
    row.error = Some(e.to_string());
    sh.store.store(row).await?;
    Ok(Next::Complete)
}

async fn on_response(sh: &Shared, rec: &mut UrlRecord, resp: Fetched) -> Result<Next, CrawlError> {
    Counters::bump(&sh.counters.pages_fetched);
    sh.counters
        .bytes
        .fetch_add(resp.body.len() as u64, std::sync::atomic::Ordering::Relaxed);
    // Before the page is stored or settled: a page the crawl acknowledged
    // has its records. A failed write (a full disk) stops the crawl with
    // this URL unsettled, fetched again when it resumes.
    if let Some(w) = &sh.warc {
        w.write_exchange(&rec.url, sh.fetcher.identity_headers(), &resp)?;
    }
    match resp.status {
        429 | 503 => throttled(sh, rec, &resp).await,
        500..=599 if meta_num(&rec.metadata, "tries") < MAX_RETRIES => {
            let tries = bump_meta(&mut rec.metadata, "tries");
            Ok(Next::Retry(later(backoff(sh, tries))))
        }
        300..=399 if resp.header("location").is_some() => redirect(sh, rec, &resp).await,
        200..=299 => page(sh, rec, resp).await,
        status => {
            sh.counters.error(&format!("http_{}xx", status / 100));
            record(sh, rec, &resp, None).await
        }
    }
}

async fn record(
    sh: &Shared,
    rec: &UrlRecord,
    resp: &Fetched,
    error: Option<String>,
) -> Result<Next, CrawlError> {
    let mut row = base_row(rec, resp.status);
    row.content_type = resp.header("content-type").map(str::to_string);
    row.bytes = resp.body.len() as u64;
    row.error = error;
    sh.store.store(row).await?;
    Ok(Next::Complete)
}

async fn throttled(sh: &Shared, rec: &mut UrlRecord, resp: &Fetched) -> Result<Next, CrawlError> {
    let tries = bump_meta(&mut rec.metadata, "throttled");
    let wait = resp
        .header("retry-after")
        .and_then(|v| retry_after(v, chrono::Utc::now()))
        .unwrap_or_else(|| backoff(sh, tries));
    let until = later(wait);
    // The frontier leases none of the host's URLs until then; the gate
    // holds back those leased already (`--per-host` above 1).
    if let Some(host) = url::Url::parse(&rec.url)
        .ok()
        .as_ref()
        .and_then(url::Url::host_str)
    {
        sh.gates
            .block(sh.politeness_unit(host), std::time::Instant::now() + wait);
    }
    sh.queue.block(rec.key.clone(), until).await?;
    if tries < MAX_THROTTLED {
        return Ok(Next::Retry(until));
    }
    sh.counters.error(&format!("http_{}", resp.status));
    record(sh, rec, resp, Some("throttled".into())).await
}

async fn redirect(sh: &Shared, rec: &UrlRecord, resp: &Fetched) -> Result<Next, CrawlError> {
    let location = resp.header("location").unwrap_or_default();
    let base = CanonicalUrl::parse(&rec.url, None, &sh.cfg.policy).ok();
    let Some(target) =
        base.and_then(|b| CanonicalUrl::parse(location, Some(&b), &sh.cfg.policy).ok())
    else {
        sh.counters.error("redirect_invalid");
        return record(sh, rec, resp, Some(format!("bad Location {location:?}"))).await;
    };
    let mut chain = rec.metadata.get("chain").cloned().unwrap_or_default();
    let mut row = base_row(rec, resp.status);
    row.final_url = target.as_str().to_string();
    if target.as_str() == rec.url || chain.iter().any(|c| c == target.as_str()) {
        sh.counters.error("redirect_loop");
        row.error = Some("redirect loop".into());
    } else if chain.len() + 1 > MAX_HOPS {
        sh.counters.error("redirect_hops");
        row.error = Some("too many redirects".into());
    } else {
        chain.push(rec.url.clone());
        let meta = Metadata::from([("chain".to_string(), chain)]);
        let target = target.as_str().to_string();
        let depth = sh.queue.effective_depth(rec);
        row.depth = depth;
        for known in discover(sh, None, &[target], depth, meta).await? {
            sh.queue.lower(known, depth).await?;
        }
    }
    sh.store.store(row).await?;
    Ok(Next::Complete)
}

fn is_html(content_type: Option<&str>, body: &[u8]) -> bool {
    match content_type {
        Some(ct) => {
            let ct = ct.to_ascii_lowercase();
            ct.starts_with("text/html") || ct.starts_with("application/xhtml")
        }
        None => body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<'),
    }
}

async fn page(sh: &Shared, rec: &UrlRecord, resp: Fetched) -> Result<Next, CrawlError> {
    let ct = resp.header("content-type").map(str::to_string);
    let mut row = base_row(rec, resp.status);
    row.content_type = ct.clone();
    row.bytes = resp.body.len() as u64;
    row.content_hash = Some(format!("{:x}", Sha256::digest(&resp.body)));
    row.error = resp.truncated.then(|| "truncated".to_string());
    if is_html(ct.as_deref(), &resp.body) {
        // Each `X-Robots-Tag` header adds its directives for this crawler.
        let xrobots = resp
            .header_all("x-robots-tag")
            .map(|v| extract::header_robots_directives(v, &sh.robots_agent))
            .fold((false, false), |a, b| (a.0 | b.0, a.1 | b.1));
        // A `Refresh` header (as browsers honour it) names a next page, like
        // `<meta http-equiv=refresh>`.
        let refresh = resp.header("refresh").and_then(extract::refresh_url);
        let refresh = refresh.map(str::to_string);
        let mut ex = parse(sh, resp.body, ct).await?;
        // The body is gone: its share of the budget goes back before the
        // links are queued and the row stored.
        drop(resp.lease);
        ex.links.extend(refresh);
        let (noindex, nofollow) = (ex.noindex || xrobots.0, ex.nofollow || xrobots.1);
        // A redirect may have found a shorter path to this page while it
        // was fetched (`Queue::lower`): its links are that much shallower.
        // The row keeps that depth too, as the frontier's record will.
        let depth = sh.queue.effective_depth(rec);
        row.depth = depth;
        // Past --max-depth the links are not queued; with a kept state they
        // are kept for a deeper rerun (`crate::edge`).
        let follow = depth < sh.cfg.max_depth;
        if !nofollow && (follow || sh.edge.is_some() || sh.cfg.store_links) {
            let page_url = CanonicalUrl::parse(&rec.url, None, &sh.cfg.policy).ok();
            let base = ex
                .base
                .as_deref()
                .and_then(|b| CanonicalUrl::parse(b, page_url.as_ref(), &sh.cfg.policy).ok());
            let base = base.or(page_url);
            if sh.cfg.store_links {
                row.links = link_targets(base.as_ref(), &ex.links, &sh.cfg.policy);
            }
            if follow {
                discover(sh, base.as_ref(), &ex.links, depth + 1, Metadata::new()).await?;
            } else if let Some(next) = depth.checked_add(1) {
                keep_edge(sh, base.as_ref(), &ex.links, next)?;
            }
        }
        fill_keywords(&mut row, ex, noindex);
    }
    sh.store.store(row).await?;
    Counters::bump(&sh.counters.pages_stored);
    Ok(Next::Complete)
}

/// The distinct canonical targets of `hrefs` against `base`, sorted (those
/// that do not parse or canonicalise are left out); the rows of the `links`
/// table (`--links`). A page repeats its navigation links, so a raw target
/// is canonicalised once.
fn link_targets(base: Option<&CanonicalUrl>, hrefs: &[String], policy: &Policy) -> Vec<String> {
    let mut raw = std::collections::HashSet::with_capacity(hrefs.len());
    let mut out: Vec<String> = hrefs
        .iter()
        .filter(|h| raw.insert(h.as_str()))
        .filter_map(|h| CanonicalUrl::parse(h, base, policy).ok())
        .map(|u| u.as_str().to_string())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Bodies up to this size are parsed on the task's own thread (well under a
/// millisecond); larger ones on the blocking pool, so a 10 MB page cannot
/// stall the fetches sharing a runtime worker.
pub const INLINE_PARSE: usize = 128 * 1024;

async fn parse(
    sh: &Shared,
    body: Vec<u8>,
    ct: Option<String>,
) -> Result<extract::Extracted, CrawlError> {
    let text = sh.cfg.keep_text;
    if body.len() <= INLINE_PARSE {
        let agent = &sh.robots_agent;
        return Ok(extract::extract_with(&body, ct.as_deref(), agent, text));
    }
    // As many large parses at once as cores: more only hold more bodies,
    // parser buffers and blocking threads (each with its malloc arena).
    let _slot = sh.parse_slots.acquire().await;
    let agent = sh.robots_agent.clone();
    tokio::task::spawn_blocking(move || extract::extract_with(&body, ct.as_deref(), &agent, text))
        .await
        .map_err(|e| CrawlError::Config(e.to_string()))
}

fn fill_keywords(row: &mut PageRow, ex: extract::Extracted, noindex: bool) {
    let mut kw: Vec<String> = ex
        .keywords
        .split(',')
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .collect();
    kw.extend(terms::top_terms(&ex.text, 10));
    row.title = Some(ex.title);
    row.description = Some(ex.description);
    row.keywords = Some(kw.join(", "));
    if noindex {
        row.error = Some(
            row.error
                .take()
                .map_or("noindex".into(), |e| format!("{e}; noindex")),
        );
    } else {
        // Without text (`--no-text`) this is empty, not NULL: the page is
        // still indexed by title, description and keywords (a NULL text
        // marks a noindex page, which the index leaves out).
        row.text = Some(ex.text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_never_cut_short_by_rounding() {
        let s = Duration::from_secs;
        // On a whole second, and just after one: a full second either way.
        assert_eq!(later_at(10_000, s(1)), 11);
        assert_eq!(later_at(10_001, s(1)), 12);
        assert_eq!(later_at(10_999, s(1)), 12);
        // Less than a second waits one; fractions round up.
        assert_eq!(later_at(10_000, Duration::ZERO), 11);
        assert_eq!(later_at(10_000, Duration::from_millis(1_500)), 12);
        assert_eq!(later_at(u64::MAX - 5, s(3600)), u64::MAX.div_ceil(1000));
        assert_eq!(later_at(0, Duration::MAX), u64::MAX.div_ceil(1000));
        for now_ms in (0..5_000).step_by(7) {
            for wait_ms in [0u64, 1, 999, 1_000, 1_001, 2_500, 60_000] {
                let until = later_at(now_ms, Duration::from_millis(wait_ms));
                let due = until * 1000;
                assert!(due >= now_ms + wait_ms.max(1_000), "{now_ms} {wait_ms}");
                assert!(
                    due < now_ms + wait_ms.max(1_000) + 1_000,
                    "{now_ms} {wait_ms}"
                );
            }
        }
    }
}
