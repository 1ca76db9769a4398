//! Every lab directory we ship must be valid for Kathará itself.
//!
//! Runs the real `kathara lstart --dry-mode -d DIR` (Kathará's offline validation; no engine
//! needed) on every lab under `topologies/` and `crates/faultbench-emu/tests/labs/`. Kathará is
//! found like the backend finds it: `$FAULTBENCH_KATHARA`, a `kathara` on `PATH`, or the pip
//! venv that `scripts/install-deps.sh` creates at /opt/faultbench/kathara-venv. Without it this
//! test fails and says how to install it (CI installs it).

use faultbench_emu::kathara::{KatharaCli, KatharaCliError};
use std::path::{Path, PathBuf};

fn labs_under(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.join("lab.conf").is_file() {
            out.push(p);
        }
    }
}

fn kathara() -> KatharaCli {
    KatharaCli::discover().unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn every_shipped_lab_passes_kathara_dry_mode() {
    let cli = kathara();
    let version = cli.version().await.unwrap();
    assert!(
        version.starts_with("3."),
        "Kathará {version}: the backend targets 3.x"
    );

    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut labs = Vec::new();
    labs_under(&repo.join("topologies"), &mut labs);
    let topologies = labs.len();
    labs_under(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/labs"),
        &mut labs,
    );
    assert!(
        topologies >= 3,
        "expected the shipped topologies under {}",
        repo.join("topologies").display()
    );
    labs.sort();

    // Two at a time: each dry run is a Python process of a second or two.
    let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(2));
    let mut runs = tokio::task::JoinSet::new();
    for dir in labs.clone() {
        let (cli, sem) = (cli.clone(), sem.clone());
        runs.spawn(async move {
            let _p = sem.acquire_owned().await;
            (dir.clone(), cli.dry_run(&dir).await)
        });
    }
    let mut failures = Vec::new();
    while let Some(r) = runs.join_next().await {
        let (dir, result) = r.unwrap();
        if let Err(e) = result {
            failures.push(format!("{}: {e}", dir.display()));
        }
    }
    eprintln!("kathara {version}: {} labs checked", labs.len());
    assert!(
        failures.is_empty(),
        "Kathará rejects:\n{}",
        failures.join("\n")
    );
}

#[tokio::test]
async fn dry_mode_catches_what_kathara_rejects() {
    // The check above is only worth something if a broken lab fails it.
    let cli = kathara();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lab.conf"), "r1[0]=\"A.1\"\npc1[0]=A\n").unwrap();
    let e = cli.dry_run(dir.path()).await.unwrap_err();
    assert!(matches!(e, KatharaCliError::Rejected { .. }), "{e}");
    let e = e.to_string();
    assert!(
        e.contains("non-alphanumeric") && e.contains("SyntaxError"),
        "{e}"
    );
    std::fs::write(dir.path().join("lab.conf"), "r1[0]=A\nr1[2]=B\n").unwrap();
    let e = cli.dry_run(dir.path()).await.unwrap_err();
    assert!(
        e.to_string().contains("NonSequentialMachineInterfaceError"),
        "{e}"
    );
}
