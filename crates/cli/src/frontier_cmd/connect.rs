//! Opening the client channel: address, TLS, bearer token.
//!
//! | `--server`          | `--tls-ca` | transport                                    |
//! |---------------------|------------|----------------------------------------------|
//! | `host:port`         | no         | plain HTTP/2                                 |
//! | `host:port`         | yes        | TLS, trusting the given CA (and web roots)   |
//! | `http://host:port`  | no         | plain HTTP/2                                 |
//! | `http://host:port`  | yes        | error: a CA asks for TLS, the URL says no    |
//! | `https://host:port` | either     | TLS, trusting the web roots (+ the given CA) |
//!
//! The certificate is checked against the host of `--server` unless
//! `--tls-domain` names another (the usual case when connecting to an IP).

use std::path::Path;

use anyhow::Context as _;
use mgz_service::proto::url_frontier_client::UrlFrontierClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig};

use super::{Client, Token};

/// Where and how to connect.
pub struct Target<'a> {
    /// `--server`.
    pub server: &'a str,
    /// `--tls-ca`: PEM file of trusted authorities.
    pub tls_ca: Option<&'a Path>,
    /// `--tls-domain`: name the certificate must carry.
    pub tls_domain: Option<&'a str>,
    /// Bearer token.
    pub token: Option<&'a str>,
}

/// The endpoint URL, and whether it asks for TLS.
fn endpoint_url(server: &str, tls_ca: bool) -> anyhow::Result<(String, bool)> {
    if let Some(rest) = server.strip_prefix("https://") {
        return Ok((format!("https://{rest}"), true));
    }
    if server.starts_with("http://") {
        anyhow::ensure!(
            !tls_ca,
            "--tls-ca given but the server URL is http://; use https:// or host:port"
        );
        return Ok((server.to_owned(), false));
    }
    anyhow::ensure!(
        !server.contains("://"),
        "unsupported scheme in {server} (use http:// or https://)"
    );
    let scheme = if tls_ca { "https" } else { "http" };
    Ok((format!("{scheme}://{server}"), tls_ca))
}

/// Web roots, plus the CA file and the name override when given.
fn tls_config(target: &Target<'_>) -> anyhow::Result<ClientTlsConfig> {
    let mut tls = ClientTlsConfig::new().with_enabled_roots();
    if let Some(path) = target.tls_ca {
        let pem = std::fs::read(path)
            .with_context(|| format!("reading the CA file {}", path.display()))?;
        tls = tls.ca_certificate(Certificate::from_pem(pem));
    }
    if let Some(domain) = target.tls_domain {
        tls = tls.domain_name(domain);
    }
    Ok(tls)
}

/// Connects and wraps the channel with the token and the message size limits.
pub async fn connect(target: &Target<'_>) -> anyhow::Result<Client> {
    let (url, tls) = endpoint_url(target.server, target.tls_ca.is_some())?;
    anyhow::ensure!(
        tls || target.tls_domain.is_none(),
        "--tls-domain needs TLS (--tls-ca or an https:// server)"
    );
    let mut endpoint = Channel::from_shared(url.clone())
        .with_context(|| format!("bad server address {}", target.server))?
        .tcp_nodelay(true);
    if tls {
        endpoint = endpoint
            .tls_config(tls_config(target)?)
            .context("TLS configuration")?;
    }
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| anyhow::anyhow!("connecting to {url}: {}", chain(&e)))?;
    let token = target
        .token
        .map(|t| format!("Bearer {t}").parse())
        .transpose()
        .context("token is not valid header text")?;
    Ok(
        UrlFrontierClient::new(InterceptedService::new(channel, Token(token)))
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20),
    )
}

/// The error and its sources on one line: a TLS refusal is only named deep
/// in the chain ("invalid peer certificate: UnknownIssuer").
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_follows_the_url_or_the_ca() {
        let url = |s, ca| endpoint_url(s, ca).unwrap();
        assert_eq!(url("a:1", false), ("http://a:1".into(), false));
        assert_eq!(url("a:1", true), ("https://a:1".into(), true));
        assert_eq!(url("https://a:1", false), ("https://a:1".into(), true));
        assert_eq!(url("https://a:1", true), ("https://a:1".into(), true));
        assert_eq!(url("http://a:1", false), ("http://a:1".into(), false));
    }

    #[test]
    fn contradictions_are_errors() {
        assert!(endpoint_url("http://a:1", true).is_err());
        assert!(endpoint_url("ftp://a:1", false).is_err());
    }
}
