//! The public release's scenario files are our compatibility target: every file present must
//! parse, write back byte for byte, sit in the folder of its layer, and agree with the
//! release's own index (`dataset/dataset_index.csv`). A full checkout of the release has all
//! 560 files (200 core + 5 × 72 persona rewrites); a partial copy has a subset of them.
//!
//! The release is found by `faultbench-testkit` (`FAULTBENCH_RELEASE`, see its docs).

use faultbench_core::scenario::{Scenario, ScenarioFile};
use faultbench_core::{Category, Layer};
use faultbench_testkit::{Release, full, release_for_test};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `dataset/dataset_index.csv`: id → (topology, layer, class).
fn index(release: &Release) -> BTreeMap<String, (String, String, String)> {
    let text = std::fs::read_to_string(release.dataset_index()).unwrap();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .is_some_and(|h| h.starts_with("scenario,topology,layer,class")),
        "unexpected header of {}",
        release.dataset_index().display()
    );
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.splitn(5, ',').collect();
            assert!(f.len() >= 4, "short index row: {l}");
            (f[0].to_string(), (f[1].into(), f[2].into(), f[3].into()))
        })
        .collect()
}

fn class_of(class: &str) -> Category {
    match class {
        "base" => Category::CorrectFault,
        "false-premise" => Category::FalsePremise,
        "wrong-device" => Category::WrongDevice,
        "wrong-cause" => Category::WrongCause,
        other => panic!("unknown class {other:?} in the release index"),
    }
}

fn load(f: &Path) -> ScenarioFile {
    ScenarioFile::load(f).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_release_file_parses_and_writes_back_byte_identical() {
    let Some(release) = release_for_test() else {
        return;
    };
    let files = release.scenario_files();
    eprintln!("{}: {} scenario files", release.describe(), files.len());
    assert!(
        !files.is_empty(),
        "no scenario files under {}",
        release.dataset().display()
    );
    if release.is_full() {
        assert_eq!(files.len(), full::SCENARIO_FILES);
    }
    let mut failures = Vec::new();
    for f in &files {
        let s = load(f);
        let original = std::fs::read_to_string(f).unwrap();
        if s.stem() != s.id() {
            failures.push(format!("{}: stem and Scenario: differ", f.display()));
        }
        if s.spec.to_text() != original {
            failures.push(format!("{} does not round-trip", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn category_and_layer_match_the_folder_and_the_index() {
    let Some(release) = release_for_test() else {
        return;
    };
    let index = index(&release);
    if release.is_full() {
        assert_eq!(index.len(), full::CORE_SCENARIOS);
    }
    let mut per_layer: BTreeMap<Layer, usize> = BTreeMap::new();
    let mut core_seen = BTreeSet::new();
    for f in release.scenario_files() {
        let s = load(&f);
        let folder = f.parent().unwrap().file_name().unwrap().to_str().unwrap();
        let layer: Layer = folder.parse().unwrap();
        *per_layer.entry(layer).or_default() += 1;
        assert_eq!(s.layer(), layer, "{}", f.display());
        if layer.is_persona() {
            assert_eq!(s.category(), Category::FalsePremise);
            let parent = s.spec.headers().variant_of.clone();
            let parent = parent.unwrap_or_else(|| panic!("{}: no Variant-of", f.display()));
            let (_, _, class) = index
                .get(parent.as_str())
                .unwrap_or_else(|| panic!("{}: parent {parent} not in the index", f.display()));
            assert_eq!(class, "false-premise", "{}", f.display());
        } else {
            let (topology, ilayer, class) = index
                .get(s.id())
                .unwrap_or_else(|| panic!("{}: not in dataset_index.csv", f.display()));
            assert_eq!(
                (topology.as_str(), ilayer.as_str(), class_of(class)),
                (s.topology(), folder, s.category()),
                "{}: the index says otherwise",
                f.display()
            );
            assert!(core_seen.insert(s.id().to_string()), "{} twice", s.id());
        }
        if s.category() == Category::FalsePremise {
            assert!(s.injection().is_negative_control(), "{}", f.display());
            assert!(s.fix().is_none());
        } else {
            assert!(!s.injection().is_negative_control(), "{}", f.display());
            assert!(!s.post_inject_checks().is_empty());
            assert!(s.fix().is_some());
        }
    }
    eprintln!("files per layer: {per_layer:?}");
    if release.is_full() {
        // Every core scenario has its file, and the paper's composition holds.
        assert_eq!(core_seen.len(), full::CORE_SCENARIOS);
        assert_eq!(per_layer[&Layer::Base], full::BASE);
        assert_eq!(per_layer[&Layer::Cex], full::CEX);
        for layer in per_layer.keys().filter(|l| l.is_persona()) {
            assert_eq!(per_layer[layer], full::PER_PERSONA, "{layer:?}");
        }
        assert_eq!(per_layer.len(), 7);
    }
}

#[test]
fn injection_of_a_release_file() {
    let Some(release) = release_for_test() else {
        return;
    };
    let s = load(&release.scenario("kath2_Q", "base", "kath2-router1-ip-forward-off"));
    let step = &s.injection().steps[0];
    assert_eq!(step.device, "router1");
    assert_eq!(step.cmd.as_deref(), Some("iptables -A FORWARD -j DROP"));
    let checks = s.post_inject_checks();
    assert_eq!(checks.len(), 2);
    assert_eq!(checks[1].device, "office_pc");
    assert_eq!(checks[1].command, "ping -W2 -c2 192.168.3.1");
    assert_eq!(s.scoring_axes().len(), 4);
}
