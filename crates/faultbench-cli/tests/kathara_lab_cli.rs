//! `faultbench lab … --emulator kathara` and `scenario check --emulator kathara` on a real
//! Kathará engine.
//!
//! They need dockerd, the device images and the network plugin, so they are `#[ignore]`d in the
//! ordinary run and run by the Kathará stage of `scripts/test.sh`:
//!
//! ```text
//! cargo test -p faultbench-cli --test kathara_lab_cli -- --ignored --test-threads 1
//! ```
//!
//! Without an engine they fail with the command that installs one. Each test stages its
//! instances in its own work folder (`$FAULTBENCH_KATHARA_CONFIG`) and tears them down. The
//! first test needs neither engine nor Kathará and runs in every test run.

use faultbench_emu::hostcaps::{Feature, HostCaps};
use std::path::{Path, PathBuf};
use std::process::Output;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A Kathará configuration whose work folder is private to the test.
struct Rig {
    _work: tempfile::TempDir,
    config: PathBuf,
}

impl Rig {
    fn new() -> Rig {
        assert!(
            Path::new(&faultbench_emu::kathara::engine::local_socket()).exists(),
            "no Docker engine: install and start it with `./scripts/install-deps.sh --kathara`"
        );
        Rig::with_config("")
    }

    /// A rig whose configuration also holds `extra` (TOML).
    fn with_config(extra: &str) -> Rig {
        let work = tempfile::tempdir().unwrap();
        let config = work.path().join("kathara.toml");
        std::fs::write(
            &config,
            format!(
                "work_dir = \"{}\"\n{extra}",
                work.path().join("labs").display()
            ),
        )
        .unwrap();
        Rig {
            _work: work,
            config,
        }
    }

    fn fb(&self, args: &[&str]) -> Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_faultbench"))
            .args(args)
            .current_dir(repo())
            .env("FAULTBENCH_KATHARA_CONFIG", &self.config)
            .output()
            .unwrap()
    }
}

/// Tears a Kathará instance down however the test ends.
struct Down<'a>(&'a Rig, &'a str);
impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = self.0.fb(&["lab", "down", "--emulator", "kathara", self.1]);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Containers Kathará labelled for instance `name`.
fn containers_of(name: &str) -> usize {
    let hash = faultbench_emu::kathara::lab_hash(name);
    let out = std::process::Command::new("docker")
        .args(["ps", "-aq", "--filter", &format!("label=lab_hash={hash}")])
        .output()
        .unwrap();
    text(&out.stdout).lines().count()
}

#[test]
fn lab_commands_take_the_kathara_emulator_and_name_what_is_missing() {
    // No engine and no Kathará are needed to find that nothing is staged: `true` stands in
    // for the `kathara` command line.
    let rig = Rig::with_config("cli = [\"true\"]\n");
    let o = rig.fb(&["lab", "ls", "--emulator", "kathara"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("no Kathará lab is staged under"),
        "{}",
        text(&o.stdout)
    );
    let o = rig.fb(&["lab", "ls", "--emulator", "kathara", "--json"]);
    assert_eq!(text(&o.stdout).trim(), "[]");
    let o = rig.fb(&[
        "lab",
        "exec",
        "--emulator",
        "kathara",
        "nope",
        "r1",
        "--",
        "true",
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("no Kathará instance of that name"),
        "{}",
        text(&o.stderr)
    );
    let o = rig.fb(&["lab", "verify", "--emulator", "kathara", "../etc"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("instance name"),
        "{}",
        text(&o.stderr)
    );
    let o = rig.fb(&["lab", "down", "--emulator", "kathara", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    let o = rig.fb(&["lab", "gc", "--emulator", "kathara"]);
    assert_eq!(text(&o.stdout).trim(), "nothing to collect");
    let o = rig.fb(&["lab", "ls", "--emulator", "podman"]);
    assert_eq!(o.status.code(), Some(2), "clap refuses an unknown backend");
}

#[test]
#[ignore = "needs the Kathará engine; run by the Kathará stage with --ignored"]
fn every_lab_command_works_on_kathara_from_separate_processes() {
    let rig = Rig::new();
    let name = format!("klab-{}", std::process::id());
    let _down = Down(&rig, &name);
    let up = rig.fb(&[
        "lab",
        "up",
        "--emulator",
        "kathara",
        "simple_bgp",
        "--name",
        &name,
    ]);
    assert_eq!(up.status.code(), Some(0), "{}", text(&up.stderr));
    assert_eq!(text(&up.stdout).trim(), name);
    assert!(
        text(&up.stderr).contains("baseline probes held"),
        "{}",
        text(&up.stderr)
    );
    assert_eq!(containers_of(&name), 4);

    let k = ["lab", "exec", "--emulator", "kathara", &name];
    let with = |dev: &str, cmd: &[&str]| {
        let mut a: Vec<&str> = k.to_vec();
        a.push(dev);
        a.push("--");
        a.extend_from_slice(cmd);
        rig.fb(&a)
    };
    let o = with("router1", &["vtysh", "-c", "show bgp summary"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("Neighbor"), "{}", text(&o.stdout));
    let o = with("pc1", &["sh", "-c", "echo apart >&2; exit 3"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(text(&o.stderr), "apart\n");
    assert_eq!(text(&o.stdout), "");
    let o = with("pc1", &["no-such-program"]);
    assert_eq!(o.status.code(), Some(127), "{}", text(&o.stderr));
    let mut a: Vec<&str> = k.to_vec();
    a.extend(["pc1", "--timeout", "1", "--", "sleep", "30"]);
    let o = rig.fb(&a);
    assert_eq!(o.status.code(), Some(137), "{}", text(&o.stderr));

    let o = rig.fb(&["lab", "verify", "--emulator", "kathara", &name]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("9 of 9 probes passed"),
        "{}",
        text(&o.stdout)
    );
    let o = rig.fb(&["lab", "snapshot", "--emulator", "kathara", &name]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with("4 devices"),
        "{}",
        text(&o.stdout)
    );
    let o = rig.fb(&["lab", "ls", "--emulator", "kathara"]);
    let line = text(&o.stdout)
        .lines()
        .find(|l| l.starts_with(&name))
        .map(String::from);
    let line = line.unwrap_or_else(|| panic!("{name} not listed: {}", text(&o.stdout)));
    assert!(line.contains("4/4") && line.contains("detached"), "{line}");

    let o = rig.fb(&["lab", "down", "--emulator", "kathara", &name]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(containers_of(&name), 0);
    let o = rig.fb(&[
        "lab",
        "exec",
        "--emulator",
        "kathara",
        &name,
        "pc1",
        "--",
        "true",
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("no Kathará instance"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
#[ignore = "needs the Kathará engine; run by the Kathará stage with --ignored"]
fn a_lab_needing_what_the_kernel_lacks_is_refused_before_kathara_starts_it() {
    let rig = Rig::new();
    let lab = tempfile::tempdir().unwrap();
    std::fs::write(
        lab.path().join("lab.conf"),
        "r1[0]=A\nr1[image]=\"kathara/base\"\nr2[0]=A\nr2[image]=\"kathara/base\"\n",
    )
    .unwrap();
    std::fs::write(
        lab.path().join("r1.startup"),
        "ip link add lo9 type dummy\nip addr add 10.9.9.9/32 dev lo9\n",
    )
    .unwrap();
    std::fs::write(
        lab.path().join("r2.startup"),
        "ip addr add 10.0.0.2/24 dev eth0\n",
    )
    .unwrap();
    let name = format!("kneeds-{}", std::process::id());
    let _down = Down(&rig, &name);
    let dir = lab.path().display().to_string();
    let o = rig.fb(&[
        "lab",
        "up",
        "--emulator",
        "kathara",
        &dir,
        "--name",
        &name,
        "--no-wait",
    ]);
    if HostCaps::probe().has(Feature::Dummy) {
        // A kernel with dummy devices runs the lab.
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert_eq!(containers_of(&name), 2);
    } else {
        assert_ne!(o.status.code(), Some(0));
        let err = text(&o.stderr);
        assert!(
            err.contains("unsupported on this host: dummy") && err.contains("r1 (r1.startup:1)"),
            "{err}"
        );
        assert_eq!(containers_of(&name), 0, "nothing may be deployed");
    }
}

#[test]
#[ignore = "needs the Kathará engine; run by the Kathará stage with --ignored"]
fn scenario_check_runs_on_kathara() {
    let rig = Rig::new();
    let o = rig.fb(&[
        "scenario",
        "check",
        "--emulator",
        "kathara",
        "dataset/nika_bgp_Q/base/simple-bgp-router1-bgp-port-blocked.txt",
    ]);
    let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{all}");
    assert!(
        all.contains("on the kathara emulator") && all.contains("1 passed"),
        "{all}"
    );
}
