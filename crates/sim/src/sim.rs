//! [`Sim`]: the synthetic web as a pure function from (Host, path) to an
//! answer, without any network. The server wraps it; tests and the truth use
//! it directly.

use crate::page::Resource;
use crate::render::{Rendered, render};
use crate::route::route;
use crate::world::World;
use crate::{SimConfig, SimError};

/// Longest request target the sim routes (longer ones are 404 at once).
pub const MAX_TARGET_LEN: usize = 8 * 1024;

/// A synthetic web: hosts and their features, with pages generated on demand.
#[derive(Debug)]
pub struct Sim {
    pub(crate) world: World,
}

/// An answer of the sim to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimResponse {
    /// Status, headers and body.
    pub rendered: Rendered,
    /// How long the server waits before answering, in milliseconds.
    pub delay_ms: u64,
    /// True when the server stalls for `delay_ms` and then closes without answering.
    pub stall: bool,
}

impl Sim {
    /// Builds the web described by `config` (cost: one small record per host).
    pub fn new(config: &SimConfig) -> Result<Sim, SimError> {
        Ok(Sim {
            world: World::new(config)?,
        })
    }

    /// The configuration this web was built from.
    pub fn config(&self) -> &SimConfig {
        &self.world.cfg
    }

    /// Host names, most popular first.
    pub fn host_names(&self) -> impl Iterator<Item = &str> {
        self.world.hosts.iter().map(|h| h.name.as_str())
    }

    /// The answer to `GET target` with header `Host: host` (any case, optional port).
    /// Unknown hosts and malformed host headers get 404 and 400.
    pub fn respond(&self, host: &str, target: &str) -> SimResponse {
        let cfg = &self.world.cfg;
        let Some(name) = normalize_host(host) else {
            return plain(400, "bad Host header");
        };
        let Some(hi) = self.world.lookup(&name) else {
            return plain(404, "unknown host");
        };
        if target.len() > MAX_TARGET_LEN || !target.starts_with('/') {
            return plain(404, "no such path");
        }
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        let host = &self.world.hosts[hi as usize];
        let res = route(&self.world, hi, path, query);
        let mut delay_ms = cfg.latency_ms + if host.slow { cfg.slow_ms } else { 0 };
        let stall = res == Resource::Stall;
        if stall {
            delay_ms += cfg.robots_timeout_ms;
        }
        SimResponse {
            rendered: render(
                &res,
                host.charset,
                cfg.retry_after_secs,
                cfg.oversized_bytes,
            ),
            delay_ms,
            stall,
        }
    }
}

/// A short text answer with no delay.
pub(crate) fn plain(status: u16, text: &str) -> SimResponse {
    SimResponse {
        rendered: Rendered {
            status,
            headers: vec![("content-type", "text/plain; charset=utf-8".to_string())],
            body: format!("{text}\n").into_bytes(),
        },
        delay_ms: 0,
        stall: false,
    }
}

/// `Host` header value to a lowercase name without port; `None` when malformed.
pub(crate) fn normalize_host(value: &str) -> Option<String> {
    let (name, port) = match value.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (value, None),
    };
    let port_ok =
        port.is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    let name_ok = !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    (port_ok && name_ok).then(|| name.trim_end_matches('.').to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_header_forms() {
        assert_eq!(
            normalize_host("WWW.Site-1.SIM:8080").as_deref(),
            Some("www.site-1.sim")
        );
        assert_eq!(
            normalize_host("www.site-1.sim.").as_deref(),
            Some("www.site-1.sim")
        );
        for bad in ["", ":80", "a b", "x:", "x:123456", "ex\u{e9}.sim"] {
            assert_eq!(normalize_host(bad), None, "{bad:?}");
        }
    }
}
