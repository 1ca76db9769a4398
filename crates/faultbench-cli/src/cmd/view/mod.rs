//! `faultbench view RUNS_ROOT [--out DIR | --serve ADDR]`: the run viewer (a static site, see
//! `faultbench_view`), written to a folder or served on this machine.

mod serve;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `faultbench view`.
#[derive(clap::Args)]
pub struct Args {
    /// A runs root, the release's `final_results/` folder, or a MANIFEST.csv.
    source: PathBuf,
    /// Where to write the site (default: `<RUNS_ROOT>/view`, or `view/` beside a MANIFEST.csv).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also serve the site over HTTP at ADDR (`8000`, `:8000`, `127.0.0.1:8000`, `localhost:0`);
    /// loopback only unless --allow-remote. Without --out the site goes to a temporary folder
    /// that is removed on exit. Ctrl-C stops.
    #[arg(long, value_name = "ADDR")]
    serve: Option<String>,
    /// Allow --serve on an address other than loopback (the site shows every ticket, output and
    /// diagnosis of the root to whoever can reach it).
    #[arg(long, requires = "serve")]
    allow_remote: bool,
}

/// The default output: `view/` inside the runs root (or beside a MANIFEST.csv), as the trusted
/// folder the user named and the part derived from it, which must not pass through a link.
fn default_out(source: &Path) -> (PathBuf, &'static str) {
    if source.is_dir() {
        (source.to_path_buf(), "view")
    } else {
        (
            source.parent().map(Path::to_path_buf).unwrap_or_default(),
            "view",
        )
    }
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

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let addr = match &args.serve {
        Some(a) => Some(parse_addr(a, args.allow_remote)?),
        None => None,
    };
    let temp = args.out.is_none() && addr.is_some();
    // A folder the user named is used as given; `view/` inside the runs root is derived from a
    // root that may come from someone else, and is never written through a link.
    let (base, below) = match (&args.out, temp) {
        (Some(o), _) => (o.clone(), ""),
        (None, true) => (
            std::env::temp_dir().join(format!("faultbench-view-{}", std::process::id())),
            "",
        ),
        (None, false) => default_out(&args.source),
    };
    let t0 = std::time::Instant::now();
    let source = args.source.clone();
    let site = faultbench_core::output::OutputDir::open(&base, below)?;
    let out = site.path().to_path_buf();
    let summary = tokio::task::spawn_blocking(move || faultbench_view::build_in(&source, &site))
        .await
        .map_err(|e| anyhow::anyhow!("the site builder stopped: {e}"))??;
    for p in summary.problems.iter().take(10) {
        eprintln!("note: {p}");
    }
    if summary.problems.len() > 10 {
        eprintln!(
            "note: … {} more problems, listed on the index page",
            summary.problems.len() - 10
        );
    }
    eprintln!(
        "{} runs ({} with a full record), {} tickets: {} ({:.2} s)",
        summary.runs,
        summary.records,
        summary.scenarios,
        summary.index.display(),
        t0.elapsed().as_secs_f64()
    );
    let Some(addr) = addr else {
        println!("{}", summary.index.display());
        return Ok(ExitCode::SUCCESS);
    };
    let result = serve::serve(&out, addr).await;
    if temp {
        let _ = std::fs::remove_dir_all(&out);
    }
    result.map(|_| ExitCode::SUCCESS)
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
