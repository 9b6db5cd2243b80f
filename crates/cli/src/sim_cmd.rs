//! `mgz sim ...`: serve the synthetic web, print its seeds, its ground truth,
//! or a benchmark URL stream.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context;
use mgz_sim::{Sim, SimConfig, SimServer, TruthOptions};

/// Arguments of `mgz sim`.
#[derive(clap::Args)]
pub struct SimArgs {
    #[command(subcommand)]
    command: SimCommand,
}

/// The shape of the web (shared by serve, seeds and truth).
#[derive(clap::Args, Clone)]
struct WebArgs {
    /// Seed of every random choice.
    #[arg(long, default_value_t = SimConfig::default().seed)]
    seed: u64,
    /// Number of virtual hosts.
    #[arg(long, default_value_t = SimConfig::default().hosts)]
    hosts: u32,
    /// Total number of regular pages (Zipf over hosts).
    #[arg(long, default_value_t = SimConfig::default().pages)]
    pages: u32,
}

impl WebArgs {
    fn config(&self) -> SimConfig {
        SimConfig {
            seed: self.seed,
            hosts: self.hosts,
            pages: self.pages,
            ..SimConfig::default()
        }
    }
}

#[derive(clap::Subcommand)]
enum SimCommand {
    /// Serve the web over HTTP/1.1, every `.sim` host on one port (Ctrl-C stops).
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// Address of the control endpoint (`GET /_sim/log`, `GET /_sim/stats`).
        #[arg(long)]
        control: Option<SocketAddr>,
        /// Latency added to every answer, in milliseconds.
        #[arg(long, default_value_t = 0)]
        latency_ms: u64,
        /// Extra latency of every answer from a slow host, in milliseconds.
        #[arg(long, default_value_t = SimConfig::default().slow_ms)]
        slow_ms: u64,
        /// Body size of oversized pages, in bytes.
        #[arg(long, default_value_t = SimConfig::default().oversized_bytes)]
        oversized_bytes: usize,
        /// Request records kept for the control endpoint (older ones are dropped).
        #[arg(long, default_value_t = SimConfig::default().log_capacity)]
        log_capacity: usize,
        #[command(flatten)]
        web: WebArgs,
    },
    /// Print the seed URLs.
    Seeds {
        #[command(flatten)]
        web: WebArgs,
    },
    /// Print the sorted canonical URLs of the HTML pages a correct crawler fetches.
    Truth {
        /// Links followed from a seed.
        #[arg(long, default_value_t = 20)]
        max_depth: u32,
        /// Do not obey robots.txt.
        #[arg(long)]
        ignore_robots: bool,
        /// Also fetch the URLs listed in sitemaps announced by robots.txt.
        #[arg(long)]
        follow_sitemaps: bool,
        /// Leave out pages marked `<meta name="robots" content="noindex">`.
        #[arg(long)]
        exclude_noindex: bool,
        #[command(flatten)]
        web: WebArgs,
    },
    /// Print a stream of crawl-shaped URLs for benchmarks.
    Urls {
        /// How many URLs.
        #[arg(long)]
        count: u64,
        /// Seed of the stream.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Probability that a URL repeats one of the last 4,096 (0 to 1).
        #[arg(long, default_value_t = 0.5, value_parser = probability)]
        dup_rate: f64,
    },
}

/// `--dup-rate`: a probability. The library clamps what it is given; from
/// the command line `2` or `NaN` is a mistake to say, not to clamp.
fn probability(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        Ok(_) => Err(format!("{s:?}: a probability, from 0 to 1")),
        Err(e) => Err(format!("{s:?}: {e}")),
    }
}

/// Runs `mgz sim ...`.
pub fn run(args: SimArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        SimCommand::Serve {
            listen,
            control,
            latency_ms,
            slow_ms,
            oversized_bytes,
            log_capacity,
            web,
        } => {
            let mut cfg = web.config();
            cfg.latency_ms = latency_ms;
            cfg.slow_ms = slow_ms;
            cfg.oversized_bytes = oversized_bytes;
            cfg.log_capacity = log_capacity;
            serve(cfg, listen, control)
        }
        SimCommand::Seeds { web } => {
            let sim = Sim::new(&web.config())?;
            print_lines(sim.seeds())
        }
        SimCommand::Truth {
            max_depth,
            ignore_robots,
            follow_sitemaps,
            exclude_noindex,
            web,
        } => {
            let sim = Sim::new(&web.config())?;
            let mut opts = TruthOptions::new(max_depth);
            opts.obey_robots = !ignore_robots;
            opts.follow_sitemaps = follow_sitemaps;
            opts.include_noindex = !exclude_noindex;
            print_lines(sim.truth(&opts))
        }
        SimCommand::Urls {
            count,
            seed,
            dup_rate,
        } => {
            let stream = mgz_sim::UrlStream::new(seed).with_dup_rate(dup_rate);
            print_lines(stream.take(usize::try_from(count).unwrap_or(usize::MAX)))
        }
    }
}

fn serve(
    cfg: SimConfig,
    listen: SocketAddr,
    control: Option<SocketAddr>,
) -> anyhow::Result<ExitCode> {
    let hosts = cfg.hosts;
    let server = SimServer::start_blocking(cfg, listen, control).context("starting the sim")?;
    println!("mgz sim: serving {hosts} hosts on http://{}", server.addr());
    println!("mgz sim: crawler resolve mapping {}", server.resolve_spec());
    if let Some(c) = server.control_addr() {
        println!("mgz sim: request log at http://{c}/_sim/log");
    }
    std::io::stdout().flush()?;
    loop {
        std::thread::park();
    }
}

fn print_lines<I: IntoIterator<Item = String>>(lines: I) -> anyhow::Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in lines {
        if let Err(e) = writeln!(out, "{line}") {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(ExitCode::SUCCESS);
            }
            return Err(e.into());
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dup_rate_is_a_probability() {
        for good in ["0", "0.5", "1", " 0.25 ", "1e-3"] {
            assert!(probability(good).is_ok(), "{good:?} was refused");
        }
        assert_eq!(probability("0.25"), Ok(0.25));
        for bad in ["2", "-0.1", "NaN", "inf", "half", ""] {
            let err = probability(bad).expect_err(bad);
            assert!(err.contains(&format!("{bad:?}")), "{bad:?}: {err}");
        }
    }
}
