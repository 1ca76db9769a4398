//! The Kathará backend's live path, against a stand-in `kathara` executable.
//!
//! No Docker engine or Kubernetes cluster runs here, so `tests/fixtures/kathara-standin` plays
//! Kathará 3.8.3: same arguments, same outputs and failures, the command's exit code from
//! `exec`, every call recorded. Its "devices" run commands in their own mount and UTS
//! namespaces (hostname = device, private /tmp), which needs root — as these tests do.

use faultbench_core::emulator::{Command, EmuError, Emulator, LabRequest};
use faultbench_emu::kathara::{DeviceCommands, KatharaEmulator, KatharaOptions, Manager};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(10);

struct Rig {
    state: tempfile::TempDir,
    work: tempfile::TempDir,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn simple_bgp() -> PathBuf {
    repo().join("topologies/simple_bgp")
}

impl Rig {
    fn new() -> Rig {
        Rig {
            state: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    /// An emulator whose `kathara` is the stand-in, with extra stand-in knobs.
    fn emulator(&self, knobs: &[&str], tweak: impl FnOnce(&mut KatharaOptions)) -> KatharaEmulator {
        let standin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kathara-standin");
        let mut cli = vec![
            "env".to_string(),
            format!("KATHARA_STANDIN_STATE={}", self.state.path().display()),
        ];
        cli.extend(knobs.iter().map(|k| k.to_string()));
        cli.push(standin.display().to_string());
        let mut cfg = KatharaOptions {
            cli: Some(cli),
            work_dir: Some(self.work.path().to_path_buf()),
            ready_timeout_secs: 20,
            // The stand-in plays the `kathara` CLI: no engine API, no user settings.
            device_commands: DeviceCommands::Kathara,
            carry_user_settings: false,
            ..Default::default()
        };
        tweak(&mut cfg);
        KatharaEmulator::new(cfg).unwrap()
    }

    /// Every recorded call's argv.
    fn calls(&self) -> Vec<Vec<String>> {
        let text =
            std::fs::read_to_string(self.state.path().join("calls.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["argv"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string())
                    .collect()
            })
            .collect()
    }

    fn calls_of(&self, cmd: &str) -> Vec<Vec<String>> {
        self.calls()
            .into_iter()
            .filter(|c| c.first().is_some_and(|x| x == cmd))
            .collect()
    }

    fn work_is_empty(&self) -> bool {
        std::fs::read_dir(self.work.path())
            .unwrap()
            .next()
            .is_none()
    }
}

#[tokio::test]
async fn deploy_exec_teardown_through_the_cli() {
    let rig = Rig::new();
    let emu = rig.emulator(&[], |_| {});
    let lab = emu
        .deploy(&LabRequest::new(simple_bgp()).named("h5-bgp-1"))
        .await
        .unwrap();
    assert_eq!(lab.name(), "h5-bgp-1");
    assert_eq!(lab.devices(), vec!["router1", "router2", "pc1", "pc2"]);

    // lstart: no terminals, on the staged copy that carries the instance's LAB_NAME and manager.
    let staged = rig.work.path().join("h5-bgp-1");
    let lstart = rig.calls_of("lstart");
    assert_eq!(
        lstart,
        vec![vec![
            "lstart",
            "--noterminals",
            "-d",
            &staged.display().to_string()
        ]]
    );
    let conf = std::fs::read_to_string(staged.join("lab.conf")).unwrap();
    assert!(conf.starts_with("LAB_NAME=h5-bgp-1\n"), "{conf}");
    assert!(!conf.contains("LAB_NAME=simple_bgp"));
    let kconf: Value =
        serde_json::from_str(&std::fs::read_to_string(staged.join("kathara.conf")).unwrap())
            .unwrap();
    assert_eq!(kconf["manager_type"], "docker");
    assert_eq!(kconf["open_terminals"], false);
    assert_eq!(kconf["image_update_policy"], "Never");
    // Readiness was awaited on every device, then linfo confirmed they run.
    let polled: Vec<String> = rig.calls_of("exec").iter().map(|c| c[3].clone()).collect();
    for d in ["router1", "router2", "pc1", "pc2"] {
        assert!(
            polled.iter().any(|p| p == d),
            "no readiness poll of {d}: {polled:?}"
        );
    }
    assert_eq!(rig.calls_of("linfo").len(), 1);

    // The command runs in the named device; Kathará's log line is not part of its output.
    let out = lab
        .exec("pc1", &Command::argv(["hostname"]), T)
        .await
        .unwrap();
    assert_eq!(out.stdout, "pc1\n");
    assert!(out.success());

    // stdout, stderr and the exit code stay apart.
    let out = lab
        .exec(
            "router2",
            &Command::shell("echo out; echo err >&2; exit 3"),
            T,
        )
        .await
        .unwrap();
    assert_eq!(
        (out.stdout.as_str(), out.stderr.as_str(), out.exit_code),
        ("out\n", "err\n", Some(3))
    );
    assert!(!out.timed_out);

    // Arguments arrive intact: spaces, shell syntax, quotes and a literal `--`.
    let out = lab
        .exec(
            "pc2",
            &Command::argv(["printf", "%s|", "a b", "$(reboot)", "--", "it's"]),
            T,
        )
        .await
        .unwrap();
    assert_eq!(out.stdout, "a b|$(reboot)|--|it's|");

    // The last exec went through `--`, bounded in the device by `timeout -s KILL`.
    let last = rig.calls_of("exec").pop().unwrap();
    assert_eq!(
        &last[..5],
        ["exec", "-d", &staged.display().to_string(), "pc2", "--"]
    );
    assert!(last[5..].join(" ").contains("timeout"), "{last:?}");

    // A missing binary reads like a shell's "command not found".
    let out = lab
        .exec("pc1", &Command::argv(["no-such-tool", "x"]), T)
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(127));
    assert!(out.stderr.contains("no-such-tool"), "{}", out.stderr);

    // A command that overruns is killed in the device.
    let t0 = Instant::now();
    let out = lab
        .exec(
            "pc1",
            &Command::shell("sleep 30; echo late"),
            Duration::from_millis(700),
        )
        .await
        .unwrap();
    assert!(out.timed_out && out.exit_code.is_none(), "{out:?}");
    // Far below the 30 s the command wanted (the bound is loose: CI machines are busy).
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert!(!out.stdout.contains("late"));

    // Unknown devices never reach Kathará.
    let before = rig.calls().len();
    let e = lab
        .exec("--help", &Command::argv(["true"]), T)
        .await
        .unwrap_err();
    assert!(matches!(e, EmuError::UnknownDevice { .. }), "{e}");
    assert_eq!(rig.calls().len(), before);

    // Teardown: lclean on the instance, staged copy gone, idempotent, exec refused afterwards.
    lab.teardown().await.unwrap();
    assert_eq!(
        rig.calls_of("lclean"),
        vec![vec!["lclean", "-d", &staged.display().to_string()]]
    );
    assert!(rig.work_is_empty());
    lab.teardown().await.unwrap();
    assert_eq!(rig.calls_of("lclean").len(), 1);
    let e = lab
        .exec("pc1", &Command::argv(["true"]), T)
        .await
        .unwrap_err();
    assert!(matches!(e, EmuError::NotRunning(_)), "{e}");
}

#[tokio::test]
async fn two_instances_of_one_lab_run_side_by_side() {
    let rig = Rig::new();
    let emu = rig.emulator(&[], |_| {});
    let a = emu.deploy(&LabRequest::new(simple_bgp())).await.unwrap();
    let b = emu.deploy(&LabRequest::new(simple_bgp())).await.unwrap();
    assert_ne!(a.name(), b.name());
    assert!(a.name().starts_with("simple_bgp-"), "{}", a.name());
    // Each instance has its own devices: a file written in one is not seen in the other.
    a.exec("pc1", &Command::shell("echo a > /tmp/mark"), T)
        .await
        .unwrap();
    let seen_b = b
        .exec(
            "pc1",
            &Command::shell("cat /tmp/mark 2>/dev/null || echo none"),
            T,
        )
        .await
        .unwrap();
    assert_eq!(seen_b.stdout, "none\n");
    // The same name twice is refused before Kathará is asked.
    let e = emu
        .deploy(&LabRequest::new(simple_bgp()).named(a.name()))
        .await
        .err()
        .unwrap();
    assert!(e.to_string().contains("already staged"), "{e}");
    a.teardown().await.unwrap();
    let still = b
        .exec("pc2", &Command::argv(["hostname"]), T)
        .await
        .unwrap();
    assert_eq!(still.stdout, "pc2\n");
    b.teardown().await.unwrap();
    assert!(rig.work_is_empty());
}

#[tokio::test]
async fn the_kubernetes_manager_is_chosen_in_config() {
    let rig = Rig::new();
    let emu = rig.emulator(&[], |c| {
        c.manager = Manager::Kubernetes {
            api_server_url: Some("https://megalos.example:6443".into()),
            api_token: Some("token".into()),
            host_shared: Some(false),
            image_pull_policy: Some("IfNotPresent".into()),
            docker_config_json: None,
        };
    });
    let lab = emu
        .deploy(&LabRequest::new(simple_bgp()).named("h5-k8s"))
        .await
        .unwrap();
    let kconf: Value = serde_json::from_str(
        &std::fs::read_to_string(rig.work.path().join("h5-k8s/kathara.conf")).unwrap(),
    )
    .unwrap();
    assert_eq!(kconf["manager_type"], "kubernetes");
    assert_eq!(kconf["api_server_url"], "https://megalos.example:6443");
    assert_eq!(kconf["host_shared"], false);
    lab.teardown().await.unwrap();
}

#[tokio::test]
async fn an_unreachable_engine_is_an_environment_error_and_leaves_nothing() {
    let rig = Rig::new();
    let emu = rig.emulator(&["KATHARA_STANDIN_DAEMON=down"], |_| {});
    let e = emu
        .deploy(&LabRequest::new(simple_bgp()))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&e, EmuError::Environment(m) if m.contains("Cannot connect to Docker Daemon")),
        "{e}"
    );
    assert!(rig.work_is_empty());
}

#[tokio::test]
async fn a_startup_that_never_ends_fails_the_deploy_and_cleans_up() {
    let rig = Rig::new();
    let emu = rig.emulator(&["KATHARA_STANDIN_NEVER_READY=router2"], |c| {
        c.ready_timeout_secs = 3;
    });
    let t0 = Instant::now();
    let e = emu
        .deploy(&LabRequest::new(simple_bgp()).named("h5-slow"))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&e, EmuError::DeployIncomplete { reason, .. } if reason.contains("router2") && !reason.contains("pc1")),
        "{e}"
    );
    assert!(t0.elapsed() < Duration::from_secs(30));
    assert_eq!(rig.calls_of("lclean").len(), 1);
    assert!(rig.work_is_empty());
}

#[tokio::test]
async fn a_device_that_is_not_running_fails_the_deploy() {
    let rig = Rig::new();
    let emu = rig.emulator(&["KATHARA_STANDIN_EXITED=pc2"], |c| {
        c.ready_timeout_secs = 3;
    });
    let e = emu
        .deploy(&LabRequest::new(simple_bgp()))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&e, EmuError::DeployIncomplete { reason, .. } if reason.contains("pc2")),
        "{e}"
    );
    assert!(rig.work_is_empty());
}

#[tokio::test]
async fn bad_requests_are_refused_before_kathara_runs() {
    let rig = Rig::new();
    let emu = rig.emulator(&[], |_| {});
    let e = emu
        .deploy(&LabRequest::new(simple_bgp()).named("bad name"))
        .await
        .err()
        .unwrap();
    assert!(matches!(e, EmuError::InvalidLab(_)), "{e}");
    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("lab.conf"), "r1[0]=A.1\n").unwrap();
    let e = emu
        .deploy(&LabRequest::new(broken.path()))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&e, EmuError::InvalidLab(m) if m.contains("lab.conf:1")),
        "{e}"
    );
    assert!(rig.calls().is_empty());
}

#[tokio::test]
async fn gc_cleans_instances_whose_owner_died_and_drop_cleans_in_the_background() {
    let rig = Rig::new();
    let emu = rig.emulator(&[], |_| {});
    // An instance whose owner is gone: deployed, then its owner marker points at a dead PID.
    let orphan = emu
        .deploy(&LabRequest::new(simple_bgp()).named("h5-orphan"))
        .await
        .unwrap();
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    std::fs::write(
        rig.work.path().join("h5-orphan/.faultbench-owner"),
        format!("{dead_pid}\n"),
    )
    .unwrap();
    // A live instance of this process must survive gc.
    let live = emu
        .deploy(&LabRequest::new(simple_bgp()).named("h5-live"))
        .await
        .unwrap();
    assert_eq!(emu.gc().await.unwrap(), vec!["h5-orphan"]);
    assert!(!rig.work.path().join("h5-orphan").exists());
    assert!(
        live.exec("pc1", &Command::argv(["true"]), T)
            .await
            .unwrap()
            .success()
    );
    std::mem::forget(orphan); // its instance is already gone; skip its drop-time cleanup

    // Dropping a lab without teardown triggers lclean in the background.
    drop(live);
    let deadline = Instant::now() + Duration::from_secs(20);
    while rig.work.path().join("h5-live").exists() {
        assert!(Instant::now() < deadline, "dropped lab was not cleaned");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        rig.calls_of("lclean")
            .iter()
            .any(|c| c[2].ends_with("h5-live"))
    );
}

impl Rig {
    /// The staged directories whose `lclean` ran to its end (the stand-in's record).
    fn cleaned(&self) -> Vec<String> {
        std::fs::read_to_string(self.state.path().join("cleaned.txt"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

#[tokio::test]
async fn deferred_teardowns_return_at_once_and_flush_waits_for_every_lclean() {
    let rig = Rig::new();
    let emu = rig.emulator(&["KATHARA_STANDIN_LCLEAN_SECS=1.5"], |_| {});
    // Off by default: a teardown waits for its lclean.
    let sync = emu
        .deploy(&LabRequest::new(simple_bgp()).named("bg-sync"))
        .await
        .unwrap();
    let t = Instant::now();
    sync.teardown().await.unwrap();
    assert!(t.elapsed() >= Duration::from_millis(1500));
    assert!(!rig.work.path().join("bg-sync").exists());

    assert!(emu.defer_teardowns());
    let labs = [
        emu.deploy(&LabRequest::new(simple_bgp()).named("bg-a"))
            .await
            .unwrap(),
        emu.deploy(&LabRequest::new(simple_bgp()).named("bg-b"))
            .await
            .unwrap(),
    ];
    for lab in &labs {
        lab.teardown().await.unwrap();
        // Out of use at once: no command reaches a lab being cleaned.
        let e = lab
            .exec("pc1", &Command::argv(["true"]), T)
            .await
            .unwrap_err();
        assert!(matches!(e, EmuError::NotRunning(_)), "{e}");
        // A second teardown does not clean twice.
        lab.teardown().await.unwrap();
    }
    // Both cleans are still running (each takes 1.5 s): nothing is cleaned yet.
    assert!(
        !rig.cleaned()
            .iter()
            .any(|d| d.ends_with("bg-a") || d.ends_with("bg-b"))
    );
    assert!(rig.work.path().join("bg-a").exists());
    let errors = emu.flush_teardowns().await;
    assert!(errors.is_empty(), "{errors:?}");
    for name in ["bg-a", "bg-b"] {
        assert!(!rig.work.path().join(name).exists(), "{name} still staged");
        let n = rig.cleaned().iter().filter(|d| d.ends_with(name)).count();
        assert_eq!(n, 1, "{name}: lclean ran {n} times");
    }
    // Nothing left to wait for.
    assert!(emu.flush_teardowns().await.is_empty());
}

#[test]
fn a_deferred_lclean_outlives_the_runtime_that_started_it_and_gc_finishes_the_instance() {
    let rig = Rig::new();
    let emu = rig.emulator(&["KATHARA_STANDIN_LCLEAN_SECS=3"], |_| {});
    // A driver that dies right after handing a lab to the background (a crash, a second
    // Ctrl-C): its runtime goes away with the clean in flight.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let lab = emu
            .deploy(&LabRequest::new(simple_bgp()).named("bg-crash"))
            .await
            .unwrap();
        assert!(emu.defer_teardowns());
        lab.teardown().await.unwrap();
        // Until lclean has started (it records its call first), not until it finishes.
        let deadline = Instant::now() + Duration::from_secs(20);
        while !rig
            .calls_of("lclean")
            .iter()
            .any(|c| c[2].ends_with("bg-crash"))
        {
            assert!(Instant::now() < deadline, "lclean never started");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    drop(rt);
    assert!(!rig.cleaned().iter().any(|d| d.ends_with("bg-crash")));
    // The lclean was not killed with its runtime: it finishes on its own.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !rig.cleaned().iter().any(|d| d.ends_with("bg-crash")) {
        assert!(
            Instant::now() < deadline,
            "the orphaned lclean did not finish"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The staged copy stays (only a finished clean in this process removes it); once its owner
    // is gone, gc removes it.
    let staged = rig.work.path().join("bg-crash");
    assert!(staged.exists());
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    std::fs::write(staged.join(".faultbench-owner"), format!("{dead_pid}\n")).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let emu2 = rig.emulator(&[], |_| {});
    assert_eq!(rt.block_on(emu2.gc()).unwrap(), vec!["bg-crash"]);
    assert!(!staged.exists());
}
