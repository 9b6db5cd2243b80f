//! The crate's one error type.

/// Everything that can go wrong in the crawler's library code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrawlError {
    /// A `--resolve` argument that is not `PATTERN=IP[:PORT]`.
    #[error("bad --resolve mapping {0:?}: expected PATTERN=IP or PATTERN=IP:PORT")]
    BadResolve(String),
    /// The SSRF guard refused an address.
    #[error("refused to connect to {addr} for host {host}: {reason} address (use --allow-private)")]
    Blocked {
        /// Host name asked for.
        host: String,
        /// The address it resolved to.
        addr: std::net::IpAddr,
        /// Which class of address it is.
        reason: &'static str,
    },
    /// An HTTP-level failure (TLS, connect, timeout, protocol).
    #[error("http {kind}: {message}")]
    Http {
        /// Short kind used for statistics (`tls`: a certificate not trusted
        /// or not for the host, a failed handshake; `timeout`, `connect`,
        /// `body`, `request`).
        kind: &'static str,
        /// Human-readable detail.
        message: String,
    },
    /// A SQLite failure.
    #[error("database: {0}")]
    Db(#[from] rusqlite::Error),
    /// The page store's writer failed to commit (the SQLite error's text:
    /// the writer thread answers every row of a failed batch with it).
    #[error("page database: {0}")]
    Store(String),
    /// A file system failure.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// A sitemap that could not be parsed.
    #[error("sitemap: {0}")]
    Sitemap(String),
    /// An `--include`/`--exclude` pattern that does not compile.
    #[error("invalid regex: {0}")]
    Regex(#[from] regex::Error),
    /// The frontier failed.
    #[error("frontier: {0}")]
    Frontier(String),
    /// The frontier refused a write because an earlier durable write failed:
    /// a symptom, reported by every operation after the one that hit the
    /// failure (which reports the cause, a full disk say).
    #[error("frontier: {0}")]
    FrontierPoisoned(String),
    /// The status page could not start.
    #[error("status page: {0}")]
    Status(#[from] mgz_status::StatusError),
    /// A `--warc` file that cannot be appended to (not an uncompressed WARC,
    /// or damaged before its end); it is left as it was.
    #[error("warc file {path}: {reason}")]
    Warc {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file of the state directory that is not what it should be; it is
    /// left as it was.
    #[error("state file {path}: {reason}")]
    State {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A configuration value that makes no sense.
    #[error("config: {0}")]
    Config(String),
}

impl CrawlError {
    /// Short kind name for the `errors` object of the summary.
    pub fn kind(&self) -> &'static str {
        match self {
            CrawlError::BadResolve(_) | CrawlError::Config(_) | CrawlError::Regex(_) => "config",
            CrawlError::Status(_) => "status",
            CrawlError::Blocked { .. } => "ssrf_blocked",
            CrawlError::Http { kind, .. } => kind,
            CrawlError::Db(_) | CrawlError::Store(_) => "database",
            CrawlError::Io(_) => "io",
            CrawlError::Sitemap(_) => "sitemap",
            CrawlError::Frontier(_) | CrawlError::FrontierPoisoned(_) => "frontier",
            CrawlError::Warc { .. } => "warc",
            CrawlError::State { .. } => "state",
        }
    }
}
