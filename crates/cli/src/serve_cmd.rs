//! `mgz serve`: the URLFrontier 2.6 gRPC API over a PowerCache state directory.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use mgz_frontier::{Durability, Frontier, FrontierOptions, SeenFactory};
use mgz_service::{LogControl, Server, ServerConfig, shutdown_signal};

/// Arguments of `mgz serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// gRPC address; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:7071")]
    listen: SocketAddr,
    /// State directory of the frontier (created if missing).
    #[arg(long, default_value = "mgz-frontier")]
    state: PathBuf,
    /// Seen-set backend of each crawl: fingerprint (quasi-exact, 2^-36, ~5 B/URL),
    /// compact (exact, ~15 B/URL), hash, bloom, xtrie, tst.
    #[arg(long, default_value = "fingerprint")]
    seen: String,
    /// Serve Prometheus metrics on this address (`/metrics`).
    #[arg(long)]
    metrics: Option<SocketAddr>,
    /// PEM certificate chain for TLS (with --tls-key).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// PEM private key for TLS (with --tls-cert).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Bearer token clients must send (also read from MGZ_TOKEN).
    #[arg(long, env = "MGZ_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Largest gRPC message accepted or sent, in bytes (at least 1024:
    /// below that ordinary requests and URL batches would be refused).
    #[arg(long, default_value_t = 16 << 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1024..))]
    max_message_bytes: usize,
    /// Concurrent streams per client connection (at least 1: with 0 no
    /// client could make a call).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    max_streams: u32,
    /// Group-commit interval in ms (acks wait for the fsync); 0 = no fsync, OS buffer only.
    #[arg(long, default_value_t = 50)]
    commit_ms: u64,
    /// Threads that flush and compact the store (default: the library's,
    /// see mgz_frontier::StoreOptions::worker_threads).
    #[arg(long)]
    store_workers: Option<u8>,
    /// Log filter (tracing EnvFilter directives); SetLogLevel refines it at run time.
    #[arg(long, default_value = "info,fjall=warn,lsm_tree=warn")]
    log: String,
}

/// Runs the server until SIGTERM or Ctrl-C, then drains and flushes.
pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let log = Arc::new(LogControl::install(&args.log)?);
    let mut store = mgz_frontier::StoreOptions::default();
    if let Some(n) = args.store_workers {
        store.worker_threads = n;
    }
    let opts = FrontierOptions {
        seen: seen_factory(&args.seen)?,
        durability: durability(args.commit_ms),
        store,
        ..FrontierOptions::default()
    };
    let frontier = Frontier::open(&args.state, opts)
        .with_context(|| format!("opening frontier state {}", args.state.display()))?;
    let config = ServerConfig {
        listen: args.listen,
        metrics: args.metrics,
        tls: args.tls_cert.zip(args.tls_key),
        token: args.token.filter(|t| !t.is_empty()),
        max_message_bytes: args.max_message_bytes,
        max_concurrent_streams: args.max_streams,
        drain_timeout: Duration::from_secs(10),
        seen_backend: args.seen.clone(),
        get_chunk_urls: mgz_service::rpc::get::DEFAULT_CHUNK_URLS,
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async move {
        let server = Server::bind(config, Arc::new(frontier), log).await?;
        server.serve(shutdown_signal()).await
    })?;
    Ok(ExitCode::SUCCESS)
}

fn durability(commit_ms: u64) -> Durability {
    match commit_ms {
        0 => Durability::OsBuffer,
        ms => Durability::GroupCommit {
            interval: Duration::from_millis(ms),
        },
    }
}

/// The seen-set backend named on the command line.
fn seen_factory(name: &str) -> anyhow::Result<SeenFactory> {
    mgz_frontier::seen_factory(name, 10_000_000)
        .map_err(|e| anyhow::anyhow!("seen backend {name:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        serve: super::ServeArgs,
    }

    #[test]
    fn the_default_seen_backend_is_fingerprint_like_the_crawler() {
        // The seen-set benchmarks put fingerprint first (fewest bytes, fastest
        // put); `mgz crawl` and `mgz bench frontier` use it too.
        let cli = Cli::try_parse_from(["serve"]).unwrap();
        assert_eq!(cli.serve.seen, "fingerprint");
        assert!(super::seen_factory(&cli.serve.seen).is_ok());
        assert!(super::seen_factory("no-such-backend").is_err());
    }

    /// Limits under which no client could work are refused when the
    /// arguments are read (they were taken, and every call then failed).
    #[test]
    fn limits_that_allow_no_call_are_refused() {
        for (flag, bad, good) in [
            ("--max-streams", "0", "1"),
            ("--max-message-bytes", "0", "1024"),
            ("--max-message-bytes", "1023", "1024"),
        ] {
            let err = Cli::try_parse_from(["serve", flag, bad])
                .err()
                .unwrap_or_else(|| panic!("{flag} {bad} was taken"));
            assert!(err.to_string().contains(flag), "{flag} {bad}: {err}");
            let cli = Cli::try_parse_from(["serve", flag, good]).unwrap();
            assert!(cli.serve.max_streams >= 1 && cli.serve.max_message_bytes >= 1024);
        }
    }
}
