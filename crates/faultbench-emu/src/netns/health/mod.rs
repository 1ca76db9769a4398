//! An honest deploy: what a device's files ask for that the running device does not have.
//!
//! After the startups ran and routing settled, each device is held against its own files:
//!
//! - **failed commands** — every command of the startup (and `shared.startup`) that failed,
//!   with its line, exit status and error message, recorded as it failed (see `trap`); a
//!   startup that exited non-zero without a recorded command says so. A command whose error
//!   output the file sends to /dev/null is one its author expects may fail, and is not listed;
//! - **missing addresses** — an address the startup or `etc/network/interfaces` gives the device
//!   (see `addresses`) that it does not have;
//! - **daemons not running** — a daemon the lab's `etc/frr/daemons` (or `etc/quagga/daemons`)
//!   enables whose vty socket does not answer, on a device whose startup starts FRR (see
//!   `daemons`);
//! - **duplicate addresses** — the same IPv4 address on two devices of one collision domain
//!   (see `duplicates`): not a broken promise but the lab's own mistake, named with both
//!   holders, so that the adjacency it prevents is not mistaken for a slow lab.
//!
//! Each is a [`StartupProblem`] naming the device, the file and line, and what went wrong; the
//! deploy still succeeds ([`NetnsLab::startup_problems`](super::NetnsLab::startup_problems)
//! lists them), and `faultbench lab up` lists them at the end and exits non-zero unless told to
//! accept them. The lab's files are read from the lab directory, never through a link (see
//! `labfile`).

mod addresses;
mod daemons;
mod duplicates;
mod labfile;
pub(crate) mod trap;

use super::ready::{DeviceSocket, device_addresses, vty_command};
use super::state::ProcId;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// A lab file's text, if it is a regular file reached from `root` without links.
pub(crate) fn read_lab_file(root: &Path, rel: &str) -> Option<String> {
    labfile::read(root, rel)
}

/// What kind of promise a device's files made that the running device does not keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// A startup command exited non-zero.
    FailedCommand,
    /// An address the files give the device is not on it.
    MissingAddress,
    /// A daemon the files enable is not running.
    DaemonNotRunning,
    /// The same IPv4 address on two devices of one collision domain (the lab's own mistake).
    DuplicateAddress,
}

/// One thing a device's startup left undone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartupProblem {
    /// The device.
    pub device: String,
    /// The file, relative to the lab directory (`r1.startup`, `r1/etc/frr/daemons`).
    pub file: String,
    /// Its line (0: the file as a whole).
    pub line: u32,
    /// What kind of problem.
    pub kind: ProblemKind,
    /// What went wrong, e.g. ``/etc/init.d/networking restart` exited 127: … No such file``.
    pub what: String,
}

impl std::fmt::Display for StartupProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}: {}", self.device, self.file, self.what)
        } else {
            write!(
                f,
                "{}: {}:{}: {}",
                self.device, self.file, self.line, self.what
            )
        }
    }
}

/// What the deploy knows of one device after its startup.
pub(crate) struct DeviceRun<'a> {
    pub name: &'a str,
    /// Host PID of its PID 1.
    pub pid: i32,
    /// Output of its outer startup script (the failure records).
    pub output: &'a str,
    /// The startup's exit status (`None`: killed).
    pub exit: Option<i32>,
    /// lab.conf `exec` lines (they may start FRR too).
    pub exec: &'a [String],
    /// Its PID 1, to run `ip` in it.
    pub init: ProcId,
    /// The environment commands run with in it.
    pub env: &'a [(String, String)],
    /// `ethN` → collision domain, from lab.conf.
    pub domains: &'a HashMap<String, String>,
}

/// Longest wait for a daemon's vty answer.
const VTY_TIMEOUT: Duration = Duration::from_secs(2);

/// Every device's problems, devices in the order given, then the addresses two devices of one
/// link hold.
pub(crate) async fn check(lab_root: &Path, devices: &[DeviceRun<'_>]) -> Vec<StartupProblem> {
    let per_device =
        futures_util::future::join_all(devices.iter().map(|d| device(lab_root, d))).await;
    let mut out: Vec<StartupProblem> = per_device.into_iter().flatten().collect();
    out.extend(duplicate_addresses(devices).await);
    out
}

/// The same IPv4 address on two devices of one collision domain (see `duplicates`).
async fn duplicate_addresses(devices: &[DeviceRun<'_>]) -> Vec<StartupProblem> {
    let argv: Vec<String> = ["ip", "-j", "-4", "addr", "show"]
        .iter()
        .map(ToString::to_string)
        .collect();
    let outputs = futures_util::future::join_all(devices.iter().map(|d| {
        let argv = &argv;
        async move {
            super::exec::run(d.init, argv, d.env, VTY_TIMEOUT, duplicates::IP_OUTPUT_CAP)
                .await
                .ok()
                .filter(|o| o.success() && !o.truncated)
                .map(|o| duplicates::parse_ip_json(&o.stdout))
                .unwrap_or_default()
        }
    }))
    .await;
    let holders: Vec<duplicates::Holder<'_>> = devices
        .iter()
        .zip(outputs)
        .map(|(d, addrs)| duplicates::Holder {
            device: d.name,
            domains: d.domains,
            addrs,
        })
        .collect();
    duplicates::find(&holders)
}

/// The lab-relative name of a file the device ran (`/hostlab/r1.startup` → `r1.startup`).
fn lab_file(path: &str) -> String {
    path.strip_prefix("/hostlab/").unwrap_or(path).to_string()
}

async fn device(lab_root: &Path, d: &DeviceRun<'_>) -> Vec<StartupProblem> {
    let mut failures: Vec<(trap::Failure, usize)> = Vec::new();
    for f in trap::parse(d.output)
        .into_iter()
        .filter(|f| !errors_discarded(&f.command))
    {
        // A command in a loop fails once per turn: one entry, counted.
        match failures
            .iter_mut()
            .find(|(g, _)| g.file == f.file && g.line == f.line && g.command == f.command)
        {
            Some((_, n)) => *n += 1,
            None => failures.push((f, 1)),
        }
    }
    let mut out: Vec<StartupProblem> = failures
        .into_iter()
        .map(|(f, times)| {
            let command = printable(&f.command);
            let what = match f.status {
                Some(s) => format!("`{command}` exited {s}"),
                None => format!("`{command}` failed"),
            };
            let what = if times > 1 {
                format!("{what} ({times} times)")
            } else {
                what
            };
            let what = if f.message.is_empty() {
                what
            } else {
                format!("{what}: {}", printable(&f.message))
            };
            StartupProblem {
                device: d.name.to_string(),
                file: lab_file(&f.file),
                line: f.line,
                kind: ProblemKind::FailedCommand,
                what,
            }
        })
        .collect();
    let startup_file = format!("{}.startup", d.name);
    // A startup that ended badly without a recorded command (`exit 3`, another shell, a
    // signal) says so as a whole.
    let ended = match d.exit {
        Some(0) => None,
        Some(code) => Some(format!("exited {code}")),
        None => Some("was killed by a signal".to_string()),
    };
    if let Some(ended) = ended
        && !out.iter().any(|p| p.file == startup_file)
    {
        out.push(StartupProblem {
            device: d.name.to_string(),
            file: startup_file.clone(),
            line: 0,
            kind: ProblemKind::FailedCommand,
            what: format!("{ended} (see /var/log/startup.log in the device)"),
        });
    }
    let startup = labfile::read(lab_root, &startup_file).unwrap_or_default();
    let mut promised = addresses::from_startup(d.name, &startup);
    if let Some(ifs) = labfile::read(lab_root, &format!("{}/etc/network/interfaces", d.name)) {
        promised.extend(addresses::from_interfaces(d.name, &startup, &ifs));
    }
    if !promised.is_empty() {
        let have = device_addresses(d.pid);
        for p in promised.iter().filter(|p| !have.contains(&p.addr)) {
            let iface = printable(&p.iface);
            let missing = format!("{} has no address {} on {iface}", d.name, p.addr);
            if let Some(cmd) = out
                .iter_mut()
                .find(|x| x.file == p.file && x.line == p.line)
            {
                cmd.what.push_str(&format!(" (so {missing})"));
            } else {
                out.push(StartupProblem {
                    device: d.name.to_string(),
                    file: p.file.clone(),
                    line: p.line,
                    kind: ProblemKind::MissingAddress,
                    what: format!(
                        "gives {iface} {}, but {missing} after its startup",
                        printable(&p.written)
                    ),
                });
            }
        }
    }
    let shared = labfile::read(lab_root, "shared.startup").unwrap_or_default();
    let starts = [startup.as_str(), shared.as_str()]
        .into_iter()
        .chain(d.exec.iter().map(String::as_str))
        .any(daemons::starts_routing);
    if starts {
        // Quagga-era trees name the folder `etc/zebra` (it becomes `etc/quagga` in the device,
        // and `etc/quagga`'s own file wins).
        let quagga = ["quagga", "zebra"]
            .into_iter()
            .map(|dir| format!("{}/etc/{dir}/daemons", d.name))
            .find_map(|f| labfile::read(lab_root, &f).map(|t| (f, t)));
        let frr = Some(format!("{}/etc/frr/daemons", d.name))
            .and_then(|f| labfile::read(lab_root, &f).map(|t| (f, t)));
        for (file, text) in frr.into_iter().chain(quagga) {
            for e in daemons::enabled(&file, &text) {
                if !running(d.pid, &e.daemon).await {
                    out.push(StartupProblem {
                        device: d.name.to_string(),
                        file: e.file,
                        line: e.line,
                        kind: ProblemKind::DaemonNotRunning,
                        what: format!(
                            "enables {}, but it is not running after the startup (its log: /var/log/frr/ in the device)",
                            e.daemon
                        ),
                    });
                }
            }
        }
    }
    out
}

/// Device output made safe for a terminal: control characters (escape sequences, carriage
/// returns) are shown escaped, as the lab wrote them, instead of acting on the user's terminal.
fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The file sends the command's error output to /dev/null: its author expects it may fail
/// (e.g. `bridge vlan del dev eth0 vid 1 2>/dev/null` on a port that has no VLAN 1).
fn errors_discarded(command: &str) -> bool {
    let c: String = command.split_whitespace().collect();
    c.contains("2>/dev/null")
        || c.contains("&>/dev/null")
        || c.contains(">&/dev/null")
        || (c.contains(">/dev/null") && c.contains("2>&1"))
        || c.contains("2>&-")
}

/// The daemon answers on its vty socket.
async fn running(pid: i32, daemon: &str) -> bool {
    match DeviceSocket::open(pid, daemon) {
        Ok(s) => vty_command(&s.path(), "show version", VTY_TIMEOUT)
            .await
            .is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_name_device_file_and_line() {
        let p = StartupProblem {
            device: "r1".into(),
            file: "r1.startup".into(),
            line: 3,
            kind: ProblemKind::FailedCommand,
            what: "`foo` exited 127: foo: command not found".into(),
        };
        assert_eq!(
            p.to_string(),
            "r1: r1.startup:3: `foo` exited 127: foo: command not found"
        );
        assert_eq!(lab_file("/hostlab/r1.startup"), "r1.startup");
        assert_eq!(printable("echo \u{1b}[2Jgone\r"), "echo \\u{1b}[2Jgone\\r");
        assert!(errors_discarded(
            "bridge vlan del dev $port vid 1 2> /dev/null"
        ));
        assert!(errors_discarded("ip link del x > /dev/null 2>&1"));
        assert!(!errors_discarded("ip link add x type dummy > /dev/null"));
        assert_eq!(lab_file("/shared/x.sh"), "/shared/x.sh");
    }
}
