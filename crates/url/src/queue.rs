//! Queue keys: which frontier queue (and politeness slot) a URL belongs to.
//!
//! - [`QueueKeyKind::Host`] (default): the host, `www.example.co.uk`.
//! - [`QueueKeyKind::RegistrableDomain`]: the public suffix plus one label,
//!   `example.co.uk`, from the Public Suffix List compiled into the `psl`
//!   crate (no hand-written list). The frontier also uses it for fairness,
//!   so that one site cannot take many queues with many subdomains.
//!
//! An IP-literal host (`192.0.2.1`, `[2001:db8::1]`) has no domain: both
//! kinds return the literal itself. A name with no registrable part
//! (`localhost`, a bare suffix such as `co.uk`) falls back to the host.
//! All keys are slices of the canonical host: no allocation.

use crate::CanonicalUrl;

/// How URLs are grouped into frontier queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum QueueKeyKind {
    /// One queue per host.
    #[default]
    Host,
    /// One queue per registrable domain (public suffix + 1 label).
    RegistrableDomain,
}

impl CanonicalUrl {
    /// True when the host is an IPv4 or IPv6 literal.
    pub fn is_ip_literal(&self) -> bool {
        !matches!(self.url.host(), Some(url::Host::Domain(_)))
    }

    /// The host's IP address when the host is an IP literal.
    pub fn ip_literal(&self) -> Option<std::net::IpAddr> {
        match self.url.host()? {
            url::Host::Ipv4(ip) => Some(ip.into()),
            url::Host::Ipv6(ip) => Some(ip.into()),
            url::Host::Domain(_) => None,
        }
    }

    /// The registrable domain (`example.co.uk` for `a.b.example.co.uk`);
    /// `None` for IP literals and names without one (`localhost`, `co.uk`).
    pub fn registrable_domain(&self) -> Option<&str> {
        if self.is_ip_literal() {
            return None;
        }
        psl::domain_str(self.host())
    }

    /// The queue this URL belongs to under `kind` (see the module docs).
    pub fn queue_key(&self, kind: QueueKeyKind) -> &str {
        host_queue_key(self.host(), kind)
    }
}

/// The queue key of a host, as `url::Url::host_str` gives it for a parsed
/// URL (lowercase, IDNA, an IPv6 literal in brackets): also for callers that
/// hold a host, not the canonical URL (a politeness gate, a frontier queue
/// key). It agrees with [`CanonicalUrl::registrable_domain`], which reads
/// the parsed host's type instead of its text (tests, fuzz target `parse`).
pub fn host_queue_key(host: &str, kind: QueueKeyKind) -> &str {
    match kind {
        QueueKeyKind::Host => host,
        QueueKeyKind::RegistrableDomain => {
            if host.starts_with('[') || host.parse::<std::net::Ipv4Addr>().is_ok() {
                host
            } else {
                psl::domain_str(host).unwrap_or(host)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;

    fn url(s: &str) -> CanonicalUrl {
        CanonicalUrl::parse(s, None, &Policy::safe()).unwrap()
    }

    #[test]
    fn registrable_domain_uses_the_public_suffix_list() {
        assert_eq!(
            url("http://a.b.example.co.uk/").registrable_domain(),
            Some("example.co.uk")
        );
        assert_eq!(
            url("http://www.test.com/").registrable_domain(),
            Some("test.com")
        );
        assert_eq!(
            url("http://user.github.io/").registrable_domain(),
            Some("user.github.io")
        );
        assert_eq!(url("http://localhost/").registrable_domain(), None);
        assert_eq!(url("http://co.uk/").registrable_domain(), None);
    }

    #[test]
    fn queue_keys_by_kind() {
        let u = url("https://docs.example.com:8443/x");
        assert_eq!(u.queue_key(QueueKeyKind::Host), "docs.example.com");
        assert_eq!(u.queue_key(QueueKeyKind::RegistrableDomain), "example.com");
        assert_eq!(
            url("http://localhost/").queue_key(QueueKeyKind::RegistrableDomain),
            "localhost"
        );
    }

    #[test]
    fn a_hosts_key_is_its_urls_key() {
        for u in [
            "https://docs.example.com:8443/x",
            "http://a.b.example.co.uk/",
            "http://user.github.io/",
            "http://localhost/",
            "http://co.uk/",
            "http://192.0.2.1/",
            "http://[2001:DB8::1]/",
            "http://xn--bcher-kva.example/",
            "http://BÜCHER.example.com/",
            "http://sim/",
            "http://www.site-3.sim/a",
            "http://a.x.test/",
        ] {
            let c = url(u);
            let host = c.as_url().host_str().unwrap();
            assert_eq!(host_queue_key(host, QueueKeyKind::Host), host, "{u}");
            assert_eq!(
                host_queue_key(host, QueueKeyKind::RegistrableDomain),
                c.registrable_domain().unwrap_or(host),
                "{u}"
            );
        }
        assert_eq!(
            host_queue_key("b.x.test", QueueKeyKind::RegistrableDomain),
            "x.test"
        );
        // Not a host at all: answered, not a panic.
        for odd in ["", ".", "..", "[", "a..b", "999.1.1.1", "-.com"] {
            let _ = host_queue_key(odd, QueueKeyKind::RegistrableDomain);
        }
    }

    #[test]
    fn ip_literals_key_by_the_literal() {
        let v4 = url("http://192.0.2.1/");
        assert!(v4.is_ip_literal());
        assert_eq!(v4.registrable_domain(), None);
        assert_eq!(v4.queue_key(QueueKeyKind::RegistrableDomain), "192.0.2.1");
        let v6 = url("http://[2001:DB8::1]/");
        assert_eq!(
            v6.queue_key(QueueKeyKind::RegistrableDomain),
            "[2001:db8::1]"
        );
        assert_eq!(v6.ip_literal(), Some("2001:db8::1".parse().unwrap()));
        assert_eq!(url("http://a.com/").ip_literal(), None);
    }
}
