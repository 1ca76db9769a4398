//! An honest `faultbench lab up` (issue 29, item 5 and "Bad input"): what a lab's startup
//! left undone is listed with the device, the file and the line, and the exit code says so;
//! what the host cannot give a lab is named before anything is deployed; and the `faultbench`
//! binary alone carries the kernel emulations.
//!
//! Each test writes its own small lab into a temporary folder. Needs root, FRR and ifupdown (as
//! CI has); every lab is torn down however the test ends.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

fn fb() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_faultbench"))
}

/// Tears the lab down however the test ends.
struct Down(&'static str);
impl Drop for Down {
    fn drop(&mut self) {
        let _ = fb().args(["lab", "down", self.0]).output();
    }
}

/// Writes `files` (path, text) under a new temporary folder.
fn lab(files: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for (f, text) in files {
        let p = t.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    t
}

/// `faultbench lab up DIR --name NAME EXTRA…` with `bin`; the lab is torn down by the caller's
/// guard.
fn up_with(bin: &Path, dir: &Path, name: &str, extra: &[&str]) -> (Output, String) {
    let _ = std::process::Command::new(bin)
        .args(["lab", "down", name])
        .output();
    let out = std::process::Command::new(bin)
        .args(["lab", "up"])
        .arg(dir)
        .args(["--name", name])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

fn up(dir: &Path, name: &str, extra: &[&str]) -> (Output, String) {
    up_with(
        Path::new(env!("CARGO_BIN_EXE_faultbench")),
        dir,
        name,
        extra,
    )
}

fn exec(name: &str, device: &str, cmd: &[&str]) -> bool {
    fb().args(["lab", "exec", name, device, "--"])
        .args(cmd)
        .output()
        .unwrap()
        .status
        .success()
}

/// Issue 29: `line 1: /etc/init.d/networking: No such file or directory` and `startup exited
/// with 127` were a warning, and `lab up` exited 0.
#[test]
fn failed_startup_commands_are_listed_with_device_and_line_and_fail_lab_up() {
    const NAME: &str = "honest-cmd";
    let _d = Down(NAME);
    let l = lab(&[
        ("lab.conf", "h1[0]=A\nh2[0]=A\n"),
        (
            "h1.startup",
            "ip address add 10.0.0.1/24 dev eth0\n\
             /etc/init.d/no-such-service restart\n\
             for i in 1 2; do no-such-command --flag; done\n\
             ip link del no-such-link 2>/dev/null\n\
             false || true\n",
        ),
        ("h2.startup", "ip address add 10.0.0.2/24 dev eth0\n"),
    ]);
    let (out, stderr) = up(l.path(), NAME, &[]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("startup problems (2)"),
        "two failures (the silenced and the tolerated ones are not listed):\n{stderr}"
    );
    assert!(
        stderr.contains(
            "h1: h1.startup:2: `/etc/init.d/no-such-service restart` exited 127: \
             /hostlab/h1.startup: line 2: /etc/init.d/no-such-service: No such file or directory"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("h1: h1.startup:3: `no-such-command --flag` exited 127 (2 times)"),
        "{stderr}"
    );
    assert!(!stderr.contains("h2:"), "{stderr}");
    assert!(stderr.contains("--accept-startup-errors"), "{stderr}");
    // The lab runs all the same (for inspection), and the flag accepts it.
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), NAME);
    assert!(exec(NAME, "h1", &["ping", "-c1", "-W2", "10.0.0.2"]));
    let (out, stderr) = up(l.path(), NAME, &["--accept-startup-errors"]);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("startup problems (2)"), "{stderr}");
}

/// A daemon `etc/frr/daemons` enables that does not start was not noticed.
#[test]
fn an_enabled_daemon_that_does_not_start_is_listed() {
    const NAME: &str = "honest-daemon";
    let _d = Down(NAME);
    let l = lab(&[
        ("lab.conf", "r1[0]=A\nr1[image]=\"kathara/frr\"\n"),
        (
            "r1.startup",
            "ip address add 10.0.0.1/24 dev eth0\nsystemctl start frr\n",
        ),
        (
            "r1/etc/frr/daemons",
            "zebra=yes\nospfd=yes\nripd=yes\nvtysh_enable=yes\n\
             zebra_options=\"  -A 127.0.0.1 -s 90000000\"\n\
             ospfd_options=\"  -A 127.0.0.1\"\n\
             ripd_options=\"  -A 127.0.0.1 --no-such-option\"\n",
        ),
        (
            "r1/etc/frr/frr.conf",
            "hostname r1\n!\nrouter ospf\n network 10.0.0.0/24 area 0\n!\n",
        ),
    ]);
    let (out, stderr) = up(l.path(), NAME, &[]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "r1: r1/etc/frr/daemons:3: enables ripd, but it is not running after the startup"
        ),
        "{stderr}"
    );
    assert!(
        !stderr.contains("enables ospfd") && !stderr.contains("enables zebra"),
        "{stderr}"
    );
}

/// An address a device's files give it that is not applied: through ifupdown (the stanza's
/// `pre-up` fails, so ifup leaves the interface alone) and through `ip address add` on an
/// interface that does not exist.
#[test]
fn addresses_the_files_give_but_that_are_not_applied_are_listed() {
    const NAME: &str = "honest-addr";
    let _d = Down(NAME);
    let l = lab(&[
        ("lab.conf", "h1[0]=A\nh2[0]=A\n"),
        (
            "h1.startup",
            "ip address add 10.0.0.1/24 dev eth0\nip address add 10.0.9.1/24 dev eth7\n",
        ),
        ("h2.startup", "/etc/init.d/networking restart || true\n"),
        (
            "h2/etc/network/interfaces",
            "auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet static\n    address 10.0.0.2\n    netmask 255.255.255.0\n    pre-up false\n",
        ),
    ]);
    let (out, stderr) = up(l.path(), NAME, &[]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "h2: h2/etc/network/interfaces:6: gives eth0 10.0.0.2 netmask 255.255.255.0, \
             but h2 has no address 10.0.0.2 on eth0 after its startup"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("h1: h1.startup:2: `ip address add 10.0.9.1/24 dev eth7` exited 1")
            && stderr.contains("(so h1 has no address 10.0.9.1 on eth7)"),
        "{stderr}"
    );
    assert!(!stderr.contains("h1.startup:1"), "{stderr}");
}

/// Bad input: a lab built around an image the netns backend cannot provide deployed anyway,
/// and its switch simply did nothing.
#[test]
fn an_image_we_cannot_provide_is_refused_before_anything_is_deployed() {
    const NAME: &str = "honest-p4";
    let _d = Down(NAME);
    let l = lab(&[(
        "lab.conf",
        "LAB_DESCRIPTION=\"p4\"\nh1[0]=A\ns1[0]=A\ns1[1]=B\ns1[image]=\"kathara/p4\"\nh2[0]=B\nc1[0]=B\nc1[image]=\"kathara/sdn\"\n",
    )]);
    let t = Instant::now();
    let (out, stderr) = up(l.path(), NAME, &[]);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(
        stderr.contains("nothing was deployed")
            && stderr.contains("image kathara/p4, used by s1 (lab.conf:5): a P4 software switch")
            && stderr.contains("image kathara/sdn, used by c1 (lab.conf:8): Open vSwitch"),
        "{stderr}"
    );
    let ls = fb().args(["lab", "ls", "--json"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&ls.stdout).contains(NAME),
        "no instance exists"
    );
}

/// Issue 29: the `faultbench` binary copied alone (no `faultbench-netshim` beside it, as after
/// `cargo install`) only warned "kernel emulations not installed", and VLAN labs then failed
/// for a minute. Alone it carries the emulations; with them explicitly pointed nowhere, a lab
/// needing one the kernel lacks is refused at once, naming the feature.
#[test]
fn the_faultbench_binary_alone_carries_the_kernel_emulations() {
    const NAME: &str = "honest-alone";
    let _d = Down(NAME);
    let bin_dir = tempfile::tempdir().unwrap();
    let bin = bin_dir.path().join("faultbench");
    std::fs::copy(env!("CARGO_BIN_EXE_faultbench"), &bin).unwrap();
    let vlan = |last: u8| {
        format!(
            "ip link set eth0 up\nip link add link eth0 name eth0.10 type vlan id 10\n\
             ip address add 10.10.0.{last}/24 dev eth0.10\nip link set eth0.10 up\n"
        )
    };
    let l = lab(&[
        ("lab.conf", "h1[0]=TRUNK\nh2[0]=TRUNK\n"),
        ("h1.startup", &vlan(1)),
        ("h2.startup", &vlan(2)),
    ]);
    let run = |env_netshim: Option<&str>| {
        let _ = std::process::Command::new(&bin)
            .args(["lab", "down", NAME])
            .output();
        let mut c = std::process::Command::new(&bin);
        c.args(["lab", "up"])
            .arg(l.path())
            .args(["--name", NAME])
            .env_remove("FAULTBENCH_NETSHIM");
        if let Some(v) = env_netshim {
            c.env("FAULTBENCH_NETSHIM", v);
        }
        let t = Instant::now();
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            t.elapsed(),
        )
    };
    let (code, stderr, _) = run(None);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("not installed"), "{stderr}");
    assert!(
        exec(NAME, "h1", &["ping", "-c1", "-W2", "10.10.0.2"]),
        "the VLAN carries traffic"
    );
    let kernel_has_vlans = faultbench_emu::hostcaps::HostCaps::probe()
        .has(faultbench_emu::hostcaps::Feature::Vlan8021q);
    let (code, stderr, took) = run(Some("/nonexistent/faultbench-netshim"));
    if kernel_has_vlans {
        assert_eq!(code, Some(0), "nothing to emulate on this kernel: {stderr}");
    } else {
        assert_eq!(code, Some(2), "{stderr}");
        assert!(took < Duration::from_secs(10), "{took:?}");
        assert!(
            stderr.contains("vlan_8021q, used by h1 (h1.startup:2), h2 (h2.startup:2)")
                && stderr.contains("kernel emulations are not installed")
                && stderr.contains("nothing was deployed"),
            "{stderr}"
        );
    }
}

/// Two devices of one link with one address (census rows 16 and 23) were waited out until the
/// ready timeout; now `lab up` names the address and both holders as the lab's own problem,
/// exits 1, and accepts it with the flag.
#[test]
fn a_duplicate_address_on_a_link_is_named_as_the_labs_own_problem() {
    const NAME: &str = "honest-dup";
    let _d = Down(NAME);
    let l = lab(&[
        ("lab.conf", "h1[0]=A\nh2[0]=A\nh3[0]=B\nh4[0]=B\n"),
        ("h1.startup", "ip address add 10.0.0.1/24 dev eth0\n"),
        ("h2.startup", "ip address add 10.0.0.1/24 dev eth0\n"),
        // The same address on another link is not a duplicate of the first.
        ("h3.startup", "ip address add 10.0.0.1/24 dev eth0\n"),
        ("h4.startup", "ip address add 10.0.0.4/24 dev eth0\n"),
    ]);
    let (out, stderr) = up(l.path(), NAME, &[]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("lab configuration problems (1)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "h1: lab.conf: h1 eth0 has 10.0.0.1/24, and so does h2 eth0 (10.0.0.1/24) on the same collision domain A"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("h3 eth0"), "{stderr}");
    assert!(!stderr.contains("startup problems"), "{stderr}");
    let (out, stderr) = up(l.path(), NAME, &["--accept-startup-errors"]);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("lab configuration problems (1)"),
        "{stderr}"
    );
}
