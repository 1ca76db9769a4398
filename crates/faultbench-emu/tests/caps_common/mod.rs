//! Small real networks for the kernel-capability tests: each device is a network namespace
//! plus its own mount and PID namespace (like the netns emulator's devices), with the shims
//! directory bind-mounted read-only at /usr/local/sbin, a private /run and /tmp, and commands
//! run with `PATH=/usr/local/sbin:…`. Everything is torn down on drop (also on panic).
#![allow(dead_code)]

use faultbench_emu::hostcaps::HostCaps;
use faultbench_emu::shims;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

/// A device: netns + long-lived PID 1 holding its mount/PID namespaces.
struct Device {
    name: String,
    netns: String,
    init: Child,
    pid1: u32,
}

/// A throw-away lab.
pub struct Net {
    prefix: String,
    shims: PathBuf,
    devices: Vec<Device>,
}

/// Result of a ping run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ping {
    pub sent: u32,
    pub received: u32,
    pub dup: bool,
}

impl Ping {
    pub fn loss(&self) -> f64 {
        if self.sent == 0 {
            return 1.0;
        }
        1.0 - f64::from(self.received) / f64::from(self.sent)
    }
}

impl Net {
    /// A lab whose devices see the shims for this host's probed capabilities.
    pub fn new(tag: &str) -> Net {
        assert_eq!(
            // SAFETY: geteuid has no preconditions.
            unsafe { libc::geteuid() },
            0,
            "capability tests need root (they run as root here and in CI): run them as root, e.g. `sudo ./scripts/test.sh`"
        );
        static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let prefix = format!("h2{tag}{}x{seq}", std::process::id() % 100000);
        let shims_dir = std::env::temp_dir().join(format!("fb-shims-{prefix}"));
        shims::install_with_binary(
            &shims_dir,
            &HostCaps::probe(),
            std::path::Path::new(env!("CARGO_BIN_EXE_faultbench-netshim")),
        )
        .expect("install shims");
        Net {
            prefix,
            shims: shims_dir,
            devices: Vec::new(),
        }
    }

    pub fn add(&mut self, name: &str) {
        let netns = format!("{}-{name}", self.prefix);
        run_ok(&["ip", "netns", "add", &netns]);
        run_ok(&["ip", "-n", &netns, "link", "set", "lo", "up"]);
        let script = format!(
            "mount --bind -o ro {} /usr/local/sbin && mount -t tmpfs tmpfs /run && \
             mount -t tmpfs tmpfs /tmp && hostname {name} && echo ready && \
             exec perl -e '$SIG{{TERM}} = sub {{ exit 0 }}; while (1) {{ sleep 1 if wait() == -1 }}'",
            self.shims.display()
        );
        let mut init = Command::new("ip")
            .args([
                "netns",
                "exec",
                &netns,
                "unshare",
                "--pid",
                "--fork",
                "--kill-child",
            ])
            .args([
                "--mount",
                "--propagation",
                "private",
                "--mount-proc",
                "--uts",
            ])
            .args(["sh", "-c", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn device init");
        let mut line = String::new();
        BufReader::new(init.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "device {name} failed to start");
        let children =
            std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", init.id())).unwrap();
        let pid1: u32 = children.split_whitespace().next().unwrap().parse().unwrap();
        self.devices.push(Device {
            name: name.to_string(),
            netns,
            init,
            pid1,
        });
    }

    fn dev(&self, name: &str) -> &Device {
        self.devices
            .iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("no device {name}"))
    }

    pub fn netns(&self, name: &str) -> String {
        self.dev(name).netns.clone()
    }

    /// A veth between `a:ai` and `b:bi`, both up.
    pub fn link(&self, a: &str, ai: &str, b: &str, bi: &str) {
        let (na, nb) = (self.netns(a), self.netns(b));
        run_ok(&[
            "ip", "link", "add", ai, "netns", &na, "type", "veth", "peer", "name", bi, "netns", &nb,
        ]);
        run_ok(&["ip", "-n", &na, "link", "set", ai, "up"]);
        run_ok(&["ip", "-n", &nb, "link", "set", bi, "up"]);
    }

    /// Run a shell script inside a device (PATH starts with the shims).
    pub fn sh(&self, dev: &str, script: &str) -> Output {
        let d = self.dev(dev);
        Command::new("nsenter")
            .args(["-t", &d.pid1.to_string(), "-n", "-m", "-p", "-u", "--"])
            .args([
                "env",
                "-i",
                &format!("PATH={}", shims::DEVICE_PATH),
                "sh",
                "-c",
                script,
            ])
            .stdin(Stdio::null())
            .output()
            .expect("nsenter")
    }

    /// Run a script that must succeed; returns stdout.
    pub fn ok(&self, dev: &str, script: &str) -> String {
        let o = self.sh(dev, script);
        assert!(
            o.status.success(),
            "on {dev}: `{script}` failed ({:?}):\nstdout: {}\nstderr: {}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    pub fn ping(&self, dev: &str, dst: &str, count: u32, interval: &str) -> Ping {
        let o = self.sh(dev, &format!("ping -n -c {count} -i {interval} -W 1 {dst}"));
        parse_ping(&String::from_utf8_lossy(&o.stdout))
    }

    /// Processes in a device (to check daemons come and go).
    pub fn processes(&self, dev: &str) -> String {
        self.ok(dev, "ps -eo pid,args")
    }
}

pub fn parse_ping(text: &str) -> Ping {
    let mut p = Ping {
        sent: 0,
        received: 0,
        dup: text.contains("DUP!"),
    };
    for line in text.lines() {
        if let Some(idx) = line.find(" packets transmitted, ") {
            p.sent = line[..idx].trim().parse().unwrap_or(0);
            let rest = &line[idx + " packets transmitted, ".len()..];
            p.received = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
        }
    }
    p
}

impl Drop for Net {
    fn drop(&mut self) {
        for d in &mut self.devices {
            // Killing unshare kills PID 1 (--kill-child); the PID namespace, daemons included,
            // dies with it.
            let _ = d.init.kill();
            let _ = d.init.wait();
        }
        for d in &self.devices {
            for _ in 0..100 {
                let pids = Command::new("ip")
                    .args(["netns", "pids", &d.netns])
                    .output();
                if pids.map(|o| o.stdout.is_empty()).unwrap_or(true) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let _ = Command::new("ip").args(["netns", "del", &d.netns]).status();
        }
        let _ = std::fs::remove_dir_all(&self.shims);
    }
}

pub fn run_ok(args: &[&str]) {
    let o = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
