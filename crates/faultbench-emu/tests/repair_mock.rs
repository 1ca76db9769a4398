//! The repair verification as a library function on a mock network (no root, no runner): a
//! lab author checks an agent's repair in plain `cargo test`.
//!
//! The triangle mock (ospfd killable on r1, healed by starting FRR) gets one more modelled
//! state — r3's eth2 shut — so that collateral has something to show.

use async_trait::async_trait;
use faultbench_core::lab::Baseline;
use faultbench_core::repair::{RepairOptions, RepairReport, RepairVerdict, verify_repair};
use faultbench_core::scenario::ScenarioSpec;
use faultbench_core::snapshot::{Aspect, DeviceState, Snapshot, SnapshotOptions};
use faultbench_core::{Command, EmuError, ExecOutput, Lab};
use faultbench_emu::mock::{MockLab, MockNetwork};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const T: Duration = Duration::from_secs(5);

const SCENARIO: &str = "\
Scenario: triangle-r1-ospfd-killed
Topology: triangle

[PROMPT-TO-AGENT]
pc1 lost everything beyond its LAN.

[INJECTION]
device: r1
cmd: pkill -9 ospfd

[POST-INJECT-CHECK]
r1   pgrep ospfd             => expect empty
pc1  ping -c 2 -W1 10.0.2.2  => expect loss>0

[GROUND-TRUTH]
ospfd is dead on r1.

[FIX]
Start FRR again: `systemctl start frr` on r1.

[SCORING-AXES]
assert-identifies: r1

[NIKA-LABEL]
nika_label: none
nika_category: NOVEL
in_taxonomy: false
";

const BASELINE: &str = "
[[probe]]
name = 'pc1 reaches pc2'
kind = 'reach'
device = 'pc1'
command = 'ping -c 2 -W1 10.0.2.2'
expect = '0% loss'

[[probe]]
name = 'ospfd runs on r1'
kind = 'daemon'
device = 'r1'
command = 'pgrep ospfd'
expect = 'nonempty'
";

fn triangle() -> MockLab {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
    let text = std::fs::read_to_string(path).unwrap().replace(
        "states = [\"r1_ospfd_down\"]",
        "states = [\"r1_ospfd_down\", \"r3_eth2_down\"]",
    );
    let text = format!(
        "{text}\n[[rule]]\ndevice = \"r3\"\ncommand = \"ip link set eth2 down\"\nset = \"r3_eth2_down\"\n"
    );
    MockLab::new("t", Arc::new(MockNetwork::parse(&text).unwrap()))
}

async fn sh(lab: &dyn Lab, device: &str, cmd: &str) {
    let out = lab.exec(device, &Command::shell(cmd), T).await.unwrap();
    assert!(out.success(), "{device}: {cmd}: {out:?}");
}

fn fast() -> RepairOptions {
    RepairOptions {
        fault_retry: faultbench_core::inject::VerifyRetry {
            interval: Duration::from_millis(10),
            deadline: Duration::from_millis(50),
            command_timeout: T,
        },
        baseline_wait: Duration::from_millis(50),
        baseline_interval: Duration::from_millis(10),
        ..Default::default()
    }
}

/// Injects, lets `agent` act on the lab, and verifies.
async fn verify_after(lab: &dyn Lab, agent: &[(&str, &str)]) -> RepairReport {
    let scenario = ScenarioSpec::parse(SCENARIO).unwrap();
    let baseline = Baseline::parse(BASELINE).unwrap();
    let snap = SnapshotOptions::default();
    let pre = Snapshot::take(lab, &snap).await;
    sh(lab, "r1", "pkill -9 ospfd").await;
    let before = Snapshot::take(lab, &snap).await;
    for (device, cmd) in agent {
        sh(lab, device, cmd).await;
    }
    let after = Snapshot::take(lab, &snap).await;
    let changed = !before.diff(&after).is_empty();
    verify_repair(lab, &scenario, &baseline, &pre, &after, changed, &fast()).await
}

#[tokio::test]
async fn the_fix_is_a_repair() {
    let r = verify_after(&triangle(), &[("r1", "systemctl start frr")]).await;
    assert_eq!(r.verdict, RepairVerdict::Repaired, "{}", r.reason);
    assert_eq!(r.scope, vec!["r1".to_string()]);
    assert!(r.collateral.is_empty() && r.in_scope.is_empty());
}

#[tokio::test]
async fn doing_nothing_is_not_a_repair() {
    let r = verify_after(&triangle(), &[]).await;
    assert_eq!(r.verdict, RepairVerdict::NotRepaired, "{}", r.reason);
    let f = r.fault.unwrap();
    assert!(!f.gone && f.attempts == 1, "no change, no retry: {f:?}");
    // What is left of the fault is in scope, not collateral.
    assert!(
        r.in_scope
            .iter()
            .any(|c| c.device == "r1" && c.aspect == Aspect::ModelStates)
    );
    assert!(r.collateral.is_empty());
    assert!(!r.baseline.healthy);
}

#[tokio::test]
async fn the_fix_and_a_shut_interface_elsewhere_is_collateral() {
    let r = verify_after(
        &triangle(),
        &[
            ("r1", "systemctl start frr"),
            ("r3", "ip link set eth2 down"),
        ],
    )
    .await;
    assert_eq!(
        r.verdict,
        RepairVerdict::RepairedWithCollateral,
        "{}",
        r.reason
    );
    assert_eq!(r.collateral.len(), 1, "{:?}", r.collateral);
    assert_eq!(r.collateral[0].device, "r3");
    assert_eq!(r.collateral[0].item, "r3_eth2_down");
}

/// The triangle, with r1 gone (its init killed) once `dead` is set.
#[derive(Debug)]
struct Dying {
    inner: MockLab,
    dead: AtomicBool,
}

#[async_trait]
impl Lab for Dying {
    fn name(&self) -> &str {
        "dying"
    }
    fn devices(&self) -> Vec<String> {
        self.inner.devices()
    }
    async fn exec(&self, d: &str, c: &Command, t: Duration) -> Result<ExecOutput, EmuError> {
        if d == "r1" && self.dead.load(Ordering::SeqCst) {
            return Err(EmuError::Other("device r1 is not running".into()));
        }
        self.inner.exec(d, c, t).await
    }
    async fn device_state(&self, d: &str, t: Duration) -> DeviceState {
        if d == "r1" && self.dead.load(Ordering::SeqCst) {
            return DeviceState::failed("device r1 is not running");
        }
        self.inner.device_state(d, t).await
    }
    async fn teardown(&self) -> Result<(), EmuError> {
        Ok(())
    }
}

#[tokio::test]
async fn a_device_torn_down_is_not_repaired_with_the_checks_that_could_not_run() {
    let lab = Dying {
        inner: triangle(),
        dead: AtomicBool::new(false),
    };
    let scenario = ScenarioSpec::parse(SCENARIO).unwrap();
    let baseline = Baseline::parse(BASELINE).unwrap();
    let snap = SnapshotOptions::default();
    let pre = Snapshot::take(&lab, &snap).await;
    sh(&lab, "r1", "pkill -9 ospfd").await;
    lab.dead.store(true, Ordering::SeqCst);
    let after = Snapshot::take(&lab, &snap).await;
    let r = verify_repair(&lab, &scenario, &baseline, &pre, &after, true, &fast()).await;
    assert_eq!(r.verdict, RepairVerdict::NotRepaired, "{}", r.reason);
    let f = r.fault.as_ref().unwrap();
    assert!(!f.gone);
    assert_eq!(f.unverifiable.len(), 1, "{:?}", f.unverifiable);
    assert!(f.unverifiable[0].starts_with("r1 `pgrep ospfd`"));
    assert!(r.reason.contains("could not run"), "{}", r.reason);
    assert!(
        r.unreadable
            .iter()
            .any(|u| u.starts_with("after the agent: r1")),
        "{:?}",
        r.unreadable
    );
}
