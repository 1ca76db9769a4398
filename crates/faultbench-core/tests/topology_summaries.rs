//! The summary an agent reads must be the release's, byte for byte.
//!
//! Every run record of the public release (`final_results/**/result.json`, found through
//! `faultbench-testkit`) stores the exact user message its agent received: the topology
//! overview, then the ticket. For every record whose topology exists under `topologies/`, we
//! rebuild that message from our lab directory (`TopologySummary::for_lab`, which picks the
//! Kathará or NIKA style from `topology.toml`) and the record's ticket, and compare. The three
//! NIKA topologies must be present; the Kathará ones are checked as soon as their directories
//! exist. A full checkout of the release gives all 3,960 records, a partial copy a subset.

use faultbench_core::agent::{AgentInput, Budget};
use faultbench_core::lab::{LabDir, TopologySummary};
use faultbench_testkit::{full, release_for_test};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const NIKA: [&str; 3] = ["dc_clos_bgp", "ospf_enterprise_static", "simple_bgp"];

#[test]
fn agent_prompts_of_the_release_are_rebuilt_byte_for_byte() {
    let Some(release) = release_for_test() else {
        return;
    };
    let files = release.run_records();
    eprintln!("{}: {} run records", release.describe(), files.len());
    assert!(
        !files.is_empty(),
        "no run records under {}",
        release.final_results().display()
    );
    if release.is_full() {
        assert_eq!(files.len(), full::RUN_RECORDS);
    }

    let mut summaries: BTreeMap<String, Option<Result<String, String>>> = BTreeMap::new();
    let mut failures: Vec<String> = Vec::new();
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    let mut absent: BTreeMap<String, usize> = BTreeMap::new();
    for f in &files {
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let topology = record["scenario"]["topology"].as_str().unwrap().to_string();
        let ticket = record["scenario"]["prompt_to_agent"].as_str().unwrap();
        let recorded = record["agent_input_prompt"].as_str().unwrap();

        let summary = summaries.entry(topology.clone()).or_insert_with(|| {
            let dir = repo().join("topologies").join(&topology);
            dir.join("lab.conf").exists().then(|| {
                let lab = LabDir::load(&dir).map_err(|e| e.to_string())?;
                TopologySummary::for_lab(&lab)
                    .map(|s| s.text)
                    .map_err(|e| e.to_string())
            })
        });
        let Some(summary) = summary else {
            assert!(
                !NIKA.contains(&topology.as_str()),
                "topologies/{topology} is missing"
            );
            *absent.entry(topology).or_default() += 1;
            continue;
        };
        let summary = match summary {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{}: {e}", f.display()));
                continue;
            }
        };
        let rebuilt = AgentInput::new(summary, ticket, Budget::default()).prompt;
        if rebuilt != recorded {
            let at = rebuilt
                .bytes()
                .zip(recorded.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(rebuilt.len().min(recorded.len()));
            failures.push(format!(
                "{}: our prompt differs from the recorded one at byte {at}\n--- ours:\n{}\n--- release:\n{}",
                f.display(),
                &rebuilt[at.saturating_sub(80)..(at + 80).min(rebuilt.len())],
                &recorded[at.saturating_sub(80)..(at + 80).min(recorded.len())],
            ));
            continue;
        }
        *checked.entry(topology).or_default() += 1;
    }
    eprintln!("checked: {checked:?}; topologies not in the repository yet: {absent:?}");
    assert!(
        failures.is_empty(),
        "{} record(s) differ:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    for t in NIKA {
        assert!(
            checked.get(t).copied().unwrap_or(0) >= 5,
            "{t}: expected several run records, got {checked:?}"
        );
    }
}

#[test]
fn every_shipped_topology_loads_and_summarizes() {
    let root = repo().join("topologies");
    let address = regex::Regex::new(r"\b\d+\.\d+\.\d+\.\d+\b").unwrap();
    let mut seen = 0;
    let mut failures = Vec::new();
    for e in std::fs::read_dir(&root).unwrap() {
        let dir = e.unwrap().path();
        if !dir.join("lab.conf").exists() {
            continue;
        }
        seen += 1;
        let id = dir.file_name().unwrap().to_string_lossy().into_owned();
        let s = match LabDir::load(&dir)
            .map_err(|e| e.to_string())
            .and_then(|lab| TopologySummary::for_lab(&lab).map_err(|e| e.to_string()))
        {
            Ok(s) => s,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        if !s.text.starts_with(&format!("Topology: {id}\n\nDevices:\n")) {
            failures.push(format!("{id}: unexpected header:\n{}", s.text));
        }
        // Agents never see addresses in the summary.
        if address.is_match(&s.text) {
            failures.push(format!("{id}: the summary leaks an address:\n{}", s.text));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(seen >= 3, "expected at least the three NIKA topologies");
}
