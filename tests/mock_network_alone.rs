//! A mock network folder with its `mock.toml` (and `baseline.toml`) alone, no `lab.conf`: the
//! topology is found, its lab (devices, links) read from the mock file, and a run scores as it
//! does beside a hand-written `lab.conf`.

mod support;

use faultbench::core::lab::{LabDir, TopologyResolver};
use faultbench::core::pipeline::Runner;
use faultbench::core::{RunStatus, ScenarioFile};
use faultbench::emu::mock::MockEmulator;
use faultbench::judge::RubricJudge;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use support::{BlamesR1, mock_dir};

/// Which devices share each link, whatever the links are called.
fn links(lab: &LabDir) -> BTreeSet<BTreeSet<String>> {
    let mut by_domain: std::collections::BTreeMap<&str, BTreeSet<String>> = Default::default();
    for d in &lab.conf.devices {
        for i in &d.interfaces {
            by_domain
                .entry(i.domain.as_str())
                .or_default()
                .insert(format!("{}[{}]", d.name, i.index));
        }
    }
    by_domain.into_values().collect()
}

fn copy_without_lab_conf(to: &Path) {
    std::fs::create_dir_all(to.join("Duo")).unwrap();
    for f in ["mock.toml", "baseline.toml"] {
        std::fs::copy(mock_dir().join("Duo").join(f), to.join("Duo").join(f)).unwrap();
    }
    assert!(!to.join("Duo/lab.conf").exists());
}

#[test]
fn the_mock_file_gives_the_devices_and_links_lab_conf_would() {
    let root = tempfile::tempdir().unwrap();
    copy_without_lab_conf(root.path());
    let from_mock = TopologyResolver::new([root.path()])
        .resolve("Duo")
        .unwrap()
        .lab()
        .unwrap();
    let written = LabDir::load(mock_dir().join("Duo")).unwrap();
    assert_eq!(
        from_mock.conf.device_names(),
        written.conf.device_names(),
        "same devices, same order"
    );
    assert_eq!(links(&from_mock), links(&written));
}

#[tokio::test]
async fn a_run_on_a_mock_network_without_lab_conf_is_scored() {
    let root = tempfile::tempdir().unwrap();
    copy_without_lab_conf(root.path());
    let scenario = ScenarioFile::load(mock_dir().join("duo-r1-ospfd-down.txt")).unwrap();
    let runner = Runner::new(
        Arc::new(MockEmulator::new()),
        Arc::new(BlamesR1),
        Arc::new(RubricJudge::new()),
    )
    .with_topologies(TopologyResolver::new([root.path()]));
    let record = runner.run(&scenario).await;
    runner.shutdown().await;
    assert_eq!(record.status, RunStatus::Scored, "{:?}", record.error);
    assert_eq!(record.scores.unwrap().outcome, 1.0);
}
