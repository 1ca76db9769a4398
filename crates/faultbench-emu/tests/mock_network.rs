//! The scripted mock network and record/replay.

use faultbench_core::{Command, EmuError, Emulator, Lab, LabRequest};
use faultbench_emu::mock::{
    ExecTrace, MockEmulator, MockLab, MockNetwork, RecordingLab, ReplayLab, Reply,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(5);

fn triangle_path() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml").to_string()
}

fn triangle() -> MockLab {
    let net = MockNetwork::load(triangle_path()).expect("example mock file parses");
    MockLab::new("t", Arc::new(net))
}

async fn sh(lab: &dyn Lab, dev: &str, cmd: &str) -> faultbench_core::ExecOutput {
    lab.exec(dev, &Command::shell(cmd), T)
        .await
        .expect("exec runs")
}

#[tokio::test]
async fn injection_switches_state_and_fix_clears_it() {
    let lab = triangle();
    assert!(sh(&lab, "r1", "pgrep ospfd").await.success());
    let ping = sh(&lab, "pc1", "ping -c 3 -W1 10.0.2.2").await;
    assert!(ping.success());
    assert!(
        ping.stdout
            .contains("3 packets transmitted, 3 received, 0% packet loss")
    );

    sh(&lab, "r1", "pkill -9 ospfd").await;
    assert!(lab.is_on("r1_ospfd_down"));
    assert_eq!(sh(&lab, "r1", "pgrep ospfd").await.exit_code, Some(1));
    // r2 still has its daemon.
    assert!(sh(&lab, "r2", "pgrep ospfd").await.success());
    let ping = sh(&lab, "pc1", "ping -c 2 10.0.2.2").await;
    assert_eq!(ping.exit_code, Some(1));
    assert!(ping.stdout.contains("100% packet loss"), "{}", ping.stdout);
    // pc2 → pc1's LAN fails too, pc2 → web1 still works.
    assert_eq!(
        sh(&lab, "pc2", "ping -c 2 10.0.1.2").await.exit_code,
        Some(1)
    );
    assert!(sh(&lab, "pc2", "ping -c 2 10.0.3.2").await.success());
    let route = sh(&lab, "r1", "vtysh -c 'show ip route'").await;
    assert!(!route.stdout.contains("10.0.2.0/24"));

    sh(&lab, "r1", "systemctl restart frr").await;
    assert!(!lab.is_on("r1_ospfd_down"));
    assert!(sh(&lab, "pc1", "ping -c 2 10.0.2.2").await.success());

    let h = lab.history();
    let inj = h.iter().find(|r| r.command == "pkill -9 ospfd").unwrap();
    assert_eq!(inj.changed, vec!["+r1_ospfd_down"]);
    let fix = h
        .iter()
        .find(|r| r.command == "systemctl restart frr")
        .unwrap();
    assert_eq!(fix.changed, vec!["-r1_ospfd_down"]);
}

#[tokio::test]
async fn argv_and_shell_forms_match_the_same_rule() {
    let lab = triangle();
    let a = lab
        .exec("r1", &Command::argv(["vtysh", "-c", "show ip route"]), T)
        .await
        .unwrap();
    let b = sh(&lab, "r1", "vtysh  -c   'show ip route'").await;
    assert!(a.stdout.contains("O>* 10.0.2.0/24"));
    assert_eq!(a, b);
}

#[tokio::test]
async fn the_most_specific_rule_wins_wherever_it_is_written() {
    // The fault rule comes first here, the healthy one second.
    let net = MockNetwork::parse(
        r#"
        states = ["down"]
        [[device]]
        name = "r1"
        [[rule]]
        device = "r1"
        command = "pgrep zebra"
        when = "down"
        exit_code = 1
        [[rule]]
        device = "*"
        command = "pgrep zebra"
        stdout = "9"
        [[rule]]
        device = "r1"
        command = "pgrep zebra"
        when = "!down"
        stdout = "first healthy"
        "#,
    )
    .unwrap();
    let lab = MockLab::new("x", Arc::new(net));
    // Healthy: both the wildcard and the `!down` rule match; the conditioned one wins.
    assert_eq!(sh(&lab, "r1", "pgrep zebra").await.stdout, "first healthy");
    lab.set_state("down", true).unwrap();
    assert_eq!(sh(&lab, "r1", "pgrep zebra").await.exit_code, Some(1));
    assert!(lab.set_state("nonexistent", true).is_err());

    // Without state conditions, a rule naming the device beats a `*` rule written before it.
    let net = MockNetwork::parse(
        r#"
        [[device]]
        name = "r1"
        [[device]]
        name = "r2"
        [[rule]]
        device = "*"
        command = "uptime"
        stdout = "any"
        [[rule]]
        device = "r1"
        command = "uptime"
        stdout = "r1 only"
        "#,
    )
    .unwrap();
    let lab = MockLab::new("y", Arc::new(net));
    assert_eq!(sh(&lab, "r1", "uptime").await.stdout, "r1 only");
    assert_eq!(sh(&lab, "r2", "uptime").await.stdout, "any");
}

#[tokio::test]
async fn unscripted_commands_get_the_configurable_default() {
    let lab = triangle();
    let out = sh(&lab, "pc1", "traceroute 10.0.2.2").await;
    assert_eq!(out.exit_code, Some(127));
    assert!(out.stderr.contains("`traceroute 10.0.2.2`"));
    assert!(out.stderr.contains("`pc1`"));
    assert!(out.stderr.contains("command not found in mock"));

    let net = MockNetwork::parse(
        r#"
        [default]
        exit_code = 2
        stderr = "no answer for {command}"
        [[device]]
        name = "h"
        "#,
    )
    .unwrap();
    let lab = MockLab::new("x", Arc::new(net));
    let out = sh(&lab, "h", "ls /").await;
    assert_eq!(
        (out.exit_code, out.stderr.as_str()),
        (Some(2), "no answer for ls /")
    );
}

#[tokio::test]
async fn devices_answer_their_declared_addresses() {
    let lab = triangle();
    let out = lab
        .exec("pc2", &Command::argv(["ip", "-j", "-4", "addr", "show"]), T)
        .await
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let eth0 = v
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["ifname"] == "eth0")
        .unwrap();
    assert_eq!(eth0["addr_info"][0]["local"], "10.0.2.2");
    assert_eq!(eth0["addr_info"][0]["prefixlen"], 24);
    assert_eq!(sh(&lab, "r3", "hostname").await.stdout, "r3\n");
    assert_eq!(lab.devices(), vec!["r1", "r2", "r3", "pc1", "pc2", "web1"]);
}

#[tokio::test]
async fn timeouts_and_delays() {
    let net = MockNetwork::parse(
        r#"
        [[device]]
        name = "h"
        [[rule]]
        device = "h"
        command = "hang"
        timeout = true
        [[rule]]
        device = "h"
        command = "slow"
        delay_ms = 80
        stdout = "done"
        "#,
    )
    .unwrap();
    let lab = MockLab::new("x", Arc::new(net));
    let out = lab
        .exec("h", &Command::shell("hang"), Duration::from_secs(10))
        .await
        .unwrap();
    assert!(out.timed_out && out.exit_code.is_none() && !out.success());
    assert_eq!(out.duration_ms, 10_000);

    let started = Instant::now();
    let out = lab.exec("h", &Command::shell("slow"), T).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(80));
    assert_eq!(out.stdout, "done");
    // A delay past the caller's timeout is a timeout.
    let out = lab
        .exec("h", &Command::shell("slow"), Duration::from_millis(20))
        .await
        .unwrap();
    assert!(out.timed_out);
}

#[tokio::test]
async fn unknown_device_and_teardown() {
    let lab = triangle();
    match lab.exec("r9", &Command::shell("true"), T).await {
        Err(EmuError::UnknownDevice { device, .. }) => assert_eq!(device, "r9"),
        other => panic!("expected UnknownDevice, got {other:?}"),
    }
    lab.teardown().await.unwrap();
    lab.teardown().await.unwrap();
    assert!(matches!(
        lab.exec("r1", &Command::shell("true"), T).await,
        Err(EmuError::NotRunning(_))
    ));
}

#[test]
fn bad_files_get_errors_that_say_what_to_fix() {
    let cases = [
        (
            "[[rule]]\ndevice = \"r7\"\ncommand = \"x\"\n",
            "device `r7` is not declared",
        ),
        (
            "[[device]]\nname=\"a\"\n[[rule]]\ndevice = \"a\"\ncommand = \"x\"\nwhen = \"broken\"\n",
            "state `broken` is not declared",
        ),
        (
            "states=[\"s\"]\n[[device]]\nname=\"a\"\n[[rule]]\ndevice = \"a\"\ncommand = \"(\"\nmatch = \"regex\"\n",
            "invalid regex",
        ),
        (
            "[[device]]\nname=\"a\"\n[[device]]\nname=\"a\"\n",
            "declared twice",
        ),
        (
            "[[device]]\nname=\"a\"\ninterface=[{name=\"eth0\", addr=\"10.0.0.300/24\"}]\n",
            "not an IPv4 address",
        ),
        (
            "[[device]]\nname = \"a\"\ncolour = \"red\"\n",
            "unknown field",
        ),
        ("[[rule]\n", "line 1"),
        (
            "[[device]]\nname=\"a\"\n[[rule]]\ndevice=\"a\"\ncommand=\"x\"\nmatch=\"glob\"\n",
            "unknown variant",
        ),
    ];
    for (text, want) in cases {
        let err = MockNetwork::parse(text).expect_err(text).to_string();
        assert!(err.contains(want), "`{err}` should mention `{want}`");
    }
}

#[tokio::test]
async fn record_save_load_replay() {
    let live = RecordingLab::new(Arc::new(triangle()));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.json");
    sh(&live, "r1", "pgrep ospfd").await;
    sh(&live, "r1", "pkill ospfd").await;
    sh(&live, "r1", "pgrep ospfd").await;
    assert!(live.exec("zz", &Command::shell("x"), T).await.is_err());
    live.trace().save(&path).unwrap();

    let trace = ExecTrace::load(&path).unwrap();
    assert_eq!(trace.entries.len(), 4);
    let replay = ReplayLab::new(trace.clone());
    assert_eq!(replay.name(), "t");
    // n-th call of a pair gets the n-th answer, then the last one again.
    assert!(sh(&replay, "r1", "pgrep ospfd").await.success());
    assert_eq!(sh(&replay, "r1", "pgrep ospfd").await.exit_code, Some(1));
    assert_eq!(sh(&replay, "r1", "pgrep ospfd").await.exit_code, Some(1));
    // Unknown device is still an error; unrecorded commands get the default reply.
    assert!(matches!(
        replay.exec("r9", &Command::shell("x"), T).await,
        Err(EmuError::UnknownDevice { .. })
    ));
    let out = sh(&replay, "pc1", "ip route").await;
    assert_eq!(out.exit_code, Some(127));
    assert!(out.stderr.contains("not recorded"));

    // Two replays of the same trace answer identically (determinism).
    let a = ReplayLab::new(trace.clone());
    let b = ReplayLab::new(trace.clone());
    for _ in 0..3 {
        assert_eq!(
            sh(&a, "r1", "pgrep ospfd").await,
            sh(&b, "r1", "pgrep ospfd").await
        );
    }

    let strict = ReplayLab::new(trace.clone()).strict();
    assert!(
        strict
            .exec("pc1", &Command::shell("ip route"), T)
            .await
            .is_err()
    );
    let custom = ReplayLab::new(trace).with_default(Reply {
        stdout: "?".into(),
        stderr: String::new(),
        exit_code: 3,
        timeout: false,
        delay_ms: 0,
    });
    assert_eq!(sh(&custom, "pc1", "ls").await.exit_code, Some(3));
}

#[tokio::test]
async fn emulator_deploys_files_directories_and_traces() {
    let emu = MockEmulator::new();
    let a = emu.deploy(&LabRequest::new(triangle_path())).await.unwrap();
    let b = emu.deploy(&LabRequest::new(triangle_path())).await.unwrap();
    assert_ne!(a.name(), b.name(), "instances get distinct names");
    // Instances have separate states.
    sh(a.as_ref(), "r1", "pkill ospfd").await;
    assert_eq!(sh(a.as_ref(), "r1", "pgrep ospfd").await.exit_code, Some(1));
    assert!(sh(b.as_ref(), "r1", "pgrep ospfd").await.success());

    // A directory holding mock.toml, named after the directory.
    let dir = tempfile::tempdir().unwrap();
    let topo = dir.path().join("mytopo");
    std::fs::create_dir(&topo).unwrap();
    std::fs::copy(triangle_path(), topo.join("mock.toml")).unwrap();
    let c = emu.deploy(&LabRequest::new(&topo)).await.unwrap();
    assert!(c.name().starts_with("mytopo-"), "{}", c.name());
    let named = emu
        .deploy(&LabRequest::new(&topo).named("chosen"))
        .await
        .unwrap();
    assert_eq!(named.name(), "chosen");

    // A trace file.
    let rec = RecordingLab::new(c.clone());
    sh(&rec, "pc1", "hostname").await;
    let tpath = dir.path().join("run.json");
    rec.trace().save(&tpath).unwrap();
    let r = emu.deploy(&LabRequest::new(&tpath)).await.unwrap();
    assert_eq!(sh(r.as_ref(), "pc1", "hostname").await.stdout, "pc1\n");

    // Nothing there: a clear error.
    let err = emu
        .deploy(&LabRequest::new(dir.path().join("nope")))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no mock network here"), "{err}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[rule]]\ndevice=\"x\"\ncommand=\"y\"\n").unwrap();
    let err = emu
        .deploy(&LabRequest::new(&bad))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.toml") && err.contains("`x` is not declared"),
        "{err}"
    );

    // A fixed network ignores the request path.
    let fixed = MockEmulator::with_network(MockNetwork::load(triangle_path()).unwrap());
    let f = fixed
        .deploy(&LabRequest::new("/nonexistent"))
        .await
        .unwrap();
    assert!(f.name().starts_with("triangle-"));
    assert_eq!(fixed.name(), "mock");
}

#[tokio::test]
async fn concurrent_execs_are_all_answered_and_recorded() {
    let lab = Arc::new(triangle());
    let mut tasks = Vec::new();
    for i in 0..32 {
        let lab = lab.clone();
        tasks.push(tokio::spawn(async move {
            let dev = ["pc1", "pc2", "web1"][i % 3];
            lab.exec(dev, &Command::shell("ping -c 1 10.0.3.2"), T)
                .await
                .unwrap()
        }));
    }
    for t in tasks {
        assert!(t.await.unwrap().success());
    }
    assert_eq!(lab.history().len(), 32);
}

/// Snapshots of a mock network come from its model: declared links and addresses, and the
/// states that are on, so an agent's `pkill` shows up as a change of the device it ran on.
#[tokio::test]
async fn snapshots_answer_from_the_model() {
    use faultbench_core::snapshot::{Aspect, ChangeKind, Snapshot, SnapshotOptions};
    let lab = triangle();
    let before = Snapshot::take(&lab, &SnapshotOptions::default()).await;
    assert_eq!(before.devices.len(), 6);
    assert!(before.failures().is_empty(), "{:?}", before.failures());
    let r1 = &before.devices["r1"];
    assert!(
        r1.items(Aspect::Addresses)
            .unwrap()
            .contains_key("eth1 10.0.12.1/30")
    );
    assert!(
        r1.items(Aspect::Routes).is_none(),
        "not modelled, not compared"
    );
    assert!(before.diff(&before).is_empty());

    sh(&lab, "r1", "pkill -9 ospfd").await;
    let after = Snapshot::take(&lab, &SnapshotOptions::default()).await;
    let changes = before.diff(&after);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(
        (
            changes[0].device.as_str(),
            changes[0].aspect,
            changes[0].change
        ),
        ("r1", Aspect::ModelStates, ChangeKind::Added)
    );
    assert_eq!(
        changes[0].summary,
        "r1 model_states: added r1_ospfd_down (on)"
    );
}
