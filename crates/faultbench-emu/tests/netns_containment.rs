//! Containment of the netns backend: what runs in a device cannot harm the host or other labs.
//! Needs root.

use faultbench_core::emulator::{Command, ExecOutput, Lab, LabRequest};
use faultbench_emu::netns::{NetnsEmulator, NetnsLab};
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

fn write_lab(dir: &Path) {
    let files = [
        ("lab.conf", "a[0]=LINK\nb[0]=LINK\n"),
        ("a.startup", "ip addr add 10.9.0.1/24 dev eth0\n"),
        ("b.startup", "ip addr add 10.9.0.2/24 dev eth0\n"),
    ];
    for (p, text) in files {
        std::fs::write(dir.join(p), text).unwrap();
    }
}

async fn run(lab: &NetnsLab, device: &str, script: &str) -> ExecOutput {
    lab.exec(device, &Command::shell(script), T)
        .await
        .unwrap_or_else(|e| panic!("{device}: {script}: {e}"))
}

async fn two_labs() -> (tempfile::TempDir, NetnsLab, NetnsLab) {
    let dir = tempfile::tempdir().unwrap();
    write_lab(dir.path());
    let emu = NetnsEmulator::new();
    let req = LabRequest::new(dir.path());
    let (a, b) = tokio::join!(emu.deploy_lab(&req), emu.deploy_lab(&req));
    (dir, a.unwrap(), b.unwrap())
}

#[tokio::test]
async fn destructive_commands_stay_inside_their_device() {
    let (_dir, lab, other) = two_labs().await;

    // rm -rf /usr: the host's /usr is read-only in the device.
    let out = run(&lab, "a", "rm -rf /usr 2>&1; echo rc=$?").await;
    assert!(out.stdout.contains("Read-only file system"), "{out:?}");
    assert!(!out.stdout.contains("rc=0"), "{out:?}");
    assert!(Path::new("/usr/bin/ls").exists());
    assert!(run(&lab, "a", "test -x /usr/bin/ls").await.success());

    // Writes outside the device's own places fail, writes inside them stay in the device.
    let marker = format!("h1-containment-{}", std::process::id());
    for (script, why) in [
        (format!("touch /usr/local/{marker}"), "read-only /usr"),
        ("mount -o remount,rw /usr".to_string(), "remount refused"),
        ("mount -t tmpfs none /mnt".to_string(), "new mounts refused"),
        ("mknod /tmp/disk b 254 0".to_string(), "no block devices"),
        (
            "echo 0 > /proc/sys/net/ipv4/ip_forward".to_string(),
            "read-only /proc/sys",
        ),
        ("echo h > /proc/sysrq-trigger".to_string(), "no sysrq"),
        (
            "ls /work /home/* /run/faultbench".to_string(),
            "host folders invisible",
        ),
    ] {
        let out = run(&lab, "a", &script).await;
        assert!(!out.success(), "`{script}` ({why}) succeeded: {out:?}");
    }
    assert!(!Path::new("/usr/local").join(&marker).exists());
    let host_hostname = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
    let out = run(
        &lab,
        "a",
        &format!("echo changed >> /etc/hostname && touch /root/{marker} /var/{marker} /tmp/{marker} && echo ok"),
    )
    .await;
    assert_eq!(out.stdout, "ok\n", "{out:?}");
    assert_eq!(
        std::fs::read_to_string("/etc/hostname").unwrap_or_default(),
        host_hostname
    );
    for d in ["/root", "/var", "/tmp"] {
        assert!(
            !Path::new(d).join(&marker).exists(),
            "{d}/{marker} leaked to the host"
        );
    }
    // ... and stay private to that device, also in the other lab.
    assert!(
        !run(&lab, "b", &format!("test -e /root/{marker}"))
            .await
            .success()
    );
    assert!(
        !run(&other, "a", &format!("test -e /root/{marker}"))
            .await
            .success()
    );

    // `ps` shows the device's processes only.
    let ps = run(&lab, "a", "ps -e -o comm=").await.stdout;
    assert!(ps.lines().count() < 10, "{ps}");
    assert!(
        !ps.contains("cargo") && !ps.contains("netns_containme"),
        "{ps}"
    );

    lab.teardown().await.unwrap();
    other.teardown().await.unwrap();
}

/// A named network namespace on the host, deleted when dropped.
struct HostNetns(String);

impl Drop for HostNetns {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.0])
            .status();
    }
}

#[tokio::test]
async fn kill_all_and_netns_deletion_reach_nothing_outside() {
    let (_dir, lab, other) = two_labs().await;
    // A named network namespace on the host, as another lab tool would have.
    let victim = format!("h1-victim-{}", std::process::id());
    assert!(
        std::process::Command::new("ip")
            .args(["netns", "add", &victim])
            .status()
            .unwrap()
            .success()
    );
    // Removed again even when an assertion below fails.
    let _cleanup = HostNetns(victim.clone());

    run(&lab, "b", "sleep 1000 >/dev/null 2>&1 &").await;
    run(&other, "a", "sleep 1000 >/dev/null 2>&1 &").await;
    run(&lab, "a", "sleep 1000 >/dev/null 2>&1 &").await;

    let out = run(&lab, "a", &format!("ip netns list; ip netns del {victim}")).await;
    assert!(!out.success(), "{out:?}");
    // kill(-1) spares only the caller and PID 1 (here: the shell running the builtin).
    let out = run(&lab, "a", "kill -9 -1; echo done").await;
    assert_eq!(out.stdout, "done\n", "{out:?}");

    // The device itself still runs (its PID 1 is immune), its own processes are gone...
    assert!(run(&lab, "a", "true").await.success());
    // SIGKILL is delivered and the victims reaped by the device's init asynchronously: on a
    // loaded machine a killed `sleep` can still be listed (a zombie) for a moment.
    let mut survivors = true;
    for _ in 0..50 {
        survivors = run(&lab, "a", "pgrep -x sleep").await.success();
        if !survivors {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!survivors, "a sleep of device a outlived kill -9 -1 by 5 s");
    // ... the other device of the same lab, the other lab and the host are untouched.
    assert!(run(&lab, "b", "pgrep -x sleep").await.success());
    assert!(run(&other, "a", "pgrep -x sleep").await.success());
    assert!(run(&other, "a", "ping -c1 -W1 10.9.0.2").await.success());
    let netns = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&netns.stdout).contains(&victim));

    lab.teardown().await.unwrap();
    other.teardown().await.unwrap();
}

#[tokio::test]
async fn exec_timeout_kills_the_command_tree_and_output_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    write_lab(dir.path());
    let mut lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()))
        .await
        .unwrap();
    let out = lab
        .exec(
            "a",
            &Command::shell("sleep 30 & sleep 31; echo never"),
            Duration::from_millis(500),
        )
        .await
        .unwrap();
    assert!(out.timed_out && out.exit_code.is_none(), "{out:?}");
    assert!(out.duration_ms < 5000, "{out:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let left = run(&lab, "a", "pgrep -x sleep").await;
    assert!(
        left.stdout.is_empty(),
        "the timed-out command's children survived: {left:?}"
    );

    lab.set_output_cap(1000);
    let out = run(
        &lab,
        "a",
        "head -c 5000 /dev/zero | tr '\\0' x; echo; echo err >&2",
    )
    .await;
    assert!(out.truncated, "{out:?}");
    assert_eq!(out.stdout.len(), 1000);
    assert_eq!(out.stderr, "err\n");
    assert_eq!(out.exit_code, Some(0));

    // Exit codes pass through; a missing program is a shell-like 127.
    assert_eq!(run(&lab, "a", "exit 7").await.exit_code, Some(7));
    let out = lab
        .exec("a", &Command::argv(["no-such-program"]), T)
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(127), "{out:?}");
    assert!(lab.exec("zz", &Command::argv(["true"]), T).await.is_err());
    lab.teardown().await.unwrap();
}
