//! Live tests of the benchmark topologies on real Linux namespaces (root, FRR and the lab
//! packages; CI runs them as root). They never skip: without root they fail with the reason.
//!
//! - every directory under `topologies/` comes up, reaches its healthy baseline and tears down
//!   without leaving a lab behind;
//! - scenario files of the public release (found through `faultbench-testkit`) pass
//!   `scenario check` on their labs: the injection applies and its `[POST-INJECT-CHECK]` holds
//!   (false premises: the baseline holds). Files that cannot pass on this kernel must come out
//!   as `unsupported_on_host` with the reason listed in [`UNSUPPORTED_HERE`]. By default the
//!   first file of every topology folder × layer present is checked (bounded work whatever the
//!   checkout: 28 labs on our partial copy, 56 on a full one); `FAULTBENCH_RELEASE_LIVE=all`
//!   checks every file present (a full checkout: 560 labs, hours on 2 cores).
//!
//! Labs run a few at a time (one semaphore shared by both tests) to stay fast on 2 cores
//! without starving convergence.

use faultbench::core::check::{CheckOptions, CheckOutcome, check_scenario, wait_for_baseline};
use faultbench::core::emulator::{Emulator, LabRequest};
use faultbench::core::lab::{Topology, TopologyResolver};
use faultbench::core::scenario::{Scenario, ScenarioFile};
use faultbench::emu::netns::NetnsEmulator;
use faultbench_testkit::Release;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Labs alive at once across this file's tests.
static LABS_AT_ONCE: Semaphore = Semaphore::const_new(2);

/// Release files that cannot pass on this kernel, with a piece of the expected reason. Empty:
/// every file passes here (the kernel's gaps — 802.1Q, VLAN filtering, bonding, dummy — are
/// emulated by the netns backend, and no file needs netem delay/jitter or VRF).
const UNSUPPORTED_HERE: &[(&str, &str)] = &[];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn topologies() -> Vec<Topology> {
    TopologyResolver::new([repo().join("topologies")]).list()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn emulator() -> Arc<NetnsEmulator> {
    faultbench::emu::netns::preflight().unwrap_or_else(|e| {
        panic!("live lab tests need root, FRR and the lab packages (scripts/install-deps.sh): {e}")
    });
    Arc::new(NetnsEmulator::new())
}

fn running_lab_names() -> Vec<String> {
    faultbench::emu::netns::list()
        .into_iter()
        .map(|s| s.name)
        .collect()
}

#[test]
fn every_topology_comes_up_healthy_and_tears_down_cleanly() {
    let all = topologies();
    assert!(
        all.len() >= 3,
        "expected the benchmark topologies under topologies/, found {}",
        all.len()
    );
    let emu = emulator();
    let rt = runtime();
    let results = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for t in all {
            let emu = emu.clone();
            set.spawn(async move {
                let _slot = LABS_AT_ONCE.acquire().await.expect("semaphore");
                bring_up_once(emu.as_ref(), &t).await
            });
        }
        let mut out = Vec::new();
        while let Some(r) = set.join_next().await {
            out.push(r.expect("task"));
        }
        out
    });
    let mut failures = Vec::new();
    for r in &results {
        match r {
            Ok(line) => eprintln!("ok   {line}"),
            Err(e) => {
                eprintln!("FAIL {e}");
                failures.push(e.clone());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} topologies failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Deploy, wait for the baseline, tear down, and prove the lab is gone.
async fn bring_up_once(emu: &NetnsEmulator, t: &Topology) -> Result<String, String> {
    let baseline = t.baseline().map_err(|e| format!("{}: {e}", t.id))?;
    let name = format!("live-{}", t.id.to_lowercase().replace('_', "-"));
    let started = Instant::now();
    let lab = emu
        .deploy(&LabRequest::new(&t.dir).named(name.clone()))
        .await
        .map_err(|e| format!("{}: deploy: {e}", t.id))?;
    let deployed = started.elapsed();
    let report = wait_for_baseline(
        lab.as_ref(),
        &baseline,
        Duration::from_secs(90),
        Duration::from_millis(500),
        Duration::from_secs(10),
    )
    .await;
    let healthy = started.elapsed();
    let down = lab.teardown().await;
    let mut problems = Vec::new();
    if !report.passed() {
        problems.push(format!(
            "baseline did not hold within 90 s: {}",
            report.failures().join("; ")
        ));
    }
    if let Err(e) = down {
        problems.push(format!("teardown: {e}"));
    }
    if running_lab_names().contains(&name) {
        problems.push(format!("lab `{name}` is still listed after teardown"));
    }
    if problems.is_empty() {
        Ok(format!(
            "{}: {} probes hold; deployed in {:.1} s, healthy after {:.1} s ({} rounds)",
            t.id,
            report.results.len(),
            deployed.as_secs_f64(),
            healthy.as_secs_f64(),
            report.attempts
        ))
    } else {
        Err(format!("{}: {}", t.id, problems.join("; ")))
    }
}

/// The release files to check on labs (see the module docs).
fn release_files(release: &Release) -> Vec<PathBuf> {
    let all = release.scenario_files();
    if std::env::var("FAULTBENCH_RELEASE_LIVE").is_ok_and(|v| v == "all") {
        return all;
    }
    let mut layers = BTreeSet::new();
    all.into_iter()
        .filter(|f| layers.insert(f.parent().map(Path::to_path_buf)))
        .collect()
}

#[test]
fn every_release_scenario_checks_on_its_lab() {
    let Some(release) = faultbench_testkit::release_for_test() else {
        return;
    };
    let files = release_files(&release);
    eprintln!("{}: checking {} files", release.describe(), files.len());
    assert!(
        !files.is_empty(),
        "no scenario files in {}",
        release.describe()
    );
    if release.is_full() && std::env::var_os("FAULTBENCH_RELEASE_LIVE").is_none() {
        assert_eq!(files.len(), 8 * 7, "every topology folder × layer");
    }
    let resolver = TopologyResolver::new([repo().join("topologies")]);
    let emu = emulator();
    let rt = runtime();
    let reports = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for f in files {
            let (emu, resolver) = (emu.clone(), resolver.clone());
            set.spawn(async move {
                let _slot = LABS_AT_ONCE.acquire().await.expect("semaphore");
                let s = ScenarioFile::load(&f).unwrap_or_else(|e| panic!("{e}"));
                let t = resolver
                    .resolve(s.topology())
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                check_scenario(emu.as_ref(), &t, &s, &CheckOptions::default()).await
            });
        }
        let mut out = Vec::new();
        while let Some(r) = set.join_next().await {
            out.push(r.expect("task"));
        }
        out
    });
    let mut wrong = Vec::new();
    for r in &reports {
        let expected = UNSUPPORTED_HERE.iter().find(|(id, _)| *id == r.scenario);
        let line = format!(
            "{} ({}): {} at {:?} — {}",
            r.scenario,
            r.topology,
            r.outcome.as_str(),
            r.stage,
            r.reason
        );
        eprintln!("{line}");
        let ok = match expected {
            None => r.outcome == CheckOutcome::Passed,
            Some((_, why)) => {
                r.outcome == CheckOutcome::UnsupportedOnHost && r.reason.contains(why)
            }
        };
        if !ok {
            wrong.push(line);
        }
    }
    assert!(
        running_lab_names()
            .iter()
            .all(|n| !reports.iter().any(|r| r.lab.as_deref() == Some(n.as_str()))),
        "a checked lab is still running"
    );
    assert!(
        wrong.is_empty(),
        "{} release files did not check as expected:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
