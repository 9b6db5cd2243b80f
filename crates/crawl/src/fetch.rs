//! The HTTP fetcher: one shared reqwest client with rustls (ring), transparent
//! gzip/br/deflate, timeouts, a body cap and the SSRF-guarded resolver.
//!
//! Redirects are never followed here (`Policy::none()`): the crawl loop sends
//! each `Location` back through canonicalisation, dedupe, scope, robots and
//! politeness. The body cap applies to the *decompressed* stream, which is
//! what bounds a gzip bomb: reading stops at `max_body` bytes and the
//! response is flagged `truncated`, so memory per fetch is at most `max_body`;
//! all bodies held at once are bounded by the fetcher's [`BodyBudget`].

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;

use crate::CrawlError;
use crate::body_budget::{BodyBudget, BodyLease};
use crate::net::{GuardedResolver, ResolveRule, check_ip, find_blocked};
use crate::sockets::{CountConnects, SocketCap};

/// Settings of the fetcher.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// `User-Agent` header.
    pub user_agent: String,
    /// Time allowed for the TCP (and TLS) connect.
    pub connect_timeout: Duration,
    /// Longest pause allowed between two reads.
    pub read_timeout: Duration,
    /// Time allowed for the whole exchange, body included.
    pub total_timeout: Duration,
    /// Largest decompressed body kept; more is cut and flagged.
    pub max_body: usize,
    /// Bytes of bodies held at once past each one's first
    /// [`crate::body_budget::FREE`] (`--body-memory`; see [`BodyBudget`]).
    pub body_budget: usize,
    /// Idle connections kept per host.
    pub idle_per_host: usize,
    /// How long an idle connection is kept. With thousands of hosts this
    /// and [`FetchConfig::max_connections`] bound the pool (reqwest has no
    /// total cap): idle connections ≤ hosts fetched within this window ×
    /// `idle_per_host`, each holding a socket and its read buffer.
    pub idle_timeout: Duration,
    /// Sockets kept open for reuse at most, across all hosts
    /// (`--max-connections`; 0: no cap but `fd_ceiling`). Past it requests
    /// go out with `Connection: close`; see [`crate::sockets`].
    pub max_connections: usize,
    /// Descriptors open at most before connections stop being kept
    /// (`u64::MAX`: none; the crawl sets it from the open-file limit with
    /// [`crate::sockets::plan`]).
    pub fd_ceiling: u64,
    /// `--resolve` rules.
    pub resolve: Vec<ResolveRule>,
    /// Lift the SSRF guard.
    pub allow_private: bool,
    /// Send every request through this HTTP(S) proxy (`--proxy`). Without
    /// one the crawler connects directly and ignores `http_proxy` and the
    /// like in its environment: a proxy resolves the names itself, so
    /// neither `--resolve` nor the SSRF guard could see where it connects.
    /// With one, the guard still refuses IP-literal targets in blocked
    /// ranges (at once, without asking the proxy), the proxy's own address
    /// is trusted (the user chose it), and hostnames are the proxy's to
    /// resolve.
    pub proxy: Option<String>,
    /// PEM files of certificate authorities trusted on top of the built-in
    /// roots (`--ca-cert`): an intranet's own CA, a test server's. Each
    /// must hold at least one certificate, and every certificate in it
    /// must parse ([`load_ca_file`]).
    pub ca_certs: Vec<PathBuf>,
    /// Accept any server certificate (`--insecure`): expired, self-signed,
    /// for another name. For archiving sites whose certificates lapsed;
    /// the connection is still encrypted, but not authenticated.
    pub accept_invalid_certs: bool,
    /// `From` header: the e-mail address of the crawl's operator (`--from`),
    /// which RFC 9110 (10.1.2) asks robots to send, so a site can reach a
    /// person rather than block the crawler.
    pub from: Option<String>,
}

/// Default [`FetchConfig::max_connections`]: 2,048 sockets, ~96 MB of
/// idle connections at most (~47 KB each, see [`IDLE_SLACK`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 2048;

/// Default [`FetchConfig::body_budget`]: 128 MiB.
pub const DEFAULT_BODY_BUDGET: usize = 128 << 20;

/// How long past the per-host delay a crawl keeps an idle connection
/// ([`idle_timeout`]): enough for the host's next request to find it when
/// one is due after the delay (the dispatch loop leases a due URL within
/// milliseconds when a slot is free), short enough that a broad crawl does
/// not hold the connections of hosts it has moved on from. Each idle
/// connection holds ~47 KB of heap (hyper's read and write buffers and its
/// dispatch channel, measured with heaptrack) and a socket: 300,000 pages
/// over 100,000 hosts at `--delay 0` peaked at 369–425 MB with 2 s (5,100–5,900
/// sockets open on average), 169–194 MB with 300 ms (docs/BENCHMARKS.md,
/// "Idle connections").
pub const IDLE_SLACK: Duration = Duration::from_millis(500);

/// The idle timeout for a crawl whose per-host delay is `delay`: the delay
/// plus [`IDLE_SLACK`], at most 30 s. (A host whose robots.txt asks for a
/// longer `Crawl-delay` reconnects for each request, about one every few
/// seconds at most.)
pub fn idle_timeout(delay: Duration) -> Duration {
    delay
        .saturating_add(IDLE_SLACK)
        .min(Duration::from_secs(30))
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            user_agent: crate::DEFAULT_USER_AGENT.to_string(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(20),
            total_timeout: Duration::from_secs(60),
            max_body: 10 * 1024 * 1024,
            body_budget: DEFAULT_BODY_BUDGET,
            idle_per_host: 4,
            idle_timeout: Duration::from_secs(30),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            fd_ceiling: u64::MAX,
            resolve: Vec::new(),
            allow_private: false,
            proxy: None,
            ca_certs: Vec::new(),
            accept_invalid_certs: false,
            from: None,
        }
    }
}

/// A response as the crawler needs it.
#[derive(Debug)]
pub struct Fetched {
    /// HTTP status code.
    pub status: u16,
    /// Response headers (after decompression: no `Content-Encoding`).
    pub headers: HeaderMap,
    /// Decompressed body, at most `max_body` bytes.
    pub body: Vec<u8>,
    /// Whether the body was cut at `max_body`.
    pub truncated: bool,
    /// Address of the peer, when known.
    pub remote: Option<IpAddr>,
    /// The body's share of the [`BodyBudget`], returned when dropped
    /// (`None`: not counted).
    pub lease: Option<BodyLease>,
    /// The server's response time: from sending the request (connecting
    /// first if no connection was open) to its response head. What the
    /// politeness gate scales a host's next gap by (`--delay-factor`); the
    /// body's transfer is left out, since reading it may wait on the crawl's
    /// own body memory budget.
    pub response_time: Duration,
}

impl Fetched {
    /// A header value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Every value of a header that may be repeated (`X-Robots-Tag`), as
    /// text, in order.
    pub fn header_all<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .get_all(name)
            .into_iter()
            .filter_map(|v| v.to_str().ok())
    }
}

/// Shared HTTP client; cheap to clone.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    /// Requests go through a proxy: the peer is the proxy, not the site.
    proxied: bool,
    allow_private: bool,
    max_body: usize,
    /// `User-Agent` and `From` as header lines, as sent (for WARC request
    /// records).
    identity: Arc<str>,
    budget: Arc<BodyBudget>,
    sockets: Arc<SocketCap>,
}

impl Fetcher {
    /// Builds the client.
    pub fn new(cfg: &FetchConfig) -> Result<Fetcher, CrawlError> {
        // Several fetchers may be built in one process; only the first install wins.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut resolver = GuardedResolver::new(cfg.resolve.clone(), cfg.allow_private);
        let mut builder = reqwest::Client::builder().no_proxy();
        if let Some(proxy) = &cfg.proxy {
            let (url, proxy) = parse_proxy(proxy)?;
            builder = builder.proxy(proxy);
            if let Some(host) = url.host_str() {
                resolver = resolver.trusting(host);
            }
        }
        for path in &cfg.ca_certs {
            for der in load_ca_file(path)? {
                let cert = reqwest::Certificate::from_der(&der).map_err(|e| ca_error(path, &e))?;
                builder = builder.add_root_certificate(cert);
            }
        }
        let mut identity = format!("User-Agent: {}\r\n", cfg.user_agent);
        if let Some(from) = &cfg.from {
            let value = from_header(from)?;
            let mut headers = HeaderMap::new();
            headers.insert(reqwest::header::FROM, value);
            builder = builder.default_headers(headers);
            identity.push_str(&format!("From: {from}\r\n"));
        }
        let sockets = Arc::new(SocketCap::new(cfg.max_connections, cfg.fd_ceiling));
        let client = builder
            .connector_layer(CountConnects(sockets.clone()))
            .danger_accept_invalid_certs(cfg.accept_invalid_certs)
            .user_agent(cfg.user_agent.clone())
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(resolver))
            .connect_timeout(cfg.connect_timeout)
            .read_timeout(cfg.read_timeout)
            .timeout(cfg.total_timeout)
            .pool_max_idle_per_host(cfg.idle_per_host)
            .pool_idle_timeout(cfg.idle_timeout)
            .build()
            .map_err(|e| http_error(&e))?;
        Ok(Fetcher {
            client,
            proxied: cfg.proxy.is_some(),
            allow_private: cfg.allow_private,
            max_body: cfg.max_body,
            identity: identity.into(),
            budget: BodyBudget::new(cfg.body_budget),
            sockets,
        })
    }

    /// The bound on sockets kept open.
    pub fn sockets(&self) -> &SocketCap {
        &self.sockets
    }

    /// The bound on bodies held at once.
    pub fn body_budget(&self) -> &BodyBudget {
        &self.budget
    }

    /// The `User-Agent` (and `From`, when set) header lines sent with
    /// every request, each ending in CRLF.
    pub fn identity_headers(&self) -> &str {
        &self.identity
    }

    /// GETs `url`, reading at most `max_body` decompressed bytes.
    pub async fn get(&self, url: &str) -> Result<Fetched, CrawlError> {
        self.get_capped(url, self.max_body).await
    }

    /// GETs `url`, reading at most `cap` decompressed bytes (sitemaps have
    /// their own 50 MB cap).
    pub async fn get_capped(&self, url: &str, cap: usize) -> Result<Fetched, CrawlError> {
        let parsed = reqwest::Url::parse(url).map_err(|e| CrawlError::Http {
            kind: "request",
            message: format!("{url}: {e}"),
        })?;
        self.check_literal(&parsed)?;
        let sent = Instant::now();
        let mut request = self.client.get(parsed);
        // Dropped when this call returns, the response read or failed: its
        // connection is closed then.
        let closing = self.sockets.admit();
        if closing.is_some() {
            request = request.header(reqwest::header::CONNECTION, "close");
        }
        let resp = request.send().await.map_err(|e| http_error(&e))?;
        let response_time = sent.elapsed();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let remote = resp.remote_addr().filter(|_| !self.proxied).map(|a| a.ip());
        let mut lease = self.budget.lease();
        let (body, truncated) = read_capped(resp, cap, &mut lease).await?;
        Ok(Fetched {
            status,
            headers,
            body,
            truncated,
            remote,
            lease: Some(lease),
            response_time,
        })
    }

    fn check_literal(&self, url: &reqwest::Url) -> Result<(), CrawlError> {
        let ip: Option<IpAddr> = match url.host() {
            Some(url::Host::Ipv4(v4)) => Some(v4.into()),
            Some(url::Host::Ipv6(v6)) => Some(v6.into()),
            _ => None,
        };
        match ip {
            Some(ip) => check_ip(url.host_str().unwrap_or(""), ip, self.allow_private),
            None => Ok(()),
        }
    }
}

/// Reads a `--proxy` URL: `http://` or `https://`, with a host; a bare
/// `host:port` is taken as `http://host:port`.
fn parse_proxy(text: &str) -> Result<(reqwest::Url, reqwest::Proxy), CrawlError> {
    // Credentials (`http://user:secret@host:port`) stay out of the message.
    let shown = text.rsplit_once('@').map_or(text, |(_, host)| host);
    let bad = |why: &str| CrawlError::Config(format!("--proxy {shown:?}: {why}"));
    let full = if text.contains("://") {
        text.to_string()
    } else {
        format!("http://{text}")
    };
    let url = reqwest::Url::parse(&full).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("expected an http:// or https:// proxy"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    let proxy = reqwest::Proxy::all(url.as_str()).map_err(|e| bad(&e.to_string()))?;
    Ok((url, proxy))
}

/// A `--from` address as a header value: one address with an `@`, no
/// spaces or control characters (a header cannot carry them, and a list or a
/// display name is not what a site owner wants to copy).
fn from_header(from: &str) -> Result<reqwest::header::HeaderValue, CrawlError> {
    let bad = |why: &str| CrawlError::Config(format!("--from {from:?}: {why}"));
    let (local, domain) = from
        .split_once('@')
        .ok_or_else(|| bad("expected an e-mail address"))?;
    if local.is_empty() || domain.is_empty() || domain.contains('@') {
        return Err(bad("expected an e-mail address"));
    }
    if from
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == ',')
    {
        return Err(bad("one address, without spaces"));
    }
    reqwest::header::HeaderValue::from_str(from).map_err(|e| bad(&e.to_string()))
}

/// Reads the certificates of a `--ca-cert` PEM file (DER each), checked
/// the way they will be used: each must parse as a trust anchor. A file that
/// cannot be read, holds no `CERTIFICATE` block, or a block that is not a
/// certificate is refused with [`CrawlError::Config`] naming it, before any
/// request (a typo must not quietly leave the crawl without its CA).
pub fn load_ca_file(path: &Path) -> Result<Vec<Vec<u8>>, CrawlError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let pem = std::fs::read(path).map_err(|e| ca_error(path, &e))?;
    let mut ders = Vec::new();
    for (i, item) in CertificateDer::pem_slice_iter(&pem).enumerate() {
        let der = item.map_err(|e| ca_error(path, &format!("certificate {}: {e}", i + 1)))?;
        let mut check = rustls::RootCertStore::empty();
        check
            .add(der.clone())
            .map_err(|e| ca_error(path, &format!("certificate {}: {e}", i + 1)))?;
        ders.push(der.as_ref().to_vec());
    }
    if ders.is_empty() {
        return Err(ca_error(path, &"no PEM CERTIFICATE block"));
    }
    Ok(ders)
}

fn ca_error(path: &Path, why: &dyn std::fmt::Display) -> CrawlError {
    CrawlError::Config(format!("--ca-cert {}: {why}", path.display()))
}

/// Whether a TLS error (a rustls one: a certificate not trusted or not for
/// the host, a failed handshake) is in `e`'s chain of sources.
fn is_tls(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(e);
    while let Some(s) = at {
        if s.is::<rustls::Error>() {
            return true;
        }
        // An `io::Error` wrapping another error (hyper-util wraps
        // tokio-rustls's, which wraps rustls's) hides it from `source()`:
        // `get_ref` steps into it.
        at = match s
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => s.source(),
        };
    }
    false
}

/// Most bytes reserved for a body up front from its `Content-Length`.
const PRESIZE_MAX: usize = 1 << 20;

async fn read_capped(
    mut resp: reqwest::Response,
    cap: usize,
    lease: &mut BodyLease,
) -> Result<(Vec<u8>, bool), CrawlError> {
    // Sized from Content-Length when the server sends one (not for
    // compressed bodies), so a body is one block instead of a doubling
    // series of reallocations; at most PRESIZE_MAX, so a lying header
    // cannot reserve the whole cap. Every growth of the buffer is covered
    // by the budget first.
    let length = resp.content_length().unwrap_or(0).min(cap as u64) as usize;
    lease.reserve(length).await;
    let first = length.min(PRESIZE_MAX);
    lease.cover(first).await;
    let mut body = Vec::with_capacity(first);
    while let Some(chunk) = resp.chunk().await.map_err(|e| http_error(&e))? {
        let take = chunk.len().min(cap - body.len());
        let need = body.len() + take;
        if need > body.capacity() {
            let grown = need.max(body.capacity().saturating_mul(2)).min(cap);
            lease.cover(grown).await;
            body.reserve_exact(grown - body.len());
        }
        body.extend_from_slice(&chunk[..take]);
        if take < chunk.len() {
            return Ok((body, true));
        }
    }
    Ok((body, false))
}

fn http_error(e: &reqwest::Error) -> CrawlError {
    if let Some(b) = find_blocked(e) {
        return CrawlError::Blocked {
            host: b.host.clone(),
            addr: b.addr,
            reason: b.reason,
        };
    }
    let kind = if is_tls(e) {
        "tls"
    } else if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connect"
    } else if e.is_decode() || e.is_body() {
        "body"
    } else {
        "request"
    };
    let mut message = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        message.push_str(": ");
        message.push_str(&s.to_string());
        src = s.source();
    }
    CrawlError::Http { kind, message }
}

/// Parses `Retry-After` (delta seconds or an HTTP date), capped at one day.
pub fn retry_after(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let value = value.trim();
    let secs = match value.parse::<u64>() {
        Ok(s) => s,
        Err(_) => {
            let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
            u64::try_from((when.with_timezone(&chrono::Utc) - now).num_seconds()).unwrap_or(0)
        }
    };
    Some(Duration::from_secs(secs.min(86_400)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_connections_outlast_the_delay_by_the_slack_up_to_30_s() {
        let ms = Duration::from_millis;
        assert_eq!(idle_timeout(Duration::ZERO), ms(500));
        assert_eq!(idle_timeout(ms(1000)), ms(1500));
        assert_eq!(idle_timeout(ms(29_500)), Duration::from_secs(30));
        assert_eq!(
            idle_timeout(Duration::from_secs(60)),
            Duration::from_secs(30)
        );
        assert_eq!(idle_timeout(Duration::MAX), Duration::from_secs(30));
    }

    #[test]
    fn retry_after_forms() {
        let now = chrono::DateTime::parse_from_rfc2822("Sun, 06 Nov 1994 08:49:37 GMT")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:50:37 GMT", now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after("99999999", now),
            Some(Duration::from_secs(86_400))
        );
        assert_eq!(retry_after("soon", now), None);
        assert_eq!(retry_after("-5", now), None);
    }

    #[tokio::test]
    async fn literal_private_ip_refused_without_connecting() {
        let f = Fetcher::new(&FetchConfig::default()).unwrap();
        for url in [
            "http://127.0.0.1:9/",
            "http://10.0.0.1/",
            "http://169.254.169.254/latest",
            "http://[::ffff:127.0.0.1]:9/",
            "http://[64:ff9b::a9fe:a9fe]/latest",
            "http://[2002:a00:1::]/",
        ] {
            match f.get(url).await {
                Err(CrawlError::Blocked { .. }) => {}
                other => panic!("{url}: {other:?}"),
            }
        }
    }
}

#[cfg(test)]
mod from_tests {
    use super::*;

    #[test]
    fn from_takes_one_address_and_refuses_the_rest() {
        for good in ["ops@example.org", "crawl-team+mgz@research.example"] {
            assert_eq!(from_header(good).unwrap(), good);
        }
        for bad in [
            "",
            "nobody",
            "@example.org",
            "ops@",
            "a@b@c",
            "ops @example.org",
            "a@b.org,c@d.org",
            "Ops Team <ops@example.org>",
            "ops@example.org\r\nX-Injected: 1",
            "ops\u{0}@example.org",
        ] {
            match from_header(bad) {
                Err(CrawlError::Config(m)) => assert!(m.starts_with("--from "), "{m}"),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let cfg = FetchConfig {
            from: Some("not an address".into()),
            ..FetchConfig::default()
        };
        assert!(matches!(Fetcher::new(&cfg), Err(CrawlError::Config(_))));
        let cfg = FetchConfig {
            from: Some("ops@example.org".into()),
            user_agent: "bot/1".into(),
            ..FetchConfig::default()
        };
        let f = Fetcher::new(&cfg).unwrap();
        assert_eq!(
            f.identity_headers(),
            "User-Agent: bot/1\r\nFrom: ops@example.org\r\n"
        );
    }
}

#[cfg(test)]
mod ca_tests {
    use super::*;

    fn pem(name: &str) -> String {
        let cert = rcgen::generate_simple_self_signed(vec![name.to_string()]).unwrap();
        cert.cert.pem()
    }

    /// `load_ca_file` on `text`; the error's message when it fails.
    fn load(text: &[u8]) -> Result<usize, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, text).unwrap();
        match load_ca_file(&path) {
            Ok(ders) => Ok(ders.len()),
            Err(CrawlError::Config(m)) => {
                assert!(m.starts_with("--ca-cert ") && m.contains("ca.pem"), "{m}");
                Err(m)
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bundle_gives_each_certificate() {
        assert_eq!(load(pem("a.test").as_bytes()), Ok(1));
        let two = format!("# our CAs\n{}\n{}", pem("a.test"), pem("b.test"));
        assert_eq!(load(two.as_bytes()), Ok(2));
        let cfg = FetchConfig {
            ca_certs: vec![],
            ..FetchConfig::default()
        };
        assert!(Fetcher::new(&cfg).is_ok());
    }

    #[test]
    fn files_without_a_usable_certificate_are_refused_by_name() {
        let key = rcgen::KeyPair::generate().unwrap().serialize_pem();
        for text in [
            &b""[..],
            b"not a certificate at all",
            key.as_bytes(),
            &[0xff, 0xfe, 0x00, 0x80],
        ] {
            match load(text) {
                Err(m) => assert!(m.contains("no PEM CERTIFICATE block"), "{m}"),
                ok => panic!("{text:?}: {ok:?}"),
            }
        }
        // A block that is not base64, and one whose bytes are no certificate.
        let bad_base64 = "-----BEGIN CERTIFICATE-----\n%%%%\n-----END CERTIFICATE-----\n";
        let not_der = "-----BEGIN CERTIFICATE-----\nAAECAwQF\n-----END CERTIFICATE-----\n";
        let cut = {
            let p = pem("a.test");
            p[..p.len() / 2].to_string()
        };
        for text in [bad_base64, not_der, &cut] {
            match load(text.as_bytes()) {
                Err(m) => assert!(m.contains(": certificate 1: "), "{m}"),
                ok => panic!("{text:?}: {ok:?}"),
            }
        }
        // A good one after a bad one is no excuse.
        let mixed = format!("{}{not_der}", pem("a.test"));
        assert!(
            load(mixed.as_bytes())
                .unwrap_err()
                .contains("certificate 2")
        );
        // A missing file, and the fetcher refusing to start without it.
        let cfg = FetchConfig {
            ca_certs: vec![PathBuf::from("/nonexistent/ca.pem")],
            ..FetchConfig::default()
        };
        match Fetcher::new(&cfg) {
            Err(CrawlError::Config(m)) => assert!(m.contains("/nonexistent/ca.pem"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}

#[cfg(test)]
mod proxy_tests {
    use super::*;

    #[test]
    fn proxy_urls_are_checked() {
        for good in [
            "http://proxy.example:3128",
            "https://p.example",
            "10.1.2.3:8080",
        ] {
            assert!(parse_proxy(good).is_ok(), "{good}");
        }
        assert_eq!(parse_proxy("p.example:3128").unwrap().0.scheme(), "http");
        for bad in [
            "",
            "http://",
            "ftp://p.example",
            "socks5://p.example:1080",
            "http://[::1",
            "a b",
        ] {
            match parse_proxy(bad) {
                Err(CrawlError::Config(m)) => assert!(m.contains("--proxy"), "{m}"),
                other => panic!("{bad:?}: {:?}", other.map(|(u, _)| u)),
            }
        }
        match parse_proxy("ftp://user:secret@p.example") {
            Err(CrawlError::Config(m)) => assert!(!m.contains("secret"), "{m}"),
            other => panic!("{:?}", other.map(|(u, _)| u)),
        }
        assert!(parse_proxy("http://user:secret@p.example:3128").is_ok());
        let cfg = FetchConfig {
            proxy: Some("gopher://x".into()),
            ..FetchConfig::default()
        };
        assert!(matches!(Fetcher::new(&cfg), Err(CrawlError::Config(_))));
    }
}
