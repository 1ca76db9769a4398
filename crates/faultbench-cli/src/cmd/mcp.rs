//! `faultbench mcp`: serve the 22 network tools of a running lab over MCP on stdio.
//!
//! stdout carries the MCP protocol, so this command never prints to it; diagnostics go to
//! stderr. The server itself lives in `faultbench_emu::tools::mcp`.

use anyhow::{Context, bail};
use faultbench_core::toolbox::Policy;
use faultbench_emu::tools::mcp::{McpServer, ServeOptions, build_toolbox};
use faultbench_emu::tools::{Reachability, ToolOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `faultbench mcp`.
#[derive(clap::Args)]
pub struct Args {
    /// Instance name of a running netns lab to attach to (from `faultbench lab up --name`).
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "mock",
        conflicts_with = "mock"
    )]
    lab: Option<String>,
    /// Serve a mock network instead: a .toml rule file or a .json recorded exec trace.
    #[arg(long, value_name = "FILE")]
    mock: Option<PathBuf>,
    /// `full` (as in the paper) or `read-only` (calls that change the network are refused).
    #[arg(long, default_value = "full", value_parser = clap::builder::ValueParser::new(|s: &str| s.parse::<Policy>()))]
    policy: Policy,
    /// Append one JSON line per tool call (tool, args, duration, output size, flags).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Serve telemetry from this JSONL file (written by the run's collector since deploy)
    /// instead of sampling from now on.
    #[arg(long, value_name = "FILE")]
    telemetry: Option<PathBuf>,
    /// Seconds between the server's own telemetry samples (0: no telemetry).
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    sample_every: u64,
    /// Timeout of one command inside a device, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    timeout: u64,
    /// Pairs for get_reachability: `all`, or `sample:K:SEED` (K destinations chosen by SEED).
    #[arg(long, default_value = "all", value_parser = parse_reachability)]
    reachability: Reachability,
}

fn parse_reachability(s: &str) -> Result<Reachability, String> {
    if s == "all" {
        return Ok(Reachability::AllPairs);
    }
    let bad = || format!("`{s}`: expected `all` or `sample:K:SEED`, e.g. sample:2:42");
    let mut it = s.split(':');
    match (it.next(), it.next(), it.next(), it.next()) {
        (Some("sample"), Some(k), Some(seed), None) => Ok(Reachability::Sample {
            destinations: k.parse().map_err(|_| bad())?,
            seed: seed.parse().map_err(|_| bad())?,
        }),
        _ => Err(bad()),
    }
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let lab = match (&args.lab, &args.mock) {
        (Some(name), None) => faultbench_emu::netns::attach(name).with_context(|| {
            format!("cannot attach to lab `{name}` (is it up? `faultbench lab list`)")
        })?,
        (None, Some(file)) => faultbench_emu::mock::load_lab(file, None)
            .with_context(|| format!("cannot load mock network {}", file.display()))?,
        _ => bail!("give exactly one of --lab NAME or --mock FILE"),
    };
    let opts = ServeOptions {
        policy: args.policy,
        config: ToolOptions {
            exec_timeout: Duration::from_secs(args.timeout.max(1)),
            reachability: args.reachability,
            ..ToolOptions::default()
        },
        record: args.record,
        telemetry_file: args.telemetry,
        sample_every: (args.sample_every > 0).then(|| Duration::from_secs(args.sample_every)),
    };
    let tools = build_toolbox(lab, &opts).context("cannot open the --record file")?;
    eprintln!(
        "faultbench mcp: serving {} tools on stdio (policy {})",
        tools.specs().len(),
        opts.policy
    );
    McpServer::new(tools).serve_stdio().await?;
    Ok(ExitCode::SUCCESS)
}
