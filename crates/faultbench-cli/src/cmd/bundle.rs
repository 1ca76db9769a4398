//! `faultbench keygen`, `pack`, `verify` and `leaderboard`: results anyone can check
//! ([`faultbench_bundle`]).

use faultbench_bundle::leaderboard::{self, LeaderboardEntry};
use faultbench_bundle::{PackOptions, PublicKey, SecretKey, VerifyOptions};
use faultbench_report::stats::Bootstrap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `faultbench keygen`.
#[derive(clap::Args)]
pub struct KeygenArgs {
    /// Folder for `bundle.key` (secret, mode 0600) and `bundle.pub` (public); existing keys
    /// are never replaced.
    #[arg(long)]
    out: PathBuf,
}

/// Arguments of `faultbench pack`.
#[derive(clap::Args)]
pub struct PackArgs {
    /// The runs root to pack.
    root: PathBuf,
    /// The bundle file to write (e.g. `results.fbundle`).
    #[arg(long)]
    out: PathBuf,
    /// Sign with this secret key (`faultbench keygen`); an unsigned bundle never verifies.
    #[arg(long)]
    key: Option<PathBuf>,
    /// Bootstrap resamples of the bundled tables (as `faultbench report --resamples`).
    #[arg(long, default_value_t = 10_000)]
    resamples: usize,
    /// Seed of the bundled tables' bootstrap.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// Arguments of `faultbench verify`.
#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The bundle.
    bundle: PathBuf,
    /// Trusted public key(s) of the submitter (`bundle.pub`); without one, the key in the
    /// bundle is used and the verdict says it was not pinned.
    #[arg(long)]
    pubkey: Vec<PathBuf>,
    /// Accept runs made on the mock emulator (development only; never ranked).
    #[arg(long)]
    allow_mock: bool,
    /// Print the verdicts as JSON.
    #[arg(long)]
    json: bool,
}

/// Arguments of `faultbench leaderboard`.
#[derive(clap::Args)]
pub struct LeaderboardArgs {
    /// Bundles to show (each verified here; unverified ones are shown as such, never ranked).
    bundles: Vec<PathBuf>,
    /// Where to write the site (index.html, and each bundle's run viewer under bundles/).
    #[arg(long)]
    out: PathBuf,
    /// A run registry (e.g. the release's final_results/MANIFEST.csv) shown as an unsigned,
    /// "registry only" entry: its numbers, nothing verified.
    #[arg(long)]
    registry: Vec<PathBuf>,
    /// Trusted public key(s); when given, bundles must be signed by one of them.
    #[arg(long)]
    pubkey: Vec<PathBuf>,
    /// Accept runs made on the mock emulator (development only; such rows are never ranked).
    #[arg(long)]
    allow_mock: bool,
}

fn read_pubkeys(paths: &[PathBuf]) -> anyhow::Result<Vec<PublicKey>> {
    paths
        .iter()
        .map(|p| PublicKey::read(p).map_err(anyhow::Error::from))
        .collect()
}

pub async fn keygen(a: KeygenArgs) -> anyhow::Result<ExitCode> {
    let (secret, public) = faultbench_bundle::keygen(&a.out)?;
    let pk = PublicKey::read(&public)?;
    outln!(
        "secret key {} (keep it private), public key {} (fingerprint {}): publish the public key with your bundles",
        secret.display(),
        public.display(),
        pk.fingerprint()
    );
    Ok(ExitCode::SUCCESS)
}

pub async fn pack(a: PackArgs) -> anyhow::Result<ExitCode> {
    let key = a.key.as_deref().map(SecretKey::read).transpose()?;
    if key.is_none() {
        errln!("warning: no --key: the bundle is unsigned and will not verify");
    }
    let opts = PackOptions {
        key,
        bootstrap: Bootstrap {
            resamples: a.resamples.min(faultbench_report::stats::MAX_RESAMPLES),
            seed: a.seed,
        },
    };
    let root = a.root.clone();
    let out = a.out.clone();
    let s =
        tokio::task::spawn_blocking(move || faultbench_bundle::pack(&root, &out, &opts)).await??;
    outln!(
        "packed {} run(s) into {}: {} member(s), {} bytes ({} uncompressed); dataset {}; {}",
        s.runs,
        s.path.display(),
        s.members,
        s.bytes,
        s.uncompressed,
        &s.dataset[..16.min(s.dataset.len())],
        match &s.signed_by {
            Some(f) => format!("signed by key {f}"),
            None => "unsigned".into(),
        }
    );
    Ok(ExitCode::SUCCESS)
}

pub async fn verify(a: VerifyArgs) -> anyhow::Result<ExitCode> {
    let opts = VerifyOptions {
        pubkeys: read_pubkeys(&a.pubkey)?,
        allow_mock: a.allow_mock,
        ..VerifyOptions::default()
    };
    let path = a.bundle.clone();
    let v =
        match tokio::task::spawn_blocking(move || faultbench_bundle::verify(&path, &opts)).await? {
            Ok(v) => v,
            Err(e) => {
                errln!("FAILED: {e}");
                return Ok(ExitCode::from(1));
            }
        };
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&v.rules)?);
    } else {
        for r in &v.rules {
            outln!(
                "{:4}  {:<18} {}",
                if r.passed { "ok" } else { "FAIL" },
                r.rule.name(),
                r.detail
            );
        }
    }
    match v.first_failure() {
        None => {
            outln!("verified: {}", a.bundle.display());
            Ok(ExitCode::SUCCESS)
        }
        Some(f) => {
            errln!(
                "FAILED: {}: rule {}: {}",
                a.bundle.display(),
                f.rule.name(),
                f.detail
            );
            Ok(ExitCode::from(1))
        }
    }
}

pub async fn leaderboard(a: LeaderboardArgs) -> anyhow::Result<ExitCode> {
    if a.bundles.is_empty() && a.registry.is_empty() {
        anyhow::bail!("give at least one bundle or --registry MANIFEST.csv");
    }
    let opts = VerifyOptions {
        pubkeys: read_pubkeys(&a.pubkey)?,
        allow_mock: a.allow_mock,
        ..VerifyOptions::default()
    };
    let mut entries: Vec<LeaderboardEntry> = Vec::new();
    for b in a.bundles {
        entries.push(LeaderboardEntry::Bundle(b));
    }
    for r in a.registry {
        entries.push(LeaderboardEntry::Registry(r));
    }
    let out = a.out.clone();
    let site =
        tokio::task::spawn_blocking(move || leaderboard::build(&entries, &out, &opts)).await??;
    for row in &site.rows {
        outln!(
            "{:<12} {}  {}",
            row.status_label(),
            row.source,
            row.status_detail
        );
    }
    outln!("leaderboard written: {}", site.index.display());
    Ok(ExitCode::SUCCESS)
}
