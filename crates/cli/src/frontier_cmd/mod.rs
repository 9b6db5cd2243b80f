//! `mgz frontier ...`: a URLFrontier client for any server speaking the API
//! (`mgz serve`, the reference Java server).

mod connect;
mod put;
mod read;

use std::process::ExitCode;

use anyhow::Context as _;
use mgz_service::proto::url_frontier_client::UrlFrontierClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

/// Arguments of `mgz frontier`.
#[derive(clap::Args)]
pub struct FrontierArgs {
    /// Server address: host:port, or a full http:// or https:// URL.
    #[arg(long, global = true, default_value = "127.0.0.1:7071")]
    server: String,
    /// PEM certificate(s) of the authority that signed the server's TLS
    /// certificate (for `mgz serve --tls-cert`); implies TLS for a bare host:port.
    #[arg(long, global = true)]
    tls_ca: Option<std::path::PathBuf>,
    /// Name to check the server's certificate against, when it differs from
    /// the host in --server (say, connecting to an IP address).
    #[arg(long, global = true)]
    tls_domain: Option<String>,
    /// Bearer token (also read from MGZ_TOKEN).
    #[arg(long, global = true, env = "MGZ_TOKEN", hide_env_values = true)]
    token: Option<String>,
    #[command(subcommand)]
    command: FrontierCommand,
}

#[derive(clap::Subcommand)]
enum FrontierCommand {
    /// Send URLs: text lines (one URL each) or JSONL URLItems (as `dump` writes).
    Put(put::PutArgs),
    /// Lease URLs due for fetching and print them.
    Get(read::GetArgs),
    /// Set the politeness delay of a queue, or the crawl's default.
    SetDelay(read::SetDelayArgs),
    /// Counters of a crawl or a queue, as JSON.
    Stats(read::StatsArgs),
    /// Queue keys of a crawl.
    ListQueues(read::ListQueuesArgs),
    /// URLs of a crawl or queue, as JSONL URLItems.
    ListUrls(read::ListUrlsArgs),
    /// Every URL of every crawl as JSONL URLItems (`known`), re-importable by `put`.
    Dump(read::DumpArgs),
}

/// A client with the bearer token attached to every call.
pub type Client = UrlFrontierClient<InterceptedService<Channel, Token>>;

/// Adds `authorization: Bearer ...` when a token is configured.
#[derive(Clone)]
pub struct Token(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for Token {
    fn call(&mut self, mut r: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            r.metadata_mut().insert("authorization", v.clone());
        }
        Ok(r)
    }
}

/// Runs one client command.
pub fn run(args: FrontierArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async move {
        let target = connect::Target {
            server: &args.server,
            tls_ca: args.tls_ca.as_deref(),
            tls_domain: args.tls_domain.as_deref(),
            token: args.token.as_deref(),
        };
        let client = connect::connect(&target).await?;
        match args.command {
            FrontierCommand::Put(a) => put::run(client, a).await,
            FrontierCommand::Get(a) => read::get(client, a).await,
            FrontierCommand::SetDelay(a) => read::set_delay(client, a).await,
            FrontierCommand::Stats(a) => read::stats(client, a).await,
            FrontierCommand::ListQueues(a) => read::list_queues(client, a).await,
            FrontierCommand::ListUrls(a) => read::list_urls(client, a).await,
            FrontierCommand::Dump(a) => read::dump(client, a).await,
        }
    })
}
