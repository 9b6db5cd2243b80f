//! Name resolution with `--resolve` host patterns and the SSRF guard.
//!
//! Every connection the fetcher makes goes through [`GuardedResolver`]: a host
//! name is first matched against the `--resolve` rules (first match wins), else
//! resolved by the system. Unless private addresses are allowed, any resolved
//! address in a forbidden class fails the lookup with [`BlockedAddr`], so no
//! socket is ever opened to it. IP-literal URLs bypass reqwest's resolver, so
//! the fetcher calls [`check_ip`] on them directly. An IPv6 address that
//! reaches an IPv4 one (mapped, compatible, NAT64, 6to4) is judged as that
//! IPv4 address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use crate::CrawlError;

/// Why `ip` must not be contacted, or `None` when it is a public address.
pub fn blocked_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => v4_reason(v4),
            None => v6_reason(v6),
        },
    }
}

/// The IPv4 address an IPv6 address reaches, when it embeds one: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated; not `::`
/// or `::1`), the well-known NAT64 prefix (`64:ff9b::a.b.c.d`, RFC 6052:
/// on an IPv6-only network a NAT64 gateway connects to `a.b.c.d`), and 6to4
/// (`2002:aabb:ccdd::/48`, RFC 3056). Each is judged as the IPv4 address,
/// so `64:ff9b::a9fe:a9fe` is the cloud metadata address while a public
/// address behind DNS64 stays reachable.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if let Some(mapped) = ip.to_ipv4_mapped() {
        return Some(mapped);
    }
    match s {
        [0, 0, 0, 0, 0, 0, hi, lo] if !ip.is_loopback() && !ip.is_unspecified() => Some(v4(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(v4(hi, lo)),
        [0x2002, hi, lo, ..] => Some(v4(hi, lo)),
        _ => None,
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, d] = ip.octets();
    match (a, b) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => Some("cloud metadata"),
        _ if [a, b, c, d] == [100, 100, 100, 200] => Some("cloud metadata"),
        (127, _) => Some("loopback"),
        (0, _) => Some("unspecified"),
        (10, _) | (192, 168) => Some("private"),
        (172, 16..=31) => Some("private"),
        (169, 254) => Some("link-local"),
        (100, 64..=127) => Some("CGNAT"),
        (224..=239, _) => Some("multicast"),
        (240..=255, _) => Some("reserved"),
        _ => None,
    }
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() {
        Some("unspecified")
    } else if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        Some("cloud metadata")
    } else if first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfec0 {
        // Unique local, and the deprecated site-local fec0::/10.
        Some("private")
    } else if ip.segments()[..3] == [0x64, 0xff9b, 1] {
        // NAT64 for local use (RFC 8215): the operator picks how IPv4
        // addresses sit in it, so none can be read out; treated as private.
        Some("private")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if first & 0xff00 == 0xff00 {
        Some("multicast")
    } else {
        None
    }
}

/// Fails with [`CrawlError::Blocked`] when `ip` is forbidden and private
/// addresses are not allowed.
pub fn check_ip(host: &str, ip: IpAddr, allow_private: bool) -> Result<(), CrawlError> {
    match blocked_reason(ip) {
        Some(reason) if !allow_private => Err(CrawlError::Blocked {
            host: host.to_string(),
            addr: ip,
            reason,
        }),
        _ => Ok(()),
    }
}

/// One `--resolve PATTERN=IP[:PORT]` rule. `*.sim` matches every host ending
/// in `.sim`; `*` matches every host; anything else matches exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveRule {
    pattern: String,
    addr: SocketAddr,
}

impl ResolveRule {
    /// Parses `PATTERN=IP` or `PATTERN=IP:PORT` (IPv6 as `[::1]:PORT`).
    pub fn parse(text: &str) -> Result<ResolveRule, CrawlError> {
        let bad = || CrawlError::BadResolve(text.to_string());
        let (pattern, target) = text.split_once('=').ok_or_else(bad)?;
        if pattern.is_empty() || pattern.contains(char::is_whitespace) {
            return Err(bad());
        }
        let addr = match target.parse::<SocketAddr>() {
            Ok(sa) => sa,
            Err(_) => SocketAddr::new(target.parse::<IpAddr>().map_err(|_| bad())?, 0),
        };
        let pattern = pattern.to_ascii_lowercase();
        Ok(ResolveRule { pattern, addr })
    }

    /// Whether the rule applies to `host` (already lowercase).
    pub fn matches(&self, host: &str) -> bool {
        match self.pattern.strip_prefix('*') {
            Some("") => true,
            Some(suffix) => host.ends_with(suffix) && host.len() > suffix.len(),
            None => host == self.pattern,
        }
    }

    /// The address the rule maps to (port 0: the URL's port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// The error a lookup fails with when the guard refuses the address.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves to {addr}, a {reason} address")]
pub struct BlockedAddr {
    /// Host name.
    pub host: String,
    /// Refused address.
    pub addr: IpAddr,
    /// Address class.
    pub reason: &'static str,
}

/// reqwest resolver applying the `--resolve` rules and the SSRF guard.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    rules: Arc<Vec<ResolveRule>>,
    allow_private: bool,
    /// A host the guard lets through whatever its address: the proxy the
    /// user configured (the only name resolved when there is one).
    trusted: Option<Arc<str>>,
}

impl GuardedResolver {
    /// A resolver with `rules` (first match wins).
    pub fn new(rules: Vec<ResolveRule>, allow_private: bool) -> Self {
        GuardedResolver {
            rules: Arc::new(rules),
            allow_private,
            trusted: None,
        }
    }

    /// The same resolver, letting `host` (the configured proxy) resolve to
    /// any address.
    pub fn trusting(mut self, host: &str) -> Self {
        self.trusted = Some(host.to_ascii_lowercase().into());
        self
    }

    /// The mapped address of `host`, when a rule matches.
    pub fn mapped(&self, host: &str) -> Option<SocketAddr> {
        self.rules.iter().find(|r| r.matches(host)).map(|r| r.addr)
    }

    /// Resolves `host` and applies the guard to every address.
    pub async fn lookup(&self, host: &str) -> Result<Vec<SocketAddr>, BoxError> {
        let addrs = match self.mapped(host) {
            Some(sa) => vec![sa],
            None => tokio::net::lookup_host((host, 0)).await?.collect(),
        };
        if !self.allow_private && self.trusted.as_deref() != Some(host) {
            for sa in &addrs {
                if let Some(reason) = blocked_reason(sa.ip()) {
                    let (host, addr) = (host.to_string(), sa.ip());
                    return Err(Box::new(BlockedAddr { host, addr, reason }));
                }
            }
        }
        Ok(addrs)
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = self.clone();
        let host = name.as_str().to_ascii_lowercase();
        Box::pin(async move {
            let addrs = this.lookup(&host).await?;
            let iter: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(iter)
        })
    }
}

/// Finds a [`BlockedAddr`] anywhere in an error's source chain.
pub fn find_blocked<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a BlockedAddr> {
    let mut cur: Option<&'a (dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(b) = e.downcast_ref::<BlockedAddr>() {
            return Some(b);
        }
        cur = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        for (ip, want) in [
            ("127.0.0.1", Some("loopback")),
            ("10.0.0.1", Some("private")),
            ("172.20.1.1", Some("private")),
            ("192.168.1.1", Some("private")),
            ("169.254.169.254", Some("cloud metadata")),
            ("169.254.1.1", Some("link-local")),
            ("100.64.0.1", Some("CGNAT")),
            ("224.0.0.1", Some("multicast")),
            ("0.0.0.0", Some("unspecified")),
            ("::1", Some("loopback")),
            ("::ffff:10.0.0.1", Some("private")),
            ("fe80::1", Some("link-local")),
            ("fd12::1", Some("private")),
            ("ff02::1", Some("multicast")),
            // IPv6 addresses that reach an IPv4 one are judged as it.
            ("::127.0.0.1", Some("loopback")),
            ("::2", Some("unspecified")),
            ("64:ff9b::a9fe:a9fe", Some("cloud metadata")),
            ("64:ff9b::10.1.2.3", Some("private")),
            ("64:ff9b::93.184.216.34", None),
            ("2002:7f00:1::1", Some("loopback")),
            ("2002:c0a8:101::", Some("private")),
            ("2002:5db8:d822::1", None),
            ("64:ff9b:1::a00:1", Some("private")),
            ("fec0::1", Some("private")),
            ("::8.8.8.8", None),
            ("93.184.216.34", None),
            ("2606:4700::1111", None),
            ("172.32.0.1", None),
        ] {
            assert_eq!(blocked_reason(ip.parse().unwrap()), want, "{ip}");
        }
    }

    #[test]
    fn rules_parse_and_match() {
        let r = ResolveRule::parse("*.sim=127.0.0.1:8080").unwrap();
        assert!(r.matches("www.site-1.sim"));
        assert!(!r.matches("sim"));
        assert!(!r.matches("example.com"));
        assert_eq!(r.addr(), "127.0.0.1:8080".parse().unwrap());
        let r = ResolveRule::parse("evil.test=10.0.0.1").unwrap();
        assert!(r.matches("evil.test") && !r.matches("a.evil.test"));
        assert_eq!(r.addr().port(), 0);
        assert!(ResolveRule::parse("*=[::1]:80").unwrap().matches("x"));
        for bad in [
            "",
            "=1.2.3.4",
            "a.b",
            "a=notanip",
            "a=1.2.3.4:99999",
            "a b=1.2.3.4",
        ] {
            assert!(ResolveRule::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn guard_refuses_mapped_private() {
        let rules = vec![ResolveRule::parse("*.test=10.0.0.1").unwrap()];
        let r = GuardedResolver::new(rules.clone(), false);
        let err = r.lookup("a.test").await.unwrap_err();
        assert!(find_blocked(err.as_ref()).is_some());
        let r = GuardedResolver::new(rules, true);
        assert_eq!(r.lookup("a.test").await.unwrap().len(), 1);
    }
}
