//! `faultbench`: the command-line tool.
//!
//! Each subcommand lives in its own module under `cmd/`, exposing `Args` (or a subcommand enum)
//! and `run`. Exit codes: 0 success, 1 a check failed (invalid files, failed probes…),
//! 2 usage or environment error.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[macro_use]
mod term;
mod cmd;

/// Benchmark LLM network-troubleshooting agents on live emulated networks.
#[derive(Parser)]
#[command(name = "faultbench", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Check scenario files (files or folders, recursive).
    Validate(cmd::validate::Args),
    /// Dataset composition (the paper's Table 2) and persona invariants.
    Stats(cmd::stats::Args),
    /// List scenario ids of a scope, or write a manifest CSV.
    List(cmd::list::Args),
    /// Bring labs up, run commands in them, tear them down.
    #[command(subcommand)]
    Lab(cmd::lab::LabCmd),
    /// What this host can emulate and what is missing.
    Doctor(cmd::doctor::Args),
    /// Check that scenarios inject and verify on a live lab.
    #[command(subcommand)]
    Scenario(cmd::scenario::ScenarioCmd),
    /// Generate fault scenarios from families and verify each one on a live lab.
    #[cfg(feature = "generate")]
    Generate(Box<cmd::generate::Args>),
    /// Serve the 22 network tools of a running lab over MCP (stdio).
    #[cfg(feature = "mcp")]
    Mcp(cmd::mcp::Args),
    /// Score diagnoses and compare judges.
    #[command(subcommand)]
    Judge(cmd::judge::JudgeCmd),
    /// Run the benchmark.
    Bench(Box<cmd::bench::Args>),
    /// Gather runs roots of one configuration (the shards of `bench --shard K/N`) into one.
    Merge(cmd::merge::Args),
    /// Render the paper's tables and charts from run records.
    Report(cmd::report::Args),
    /// Browse every run of a runs root: a static site (or --serve it locally).
    View(cmd::view::Args),
    /// Make an Ed25519 key pair for signing result bundles.
    #[cfg(feature = "bundle")]
    Keygen(cmd::bundle::KeygenArgs),
    /// Pack a runs root into one signed, verifiable result bundle.
    #[cfg(feature = "bundle")]
    Pack(cmd::bundle::PackArgs),
    /// Check a result bundle: signature, hashes, leaderboard rules, scores and tables.
    #[cfg(feature = "bundle")]
    Verify(cmd::bundle::VerifyArgs),
    /// A static leaderboard site of result bundles (verified ones ranked).
    #[cfg(feature = "bundle")]
    Leaderboard(cmd::bundle::LeaderboardArgs),
}

fn main() -> ExitCode {
    restore_sigpipe();
    // This binary is also the kernel emulations' multi-call binary (`ip`, `tc`, `bridge`, `nft`
    // inside lab devices, and their daemons), for installs without `faultbench-netshim`.
    if let Some(code) = faultbench_emu::shims::run_as_shim() {
        std::process::exit(code);
    }
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Cmd::Validate(a) => cmd::validate::run(a).await,
            Cmd::Stats(a) => cmd::stats::run(a).await,
            Cmd::List(a) => cmd::list::run(a).await,
            Cmd::Lab(c) => cmd::lab::run(c).await,
            Cmd::Doctor(a) => cmd::doctor::run(a).await,
            Cmd::Scenario(c) => cmd::scenario::run(c).await,
            #[cfg(feature = "generate")]
            Cmd::Generate(a) => cmd::generate::run(*a).await,
            #[cfg(feature = "mcp")]
            Cmd::Mcp(a) => cmd::mcp::run(a).await,
            Cmd::Judge(c) => cmd::judge::run(c).await,
            Cmd::Bench(a) => cmd::bench::run(*a).await,
            Cmd::Merge(a) => cmd::merge::run(a).await,
            Cmd::Report(a) => cmd::report::run(a).await,
            Cmd::View(a) => cmd::view::run(a).await,
            #[cfg(feature = "bundle")]
            Cmd::Keygen(a) => cmd::bundle::keygen(a).await,
            #[cfg(feature = "bundle")]
            Cmd::Pack(a) => cmd::bundle::pack(a).await,
            #[cfg(feature = "bundle")]
            Cmd::Verify(a) => cmd::bundle::verify(a).await,
            #[cfg(feature = "bundle")]
            Cmd::Leaderboard(a) => cmd::bundle::leaderboard(a).await,
        }
    });
    report_process_cpu();
    match result {
        Ok(code) => code,
        Err(e) => {
            // Errors quote file names and input values: shown escaped.
            errln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// With `FAULTBENCH_TIMING` set, prints the CPU this process used (every thread) apart from
/// that of the children it reaped (commands in lab devices, startup scripts): the harness's own
/// share, which a `time faultbench …` cannot separate.
fn report_process_cpu() {
    if std::env::var_os("FAULTBENCH_TIMING").is_none() {
        return;
    }
    let usage = |who| {
        // SAFETY: an all-zero `rusage` is valid plain data.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage(2) only writes the struct it is given.
        unsafe { libc::getrusage(who, &mut r) };
        let ms = |t: libc::timeval| t.tv_sec.max(0) as u64 * 1000 + t.tv_usec.max(0) as u64 / 1000;
        (ms(r.ru_utime), ms(r.ru_stime))
    };
    let (su, ss) = usage(libc::RUSAGE_SELF);
    let (cu, cs) = usage(libc::RUSAGE_CHILDREN);
    eprintln!(
        "[faultbench timing] process: cpu self {} ms (user {su}, sys {ss}), children {} ms \
         (user {cu}, sys {cs})",
        su + ss,
        cu + cs
    );
}

/// Rust ignores SIGPIPE, which turns `faultbench list | head` into a panic on the next write.
/// Restore the default so that the process ends quietly like other command-line tools.
fn restore_sigpipe() {
    // SAFETY: setting a signal disposition to its default at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
