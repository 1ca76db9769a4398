//! Device commands through the Docker Engine API, against a real engine.
//!
//! These need a running dockerd and a device image, so they are `#[ignore]`d in the ordinary
//! test run and run by the Kathará stage of `scripts/test.sh`:
//!
//! ```text
//! cargo test -p faultbench-emu --test kathara_engine_live -- --ignored --test-threads 1
//! ```
//!
//! Without an engine they fail (never skip) with the command that installs one. The image is
//! `kathara/base` (built by `./scripts/install-deps.sh --kathara`), or
//! `$FAULTBENCH_KATHARA_TEST_IMAGE`. Each test starts its own containers, labelled as Kathará
//! labels its devices, and removes them.

use faultbench_core::emulator::{Command, EmuError, Lab};
use faultbench_emu::kathara::{
    DockerEngine, KatharaEmulator, KatharaOptions, OWNER_FILE, engine::local_socket, lab_hash,
};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

fn image() -> String {
    std::env::var("FAULTBENCH_KATHARA_TEST_IMAGE").unwrap_or_else(|_| "kathara/base".into())
}

fn docker(args: &[&str]) -> std::process::Output {
    std::process::Command::new("docker")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("docker CLI: {e}; install the engine with `./scripts/install-deps.sh --kathara`")
        })
}

/// The engine, or a failure that says how to get one.
async fn engine(limit: usize) -> DockerEngine {
    let socket = local_socket();
    let engine = DockerEngine::connect(&socket, limit).await.unwrap_or_else(|e| {
        panic!("{e}\n(these tests need a running Docker engine: `./scripts/install-deps.sh --kathara`)")
    });
    let img = image();
    let out = docker(&["image", "inspect", "--format", "{{.Id}}", &img]);
    assert!(
        out.status.success(),
        "image {img} is missing: build it with `./scripts/install-deps.sh --kathara` \
         (or set FAULTBENCH_KATHARA_TEST_IMAGE)"
    );
    engine
}

/// A running container labelled as Kathará labels device `device` of lab `lab`; removed on drop.
struct Device {
    id: String,
}

impl Device {
    fn start(lab: &str, device: &str) -> Device {
        let out = docker(&[
            "run",
            "-d",
            "--rm",
            "--network",
            "none",
            "--label",
            "app=kathara",
            "--label",
            &format!("lab_hash={}", lab_hash(lab)),
            "--label",
            &format!("name={device}"),
            "--label",
            "faultbench_test=1",
            "--entrypoint",
            "sleep",
            &image(),
            "3600",
        ]);
        assert!(
            out.status.success(),
            "docker run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Device {
            id: String::from_utf8_lossy(&out.stdout).trim().to_string(),
        }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        let _ = docker(&["rm", "-f", &self.id]);
    }
}

fn argv(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn unique(stem: &str) -> String {
    format!("{stem}-{}", std::process::id())
}

#[tokio::test]
#[ignore = "needs a Docker engine and an image; run by the Kathará stage with --ignored"]
async fn exit_codes_come_back_and_stderr_stays_apart() {
    let engine = engine(4).await;
    let d = Device::start(&unique("codes"), "r1");
    let ok = engine
        .exec(
            &d.id,
            &argv(&["sh", "-c", "echo out; echo err >&2"]),
            T,
            1 << 20,
        )
        .await
        .unwrap();
    assert_eq!(ok.exit_code, Some(0));
    assert_eq!(ok.stdout, "out\n");
    assert_eq!(ok.stderr, "err\n");
    assert!(!ok.timed_out && !ok.truncated);
    let three = engine
        .exec(
            &d.id,
            &argv(&["sh", "-c", "echo gone >&2; exit 3"]),
            T,
            1 << 20,
        )
        .await
        .unwrap();
    assert_eq!(three.exit_code, Some(3));
    assert_eq!(three.stdout, "");
    assert_eq!(three.stderr, "gone\n");
    assert!(!three.timed_out);
}

#[tokio::test]
#[ignore = "needs a Docker engine and an image; run by the Kathará stage with --ignored"]
async fn a_command_past_its_timeout_is_killed_inside_the_container() {
    let engine = engine(4).await;
    let d = Device::start(&unique("timeout"), "r1");
    let out = engine
        .exec(
            &d.id,
            &argv(&["sh", "-c", "echo started; sleep 307; echo never"]),
            Duration::from_millis(1500),
            1 << 20,
        )
        .await
        .unwrap();
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.exit_code, None);
    assert_eq!(out.stdout, "started\n");
    // Neither the shell nor its child survives in the container.
    let ps = engine
        .exec(&d.id, &argv(&["ps", "-eo", "args"]), T, 1 << 20)
        .await
        .unwrap();
    assert_eq!(ps.exit_code, Some(0), "{ps:?}");
    assert!(
        ps.stdout.contains("sleep 3600"),
        "ps sees PID 1: {}",
        ps.stdout
    );
    assert!(
        !ps.stdout.contains("sleep 307"),
        "left running: {}",
        ps.stdout
    );
}

#[tokio::test]
#[ignore = "needs a Docker engine and an image; run by the Kathará stage with --ignored"]
async fn output_beyond_the_cap_is_cut_and_flagged() {
    let engine = engine(4).await;
    let d = Device::start(&unique("cap"), "r1");
    let out = engine
        .exec(
            &d.id,
            &argv(&[
                "sh",
                "-c",
                "head -c 300000 /dev/zero | tr '\\0' a; echo tail >&2",
            ]),
            T,
            1000,
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout.len(), 1000);
    assert!(out.stdout.bytes().all(|b| b == b'a'));
    assert!(out.truncated);
    assert_eq!(out.stderr, "tail\n");
}

#[tokio::test]
#[ignore = "needs a Docker engine and an image; run by the Kathará stage with --ignored"]
async fn a_missing_program_is_exit_127_with_its_name() {
    let engine = engine(4).await;
    let d = Device::start(&unique("missing"), "r1");
    let out = engine
        .exec(&d.id, &argv(&["no-such-program", "-x"]), T, 1 << 20)
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(127), "{out:?}");
    assert!(out.stderr.contains("no-such-program"), "{out:?}");
    // A container that is gone is an error, not a command result.
    let gone = Device::start(&unique("gone"), "r1");
    let id = gone.id.clone();
    drop(gone);
    let e = engine.exec(&id, &argv(&["true"]), T, 1 << 20).await;
    assert!(
        matches!(e, Err(faultbench_emu::kathara::EngineError::NotRunning(_))),
        "{e:?}"
    );
}

#[tokio::test]
#[ignore = "needs a Docker engine and an image; run by the Kathará stage with --ignored"]
async fn no_more_commands_run_at_once_than_the_cap() {
    let engine = Arc::new(engine(2).await);
    let d = Device::start(&unique("cap2"), "r1");
    // Each command logs its start and end in the container; replaying the log gives the
    // largest number that overlapped there.
    let script = "echo s >> /tmp/overlap; sleep 0.4; echo e >> /tmp/overlap";
    let runs = (0..6).map(|_| {
        let (engine, id) = (engine.clone(), d.id.clone());
        tokio::spawn(async move {
            engine
                .exec(&id, &argv(&["sh", "-c", script]), T, 1 << 20)
                .await
        })
    });
    for r in futures_util::future::join_all(runs).await {
        assert_eq!(r.unwrap().unwrap().exit_code, Some(0));
    }
    let log = engine
        .exec(&d.id, &argv(&["cat", "/tmp/overlap"]), T, 1 << 20)
        .await
        .unwrap()
        .stdout;
    let (mut now, mut most) = (0i32, 0i32);
    for l in log.lines() {
        now += if l == "s" { 1 } else { -1 };
        most = most.max(now);
    }
    assert_eq!(log.lines().count(), 12, "{log}");
    assert!(most <= 2, "{most} ran at once in the container");
    assert_eq!(engine.limit(), 2);
    assert_eq!(engine.peak_in_flight(), 2);
}

#[tokio::test]
#[ignore = "needs a Docker engine and an image; run by the Kathará stage with --ignored"]
async fn an_instance_is_attached_by_name_and_its_devices_found_by_label() {
    let _engine = engine(4).await;
    let name = unique("attach");
    let (r1, pc1) = (Device::start(&name, "r1"), Device::start(&name, "pc1"));
    // A second lab with the same device names must not be reached.
    let _other = Device::start(&unique("attach-other"), "r1");
    // The staged instance another process would have left (`lab up`).
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("lab.conf"),
        format!("LAB_NAME={name}\nr1[0]=A\npc1[0]=A\n"),
    )
    .unwrap();
    std::fs::write(dir.join("kathara.conf"), "{\"manager_type\": \"docker\"}").unwrap();
    std::fs::write(dir.join(OWNER_FILE), "detached\n/nowhere\n").unwrap();
    std::fs::write(
        dir.join(faultbench_emu::kathara::SETTINGS_RECORD_FILE),
        r#"{"user_file": "/root/.config/kathara.conf", "carried": ["network_plugin"],
            "overridden": [{"key": "open_terminals", "user": true, "written": false}],
            "added": []}"#,
    )
    .unwrap();
    let emu = KatharaEmulator::new(KatharaOptions {
        work_dir: Some(work.path().to_path_buf()),
        ..Default::default()
    })
    .unwrap();
    let lab = emu.attach(&name).await.unwrap();
    assert!(
        lab.engine().is_some(),
        "a local Docker manager uses the API"
    );
    // What the harness wrote over the user's Kathará settings reaches run records.
    assert_eq!(
        lab.deploy_notes(),
        [
            "Kathará settings from /root/.config/kathara.conf (1 keys kept; overridden: open_terminals true → false)"
        ]
    );
    let host = lab
        .exec("pc1", &Command::argv(["hostname"]), T)
        .await
        .unwrap();
    assert_eq!(host.stdout.trim(), &pc1.id[..12]);
    let host = lab
        .exec("r1", &Command::shell("hostname"), T)
        .await
        .unwrap();
    assert_eq!(host.stdout.trim(), &r1.id[..12]);
    let e = lab
        .exec("r9", &Command::argv(["true"]), T)
        .await
        .unwrap_err();
    assert!(matches!(e, EmuError::UnknownDevice { .. }), "{e}");
    assert_eq!(emu.instances().len(), 1);
    assert!(emu.attach("no-such-lab").await.is_err());
}

#[tokio::test]
#[ignore = "needs a Docker engine and an image; run by the Kathará stage with --ignored"]
async fn a_background_child_does_not_hold_the_command_open() {
    let engine = engine(4).await;
    let d = Device::start(&unique("bg"), "r1");
    // As an injection that starts a daemon without detaching its output would.
    let out = engine
        .exec(
            &d.id,
            &argv(&["sh", "-c", "sleep 30 & echo started"]),
            T,
            1 << 20,
        )
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "started\n");
    // It returned with the shell, not at the timeout with its child (which still runs).
    assert!(!out.timed_out);
    let ps = engine
        .exec(&d.id, &argv(&["ps", "-eo", "args"]), T, 1 << 20)
        .await
        .unwrap();
    assert!(ps.stdout.contains("sleep 30"), "{}", ps.stdout);
}

#[tokio::test]
#[ignore = "needs a Docker engine and an image; run by the Kathará stage with --ignored"]
async fn without_timeout_in_the_image_an_overrun_is_killed_by_pid() {
    let engine = engine(4).await;
    let d = Device::start(&unique("notimeout"), "r1");
    // An image without `timeout`: the command runs unwrapped, and the host kills it by pid.
    let rm = engine
        .exec(
            &d.id,
            &argv(&["sh", "-c", "rm -f \"$(command -v timeout)\""]),
            T,
            1 << 20,
        )
        .await
        .unwrap();
    assert_eq!(rm.exit_code, Some(0), "{rm:?}");
    let gone = engine
        .exec(
            &d.id,
            &argv(&["sh", "-c", "command -v timeout"]),
            T,
            1 << 20,
        )
        .await
        .unwrap();
    assert_ne!(gone.exit_code, Some(0), "timeout still there: {gone:?}");
    let out = engine
        .exec(
            &d.id,
            &argv(&["sleep", "311"]),
            Duration::from_secs(1),
            1 << 20,
        )
        .await
        .unwrap();
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.exit_code, None);
    let ps = engine
        .exec(&d.id, &argv(&["ps", "-eo", "args"]), T, 1 << 20)
        .await
        .unwrap();
    assert!(
        !ps.stdout.contains("sleep 311"),
        "left running: {}",
        ps.stdout
    );
}
