//! The public release's files are our compatibility target: every one of them must parse, and
//! writing it back must reproduce the file byte for byte.

use faultbench_core::scenario::{Scenario, ScenarioFile};
use faultbench_core::{Category, Layer};
use std::path::{Path, PathBuf};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn txt_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            txt_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "txt") {
            out.push(p);
        }
    }
}

fn upstream_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    txt_files(&shared().join("upstream/dataset"), &mut v);
    txt_files(&shared().join("upstream-sample"), &mut v);
    v.sort();
    v
}

#[test]
fn every_release_file_parses_and_writes_back_byte_identical() {
    let files = upstream_files();
    assert_eq!(
        files.len(),
        34,
        "the shared folder holds 24 + 10 release files"
    );
    for f in &files {
        let s = ScenarioFile::load(f).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.stem(),
            s.id(),
            "{}: stem and Scenario: differ",
            f.display()
        );
        let original = std::fs::read_to_string(f).unwrap();
        assert_eq!(
            s.spec.to_text(),
            original,
            "{} does not round-trip",
            f.display()
        );
    }
}

#[test]
fn category_and_layer_match_the_folder() {
    for f in upstream_files() {
        let s = ScenarioFile::load(&f).unwrap();
        let folder = f.parent().unwrap().file_name().unwrap().to_str().unwrap();
        let layer: Layer = folder.parse().unwrap();
        assert_eq!(s.layer(), layer, "{}", f.display());
        if layer.is_persona() {
            assert_eq!(s.category(), Category::FalsePremise);
            assert!(s.spec.headers().variant_of.is_some());
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
}

#[test]
fn injection_of_a_release_file() {
    let f = shared().join("upstream/dataset/kath2_Q/base/kath2-router1-ip-forward-off.txt");
    let s = ScenarioFile::load(f).unwrap();
    let step = &s.injection().steps[0];
    assert_eq!(step.device, "router1");
    assert_eq!(step.cmd.as_deref(), Some("iptables -A FORWARD -j DROP"));
    let checks = s.post_inject_checks();
    assert_eq!(checks.len(), 2);
    assert_eq!(checks[1].device, "office_pc");
    assert_eq!(checks[1].command, "ping -W2 -c2 192.168.3.1");
    assert_eq!(s.scoring_axes().len(), 4);
}
