//! The project's own dataset (`dataset/`): composition and invariants, originality against the
//! public release, and — on real labs (root, as in CI) — a rotating slice of scenarios whose
//! injection must take and whose `[FIX]` must bring the healthy baseline back.
//!
//! The slice changes every day (one scenario with a fault per topology). Check every scenario
//! with `FAULTBENCH_DATASET_SLICE=all cargo test --release --test dataset` (long: about an hour
//! on 2 cores); `faultbench scenario check --all dataset` checks the injections alone and its
//! result is recorded in `dataset/VERIFIED.md`.

use faultbench::core::dataset::{Dataset, StatsOptions};
use faultbench::core::emulator::{Command, Emulator, LabRequest};
use faultbench::core::inject::{InjectionStatus, VerifyRetry, apply_injection, verify_injection};
use faultbench::core::lab::{Topology, TopologyResolver, verify};
use faultbench::core::pipeline::revert_commands;
use faultbench::core::scenario::{Scenario, ScenarioFile};
use faultbench::core::{Category, Layer};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn dataset() -> Dataset {
    let ds = Dataset::scan(repo().join("dataset")).expect("dataset/ is readable");
    let errors: Vec<String> = ds.errors().map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "unreadable scenarios:\n{}",
        errors.join("\n")
    );
    ds
}

#[test]
fn composition_and_persona_invariants_match_the_paper() {
    let ds = dataset();
    let mut opts = StatsOptions {
        expect_full: true,
        ..Default::default()
    };
    for t in TopologyResolver::new([repo().join("topologies")]).list() {
        let lab = t.lab().unwrap();
        opts.devices.insert(
            t.id.clone(),
            lab.conf
                .device_names()
                .iter()
                .map(|s| s.to_string())
                .collect(),
        );
    }
    let st = ds.stats(&opts);
    let v: Vec<String> = st
        .violations
        .iter()
        .map(|v| format!("{}: {}", v.path.display(), v.message))
        .collect();
    assert!(v.is_empty(), "invariant violations:\n{}", v.join("\n"));
    assert_eq!(st.scenarios, 560);
    let totals: Vec<usize> = Category::ALL
        .iter()
        .map(|c| st.core_totals.get(c.as_str()).copied().unwrap_or(0))
        .collect();
    assert_eq!(totals, vec![80, 72, 24, 24]);
    for l in Layer::PERSONAS {
        assert_eq!(st.layers[l.as_str()], 72, "{l}");
    }
    // The paper's pattern of identifiers per layer.
    let mean = |s: &str| st.identifiers[s].mean;
    assert_eq!(mean("naive_no_detail"), 0.0);
    assert!((mean("novice") - mean("novice_confident")).abs() < 0.05);
    assert!((mean("naive") - mean("naive_unsure")).abs() < 0.05);
    assert!(mean("standard") > mean("naive") && mean("naive") > 0.0);
    // Every scenario's topology exists.
    let resolver = TopologyResolver::new([repo().join("topologies")]);
    for (_, s) in ds.scenarios() {
        resolver
            .resolve(s.topology())
            .unwrap_or_else(|e| panic!("{}: {e}", s.path.display()));
    }
}

/// Release ids, and 8-word shingles of the release's scenario texts present (every file of a
/// full checkout; a subset in a partial copy). `None` when the release is missing.
fn release_ids_and_shingles() -> Option<(BTreeSet<String>, BTreeSet<String>)> {
    let release = faultbench_testkit::release_for_test()?;
    let index = std::fs::read_to_string(release.dataset_index()).expect("release index");
    let ids: BTreeSet<String> = index
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next())
        .map(str::to_string)
        .collect();
    let mut shingles = BTreeSet::new();
    for f in release.scenario_files() {
        let s = ScenarioFile::load(&f).unwrap_or_else(|e| panic!("{e}"));
        for name in ["PROMPT-TO-AGENT", "GROUND-TRUTH"] {
            shingles.extend(shingles_of(s.spec.section(name).unwrap_or("")));
        }
    }
    Some((ids, shingles))
}

/// 8-word passages of prose: lines quoting commands (backticks) are left out, and so is every
/// passage holding a number (addresses, counts) — facts, not wording.
fn shingles_of(text: &str) -> Vec<String> {
    let prose: String = text
        .lines()
        .filter(|l| !l.contains('`'))
        .collect::<Vec<_>>()
        .join(" ");
    let words: Vec<String> = prose
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .collect();
    words
        .windows(8)
        .filter(|w| !w.iter().any(|t| t.chars().any(|c| c.is_ascii_digit())))
        .map(|w| w.join(" "))
        .collect()
}

#[test]
fn written_in_our_own_words_with_our_own_ids() {
    let Some((ids, release)) = release_ids_and_shingles() else {
        return;
    };
    assert!(ids.len() >= 200 && !release.is_empty());
    let ds = dataset();
    let mut reused = Vec::new();
    let mut echoes = Vec::new();
    for (_, s) in ds.scenarios() {
        if ids.contains(s.id()) {
            reused.push(s.id().to_string());
        }
        for name in ["PROMPT-TO-AGENT", "GROUND-TRUTH"] {
            for sh in shingles_of(s.spec.section(name).unwrap_or("")) {
                if release.contains(&sh) {
                    echoes.push(format!("{} [{name}]: \"{sh}\"", s.id()));
                }
            }
        }
    }
    assert!(reused.is_empty(), "ids of the release reused: {reused:?}");
    echoes.dedup();
    assert!(
        echoes.is_empty(),
        "8-word passages shared with the release:\n{}",
        echoes.join("\n")
    );
}

/// `dataset/VERIFIED.md` (the full `scenario check` result) covers exactly the scenarios of
/// `dataset/`, every one passed: a scenario added or renamed since needs a new verification.
#[test]
fn verified_md_covers_every_scenario_and_all_passed() {
    let text = std::fs::read_to_string(repo().join("dataset/VERIFIED.md"))
        .expect("dataset/VERIFIED.md exists (scripts/verified-md.py writes it)");
    let mut listed = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let Some(id) = cells
            .get(2)
            .and_then(|c| c.strip_prefix('`')?.strip_suffix('`'))
        {
            listed.insert(
                id.to_string(),
                cells.get(3).copied().unwrap_or("").to_string(),
            );
        }
    }
    let ids: BTreeSet<String> = dataset()
        .scenarios()
        .map(|(_, s)| s.id().to_string())
        .collect();
    let missing: Vec<&String> = ids.iter().filter(|i| !listed.contains_key(*i)).collect();
    let stale: Vec<&String> = listed.keys().filter(|i| !ids.contains(*i)).collect();
    let failed: Vec<&String> = listed
        .iter()
        .filter(|(_, r)| r.as_str() != "passed")
        .map(|(i, _)| i)
        .collect();
    assert!(missing.is_empty(), "not verified: {missing:?}");
    assert!(
        stale.is_empty(),
        "verified but no longer in dataset/: {stale:?}"
    );
    assert!(failed.is_empty(), "did not pass: {failed:?}");
}

/// One scenario with a fault per topology, chosen by the day (or all of them).
fn slice(ds: &Dataset) -> Vec<ScenarioFile> {
    let mut by_topology: BTreeMap<String, Vec<&ScenarioFile>> = BTreeMap::new();
    for (_, s) in ds.scenarios() {
        if s.category() != Category::FalsePremise && !s.injection().is_negative_control() {
            by_topology
                .entry(s.topology().to_string())
                .or_default()
                .push(s);
        }
    }
    let all = std::env::var("FAULTBENCH_DATASET_SLICE").is_ok_and(|v| v == "all");
    let day = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0) as usize;
    let mut out = Vec::new();
    for (_, v) in by_topology {
        if all {
            out.extend(v.into_iter().cloned());
        } else {
            out.push(v[day % v.len()].clone());
        }
    }
    out
}

/// Deploy → baseline → inject → post-check → the [FIX] commands → baseline again.
async fn inject_and_revert(
    emu: &dyn Emulator,
    t: &Topology,
    s: &ScenarioFile,
) -> Result<String, String> {
    let started = Instant::now();
    let baseline = t.baseline().map_err(|e| e.to_string())?;
    let devices: Vec<String> = t
        .lab()
        .map_err(|e| e.to_string())?
        .conf
        .device_names()
        .iter()
        .map(|d| d.to_string())
        .collect();
    let lab = emu
        .deploy(&LabRequest::new(&t.dir).named(format!("ds-{}", std::process::id() % 100_000)))
        .await
        .map_err(|e| format!("{}: deploy: {e}", s.id()))?;
    let probe_timeout = Duration::from_secs(20);
    let healthy = |until: Duration| {
        let lab = lab.clone();
        let baseline = baseline.clone();
        async move {
            let t0 = Instant::now();
            loop {
                let failed: Vec<String> = verify(lab.as_ref(), &baseline, probe_timeout)
                    .await
                    .into_iter()
                    .filter(|r| !r.passed)
                    .map(|r| format!("{}: {}", r.probe.name, r.detail))
                    .collect();
                if failed.is_empty() {
                    return Ok(());
                }
                if t0.elapsed() > until {
                    return Err(failed.join("; "));
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    };
    let result = async {
        healthy(Duration::from_secs(90))
            .await
            .map_err(|e| format!("baseline before: {e}"))?;
        let inj = apply_injection(lab.as_ref(), s.injection(), Duration::from_secs(60)).await;
        if inj.status() == InjectionStatus::Unsupported {
            return Err(format!("unsupported: {}", inj.reason().unwrap_or_default()));
        }
        let checked = verify_injection(
            lab.as_ref(),
            s.post_inject_checks(),
            &VerifyRetry::default(),
        )
        .await;
        if !checked.passed() {
            return Err(format!(
                "fault did not take: {}",
                checked.reason().unwrap_or_default()
            ));
        }
        let fix = s.fix().ok_or("no [FIX]")?;
        let injected: Vec<String> = s
            .injection()
            .devices()
            .into_iter()
            .map(str::to_string)
            .collect();
        let cmds = revert_commands(fix, &devices, &injected);
        if cmds.is_empty() {
            return Err("[FIX] names no command the harness can run".into());
        }
        for c in &cmds {
            lab.exec(
                &c.device,
                &Command::shell(c.command.clone()),
                Duration::from_secs(60),
            )
            .await
            .map_err(|e| format!("revert `{}` on {}: {e}", c.command, c.device))?;
        }
        healthy(Duration::from_secs(45))
            .await
            .map_err(|e| format!("baseline after the fix: {e}"))?;
        Ok(format!(
            "{} ({} revert command(s), {:.1} s)",
            s.id(),
            cmds.len(),
            started.elapsed().as_secs_f64()
        ))
    }
    .await;
    let _ = lab.teardown().await;
    result.map_err(|e| format!("{}: {e}", s.id()))
}

#[test]
fn a_rotating_slice_injects_and_its_fix_restores_the_baseline() {
    faultbench::emu::netns::preflight().unwrap_or_else(|e| {
        panic!("live dataset checks need root and the lab packages (scripts/install-deps.sh): {e}")
    });
    let ds = dataset();
    let picks = slice(&ds);
    assert!(
        picks.len() >= 8,
        "one scenario per topology: {}",
        picks.len()
    );
    let resolver = TopologyResolver::new([repo().join("topologies")]);
    let topologies: HashMap<String, Topology> = picks
        .iter()
        .map(|s| {
            (
                s.topology().to_string(),
                resolver.resolve(s.topology()).unwrap(),
            )
        })
        .collect();
    let emu = Arc::new(faultbench::emu::netns::NetnsEmulator::new());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut failures = Vec::new();
    rt.block_on(async {
        for s in &picks {
            match inject_and_revert(emu.as_ref(), &topologies[s.topology()], s).await {
                Ok(line) => eprintln!("ok   {line}"),
                Err(e) => {
                    eprintln!("FAIL {e}");
                    failures.push(e);
                }
            }
        }
    });
    assert!(
        failures.is_empty(),
        "{} scenario(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
