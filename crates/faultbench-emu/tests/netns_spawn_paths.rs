//! The two ways a command enters a device give the same result: the `faultbench-netshim
//! nsexec` entry started with `posix_spawn` (this test process: cargo builds the netshim beside
//! the test binaries) and the fork of the harness with an in-process hook
//! (`FAULTBENCH_NSEXEC=off`, in a child test process, since the choice is made once per
//! process). Exit codes, signals, output, environment, stdin, open descriptors, capabilities,
//! the system-call filter, ignored signals and namespace membership are compared. Needs root.

use faultbench_core::emulator::{Command, Lab, LabRequest};
use faultbench_emu::netns::{self, DeviceSpawn, NetnsEmulator};
use std::time::Duration;

const T: Duration = Duration::from_secs(20);
/// Names the lab the child test process attaches to.
const LAB_ENV: &str = "FAULTBENCH_TEST_SPAWN_LAB";
/// Marks the child's result line on its stdout.
const MARK: &str = "SPAWN-RESULTS ";

fn probes() -> Vec<Command> {
    let sh = |s: &str| Command::shell(s);
    vec![
        sh("echo out; echo err >&2; exit 5"),
        // Death by a signal is mirrored (no exit code).
        sh("kill -TERM $$"),
        Command::argv(["no-such-program"]),
        // Not executable: the spawn itself fails.
        Command::argv(["/etc/hostname"]),
        sh("env | sort"),
        // stdin is /dev/null.
        sh("cat; echo eof"),
        // Nothing of the harness or the entry leaks: 0, 1, 2 and `ls`'s own directory.
        sh("ls /proc/self/fd"),
        sh("grep -E '^(CapBnd|CapEff|Seccomp|NoNewPrivs|SigBlk):' /proc/self/status"),
        // Ignored signals, apart from glibc's internal 32 and 33: a process started by
        // `posix_spawn` (this test binary, by cargo) inherits those ignored, so the fork side
        // shows its own start rather than the device command's.
        sh(
            "i=$(sed -n 's/^SigIgn:\t//p' /proc/self/status); printf '%x\n' $(( 0x$i & ~0x180000000 ))",
        ),
        // A member of the device's PID namespace, with the device's other namespaces.
        sh("ps -e -o comm= | grep -c '^ps$'; cat /proc/1/comm"),
        sh("readlink /proc/self/ns/net /proc/self/ns/mnt /proc/self/ns/uts /proc/self/ns/pid"),
        sh("hostname; pwd"),
        // The filter refuses mounts.
        sh("mount -t tmpfs none /mnt 2>&1; echo $?"),
    ]
}

/// What a probe gave, without its duration.
async fn results(lab: &dyn Lab) -> Vec<String> {
    let mut v = Vec::new();
    for p in probes() {
        v.push(match lab.exec("a", &p, T).await {
            Ok(o) => format!(
                "stdout={:?} stderr={:?} exit={:?} timed_out={} truncated={}",
                o.stdout, o.stderr, o.exit_code, o.timed_out, o.truncated
            ),
            Err(e) => format!("error: {e}"),
        });
    }
    v
}

#[tokio::test]
async fn the_entry_and_the_fork_give_the_same_results() {
    assert!(
        matches!(netns::device_spawn(), DeviceSpawn::Entry(_)),
        "cargo test builds faultbench-netshim beside the test binary: {}",
        netns::device_spawn()
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lab.conf"), "a[0]=LINK\nb[0]=LINK\n").unwrap();
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()))
        .await
        .unwrap();
    let via_entry = results(&lab).await;

    let exe = std::env::current_exe().unwrap();
    let child = std::process::Command::new(exe)
        .args(["--exact", "fork_side", "--ignored", "--nocapture"])
        .env(LAB_ENV, lab.name())
        .env("FAULTBENCH_NSEXEC", "off")
        .output()
        .unwrap();
    lab.teardown().await.unwrap();
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&child.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(MARK))
        .unwrap_or_else(|| panic!("no results from the fork side: {stdout}"));
    let via_fork: Vec<String> = serde_json::from_str(line).unwrap();
    assert_eq!(via_entry.len(), via_fork.len());
    for (i, (e, f)) in via_entry.iter().zip(&via_fork).enumerate() {
        assert_eq!(e, f, "probe {i}: {:?}", probes()[i]);
    }
    // The probes do tell things apart (a broken comparison would pass on empty results).
    assert!(via_entry[0].contains("exit=Some(5)"), "{}", via_entry[0]);
    assert!(via_entry[1].contains("exit=None"), "{}", via_entry[1]);
    assert!(via_entry[2].contains("exit=Some(127)"), "{}", via_entry[2]);
    assert!(via_entry[3].starts_with("error:"), "{}", via_entry[3]);
    // (Descriptors the test binary inherited without close-on-exec, such as cargo's jobserver,
    // reach device commands on both sides alike; the entry adds none of its own.)
    assert!(
        via_entry[6].starts_with(r#"stdout="0\n1\n"#),
        "{}",
        via_entry[6]
    );
}

/// The fork side, run by the test above in a process of its own.
#[tokio::test]
#[ignore = "run by the_entry_and_the_fork_give_the_same_results"]
async fn fork_side() {
    let name = std::env::var(LAB_ENV).expect("started by the comparing test");
    assert!(
        matches!(netns::device_spawn(), DeviceSpawn::Fork { .. }),
        "{}",
        netns::device_spawn()
    );
    let lab = netns::attach_lab(&name).unwrap();
    let v = results(&lab).await;
    println!("{MARK}{}", serde_json::to_string(&v).unwrap());
}

/// `0m1.250000s` (dash's and bash's `times`) as seconds.
fn times_secs(s: &str) -> f64 {
    let (m, rest) = s.split_once('m').expect("minutes");
    let secs = rest.trim_end_matches('s');
    m.parse::<f64>().expect("minutes") * 60.0 + secs.parse::<f64>().expect("seconds")
}

#[tokio::test]
async fn a_lab_counts_the_cpu_of_the_commands_run_in_it() {
    assert!(matches!(netns::device_spawn(), DeviceSpawn::Entry(_)));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lab.conf"), "a[0]=LINK\nb[0]=LINK\n").unwrap();
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()))
        .await
        .unwrap();
    let before = lab.cpu_used().expect("a netns lab measures its CPU");
    // A shell busy on its own, then its own account of the CPU it used.
    let out = lab
        .exec(
            "a",
            &Command::shell("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; times"),
            T,
        )
        .await
        .unwrap();
    let after = lab.cpu_used().unwrap();
    lab.teardown().await.unwrap();
    let first = out.stdout.lines().next().expect("times prints two lines");
    let (user, sys) = first.split_once(' ').expect("user and system");
    let spent = times_secs(user) + times_secs(sys);
    assert!(spent > 0.0, "the loop used CPU: {out:?}");
    // The command ended before the second reading, so no scan of the lab's processes saw it:
    // only the entry's account can make up the difference.
    let counted = after.saturating_sub(before).as_secs_f64();
    eprintln!("counted {counted:.3} s, spent {spent:.3} s");
    assert!(
        counted >= spent,
        "lab counted {counted:.3} s, the command says it used {spent:.3} s"
    );
}

#[tokio::test]
async fn the_labs_environment_reaches_the_command_but_not_the_entry() {
    assert!(matches!(netns::device_spawn(), DeviceSpawn::Entry(_)));
    let dir = tempfile::tempdir().unwrap();
    // The dynamic loader's trace names every program it loads: with the variable seen by the
    // entry (a root process on the host, before it enters the device), the entry would appear.
    std::fs::write(
        dir.path().join("lab.conf"),
        "a[0]=LINK\nb[0]=LINK\na[env]=\"LD_DEBUG=files\"\n",
    )
    .unwrap();
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()))
        .await
        .unwrap();
    let out = lab
        .exec("a", &Command::argv(["/bin/true"]), T)
        .await
        .unwrap();
    lab.teardown().await.unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("/bin/true"),
        "the command saw the variable: {out:?}"
    );
    assert!(
        !out.stderr.contains("faultbench"),
        "the entry saw the variable: {out:?}"
    );
}
