//! `faultbench view RUNS_ROOT [--out DIR | --serve ADDR]`: the run viewer (a static site, see
//! `faultbench_view`), written to a folder or served on this machine.
//!
//! Where the site goes is [`folder`]'s choice (a private temporary folder when serving without
//! --out); the server is [`serve`]. While serving, SIGINT and SIGTERM are ours from before the
//! folder is made: during the build they remove a temporary folder and end the process at once
//! (status 130); while serving they stop the server, and the temporary folder is removed.

mod folder;
mod serve;

use folder::SiteFolder;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// Arguments of `faultbench view`.
#[derive(clap::Args)]
pub struct Args {
    /// A runs root, the release's `final_results/` folder, or a MANIFEST.csv.
    source: PathBuf,
    /// Where to write the site (default: `<RUNS_ROOT>/view`, or `view/` beside a MANIFEST.csv).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also serve the site over HTTP at ADDR (`8000`, `:8000`, `127.0.0.1:8000`, `localhost:0`);
    /// loopback only unless --allow-remote. Without --out the site goes to a new private
    /// temporary folder, removed on exit. Ctrl-C or SIGTERM stops.
    #[arg(long, value_name = "ADDR")]
    serve: Option<String>,
    /// Allow --serve on an address other than loopback (the site shows every ticket, output and
    /// diagnosis of the root to whoever can reach it).
    #[arg(long, requires = "serve")]
    allow_remote: bool,
}

/// Parses ADDR: a port alone means 127.0.0.1; names are resolved; a non-loopback address is
/// refused unless `allow_remote`.
pub fn parse_addr(addr: &str, allow_remote: bool) -> anyhow::Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    let text = addr.trim();
    let text = if let Some(port) = text.strip_prefix(':') {
        format!("127.0.0.1:{port}")
    } else if text.parse::<u16>().is_ok() {
        format!("127.0.0.1:{text}")
    } else {
        text.to_string()
    };
    let resolved: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|e| anyhow::anyhow!("--serve {addr}: not an address ({e}); try 127.0.0.1:8000"))?
        .collect();
    let Some(first) = resolved.first().copied() else {
        anyhow::bail!("--serve {addr}: resolves to no address");
    };
    if !allow_remote && !resolved.iter().all(|a| a.ip().is_loopback()) {
        anyhow::bail!(
            "--serve {addr}: {} is not a loopback address; the viewer shows every ticket, tool output and diagnosis of the runs root, so serving beyond this machine needs --allow-remote",
            first.ip()
        );
    }
    Ok(first)
}

/// SIGINT and SIGTERM, caught from the moment this is made (a signal before the first
/// `recv` is not lost).
struct Stop {
    interrupt: Signal,
    terminate: Signal,
}

impl Stop {
    fn catch() -> anyhow::Result<Self> {
        let catch = |kind| {
            signal(kind).map_err(|e| anyhow::anyhow!("cannot catch Ctrl-C and SIGTERM: {e}"))
        };
        Ok(Self {
            interrupt: catch(SignalKind::interrupt())?,
            terminate: catch(SignalKind::terminate())?,
        })
    }

    async fn recv(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let addr = match &args.serve {
        Some(a) => Some(parse_addr(a, args.allow_remote)?),
        None => None,
    };
    // A plain build keeps the default dispositions: Ctrl-C ends it where it is.
    let mut stop = match addr {
        Some(_) => Some(Stop::catch()?),
        None => None,
    };
    let folder = SiteFolder::choose(
        args.out.as_deref(),
        &args.source,
        addr.is_some(),
        &std::env::temp_dir(),
    )?;
    let t0 = std::time::Instant::now();
    let source = args.source.clone();
    // Opened here, without following a link below the runs root for the default `view/`.
    let site = folder.open()?;
    let build = tokio::task::spawn_blocking(move || faultbench_view::build_in(&source, &site));
    let built = match &mut stop {
        None => build.await,
        Some(stop) => tokio::select! {
            built = build => built,
            () = stop.recv() => {
                // The builder cannot be cancelled and the runtime would wait for it on the
                // way out: remove the folder and end here.
                if let Err(e) = folder.remove() {
                    eprintln!("note: {e:#}");
                }
                eprintln!("stopped");
                std::process::exit(130);
            }
        },
    };
    let summary = built.map_err(|e| anyhow::anyhow!("the site builder stopped: {e}"))??;
    for p in summary.problems.iter().take(10) {
        errln!("note: {p}");
    }
    if summary.problems.len() > 10 {
        errln!(
            "note: … {} more problems, listed on the index page",
            summary.problems.len() - 10
        );
    }
    errln!(
        "{} runs ({} with a full record), {} tickets: {} ({:.2} s)",
        summary.runs,
        summary.records,
        summary.scenarios,
        summary.index.display(),
        t0.elapsed().as_secs_f64()
    );
    let (Some(addr), Some(mut stop)) = (addr, stop) else {
        outln!("{}", summary.index.display());
        return Ok(ExitCode::SUCCESS);
    };
    let served = serve::serve(folder.path(), addr, serve::Limits::default(), stop.recv()).await;
    let removed = folder.remove();
    served?;
    removed?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::parse_addr;

    #[test]
    fn loopback_by_default_and_remote_only_when_allowed() {
        assert_eq!(
            parse_addr("8000", false).unwrap().to_string(),
            "127.0.0.1:8000"
        );
        assert_eq!(parse_addr(":0", false).unwrap().to_string(), "127.0.0.1:0");
        assert!(parse_addr("[::1]:9000", false).unwrap().ip().is_loopback());
        let e = parse_addr("0.0.0.0:8000", false).unwrap_err().to_string();
        assert!(e.contains("--allow-remote"), "{e}");
        assert!(parse_addr("0.0.0.0:8000", true).is_ok());
        assert!(parse_addr("not an address", false).is_err());
    }
}
