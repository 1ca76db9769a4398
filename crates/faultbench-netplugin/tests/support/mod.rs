//! A plugin process in a scratch network namespace, driven over its unix socket as Docker does.
//! The host's own links and firewall are never touched: bridges, veths and `FORWARD` rules are
//! made inside the namespace, which is deleted with the fixture.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

static COUNTER: AtomicU32 = AtomicU32::new(0);

pub struct Scratch {
    pub ns: String,
    dir: tempfile::TempDir,
    child: Option<Child>,
    extra: Vec<String>,
}

fn ip(args: &[&str]) -> std::process::Output {
    Command::new("ip")
        .args(args)
        .output()
        .expect("run ip (iproute2)")
}

impl Scratch {
    pub fn new() -> Self {
        Self::with_args(&[])
    }

    /// A plugin started with extra arguments (e.g. another `--iptables`).
    pub fn with_args(extra: &[&str]) -> Self {
        assert!(
            // SAFETY: geteuid has no preconditions.
            unsafe { libc::geteuid() } == 0,
            "the plugin's protocol tests make bridges and veths in a scratch network namespace: run them as root"
        );
        let ns = format!(
            "fbnp-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        let out = ip(&["netns", "add", &ns]);
        assert!(
            out.status.success(),
            "ip netns add {ns}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut s = Self {
            ns,
            dir: tempfile::tempdir().unwrap(),
            child: None,
            extra: extra.iter().map(|s| (*s).to_owned()).collect(),
        };
        s.start();
        s
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("katharanp.sock")
    }

    pub fn state_file(&self) -> PathBuf {
        self.dir.path().join("state").join("state.json")
    }

    /// Starts the plugin (again) in the namespace and waits for its socket.
    pub fn start(&mut self) {
        let _ = std::fs::remove_file(self.socket());
        let child = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.ns,
                env!("CARGO_BIN_EXE_faultbench-netplugin"),
            ])
            .arg("--socket")
            .arg(self.socket())
            .arg("--state")
            .arg(self.state_file())
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the plugin");
        self.child = Some(child);
        let t0 = Instant::now();
        while UnixStream::connect(self.socket()).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "the plugin did not open {} within 10 s",
                self.socket().display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the plugin process (as a crash or `docker plugin disable` would).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// One protocol call: HTTP status and JSON answer.
    pub fn call(&self, method: &str, body: &Value) -> (u16, Value) {
        let mut s = UnixStream::connect(self.socket()).expect("connect to the plugin");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let body = body.to_string();
        write!(
            s,
            "POST /{method} HTTP/1.1\r\nHost: plugin\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut raw = String::new();
        s.read_to_string(&mut raw).unwrap();
        let (head, json) = raw.split_once("\r\n\r\n").expect("an HTTP answer");
        let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, serde_json::from_str(json).expect("a JSON body"))
    }

    /// `ip -d -j link show NAME` in the namespace, or None when there is no such link.
    pub fn link(&self, name: &str) -> Option<Value> {
        let out = ip(&["-n", &self.ns, "-d", "-j", "link", "show", name]);
        if !out.status.success() {
            return None;
        }
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_array().and_then(|a| a.first()).cloned()
    }

    /// The namespace's `FORWARD` chain, as `iptables -S FORWARD` prints it.
    pub fn forward_rules(&self) -> String {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.ns, "iptables", "-S", "FORWARD"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Deletes a link behind the plugin's back (what a reboot does to its bridges).
    pub fn delete_link(&self, name: &str) {
        let out = ip(&["-n", &self.ns, "link", "del", name]);
        assert!(out.status.success());
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.kill();
        let _ = ip(&["netns", "del", &self.ns]);
    }
}

pub const NET: &str = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9";
pub const EP1: &str = "e1e1e1e1e1e1f0f0f0f0f0f0a1a2a3a4a5a6a7a8a9aaabacadaeaf0001020304";
pub const EP2: &str = "e2e2e2e2e2e2f0f0f0f0f0f0a1a2a3a4a5a6a7a8a9aaabacadaeaf0001020304";
