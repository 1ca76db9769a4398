//! Docker's embedded DNS resolver, as a Kathará device shows it, on netns devices.
//!
//! Every Kathará device is a container on a user-defined Docker network, so Docker gives it its
//! embedded resolver: dockerd binds a UDP socket and a TCP listener on `127.0.0.11` (random
//! ports) *inside the container's network namespace*, and installs `nat` rules there that send
//! port 53 of `127.0.0.11` to them (and rewrite the replies' source port back to 53). An agent
//! sees the two sockets in `ss -lntu` with no owning process (dockerd is outside the container's
//! PID namespace) and the rules in `iptables-save -t nat` / `nft list ruleset`. Kathará then
//! unmounts Docker's `/etc/resolv.conf` and `/etc/hosts`, so the device shows its image's files
//! (an empty `resolv.conf`; the netns backend writes the same, see `emulator::build`).
//!
//! What the resolver answers on a Kathará lab: nothing. Kathará's networks carry no Docker
//! addresses, so no container name resolves, and every other name is forwarded — from inside the
//! device — to the host's resolvers, which a lab device cannot reach. Measured on Kathará 3.8.3
//! and Docker 20.10 (`dig @127.0.0.11 router2` inside router2): UDP queries get no reply (the
//! client times out); a TCP connection is accepted, gets no reply and is closed after 8 s idle.
//!
//! The emulation, per lab: one holder process ([`holder_main`], the `dnsd` applet of the
//! multi-call binary) started after the devices' namespaces exist. For each device it enters
//! the device's network namespace, binds the two sockets there, installs Docker's rules with
//! those ports (`iptables-restore --noflush` run in that namespace: the same rules, chains in
//! the same order as Docker's own `iptables` calls leave them), and returns to its own. It
//! then reads and drops every query, accepts TCP connections and closes them after 8 s idle,
//! and exits by itself when every device's PID 1 is gone (a socket would otherwise keep a
//! dead device's namespace alive). It runs in the host's PID namespace, so `ss -p` in a device
//! names no owner, as on Docker. Its identity is in the lab's `state.json` (`dns`), so
//! teardown and `gc` kill it with the devices.
//!
//! Not emulated: the forwarding itself. Docker sends an unresolved query to the host's
//! resolvers from inside the device, so with a route towards them (a default route) the query
//! leaves the device's interface and shows in a capture on the lab's links; the holder sends
//! nothing. `docs/parity.md` lists this.

use super::state::{INIT_MARK, ProcId};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The resolver's address inside every device (Docker's).
pub const RESOLVER_IP: &str = "127.0.0.11";
/// The multi-call applet that runs the holder.
pub const APPLET: &str = "dnsd";
/// Docker's resolver closes an idle TCP connection after this long (its DNS server library's
/// default idle timeout; measured: 8.0 s).
const TCP_IDLE: Duration = Duration::from_secs(8);
/// At most this many open TCP connections per device; more are accepted and closed at once.
const MAX_CONNS_PER_DEVICE: usize = 32;
/// How long deploy waits for the holder to report its sockets.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// Docker's `nat` rules for a resolver listening on `udp_port` and `tcp_port`, as
/// `iptables-restore --noflush` input. The chain declarations are interleaved with the jumps
/// so that nftables lists the chains in the order Docker's own calls create them
/// (`DOCKER_OUTPUT`, `OUTPUT`, `DOCKER_POSTROUTING`, `POSTROUTING`); the TCP rules come first
/// because Docker inserts (`-I`) the UDP ones, then the TCP ones, at the top.
pub fn nat_rules(udp_port: u16, tcp_port: u16) -> String {
    let ip = RESOLVER_IP;
    format!(
        "*nat\n\
         :DOCKER_OUTPUT - [0:0]\n\
         -A OUTPUT -d {ip}/32 -j DOCKER_OUTPUT\n\
         :DOCKER_POSTROUTING - [0:0]\n\
         -A POSTROUTING -d {ip}/32 -j DOCKER_POSTROUTING\n\
         -A DOCKER_OUTPUT -d {ip}/32 -p tcp -m tcp --dport 53 -j DNAT --to-destination {ip}:{tcp_port}\n\
         -A DOCKER_OUTPUT -d {ip}/32 -p udp -m udp --dport 53 -j DNAT --to-destination {ip}:{udp_port}\n\
         -A DOCKER_POSTROUTING -s {ip}/32 -p tcp -m tcp --sport {tcp_port} -j SNAT --to-source :53\n\
         -A DOCKER_POSTROUTING -s {ip}/32 -p udp -m udp --sport {udp_port} -j SNAT --to-source :53\n\
         COMMIT\n"
    )
}

/// One device as the holder is told about it: `NAME=PID:START`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceArg {
    /// Device name (for the report).
    pub name: String,
    /// Its PID 1, identified beyond PID reuse.
    pub init: ProcId,
}

impl DeviceArg {
    /// The command-line form.
    pub fn render(&self) -> String {
        format!("{}={}:{}", self.name, self.init.pid, self.init.start)
    }

    /// Reads the command-line form; `None` for anything else.
    pub fn parse(s: &str) -> Option<DeviceArg> {
        let (name, rest) = s.split_once('=')?;
        let (pid, start) = rest.split_once(':')?;
        let ok_name = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
        let pid: i32 = pid.parse().ok()?;
        (ok_name && pid > 1).then_some(DeviceArg {
            name: name.to_string(),
            init: ProcId {
                pid,
                start: start.parse().ok()?,
            },
        })
    }
}

/// What the holder reported for one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// Device name.
    pub device: String,
    /// Port of the UDP socket on [`RESOLVER_IP`].
    pub udp: u16,
    /// Port of the TCP listener on [`RESOLVER_IP`].
    pub tcp: u16,
}

/// The former name of [`HolderReport`] (one public name per concept across the crates:
/// faultbench-report's `Report` is the benchmark report; issue 28).
#[deprecated(note = "renamed to `HolderReport`; the old name goes in the next release")]
pub type Report = HolderReport;

/// The holder's report on stdout: `dev NAME UDP TCP` per device, `warn TEXT` lines, `ready`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HolderReport {
    /// Devices whose sockets are bound.
    pub bound: Vec<Bound>,
    /// Problems (a device whose rules could not be installed, …), one line each.
    pub warnings: Vec<String>,
    /// The final `ready` line was read.
    pub ready: bool,
}

impl HolderReport {
    /// Adds one line of the holder's output.
    pub fn push_line(&mut self, line: &str) {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["dev", name, udp, tcp] => match (udp.parse(), tcp.parse()) {
                (Ok(udp), Ok(tcp)) => self.bound.push(Bound {
                    device: name.to_string(),
                    udp,
                    tcp,
                }),
                _ => self
                    .warnings
                    .push(format!("unreadable holder line `{line}`")),
            },
            ["ready"] => self.ready = true,
            ["warn", ..] => self
                .warnings
                .push(line.trim_start_matches("warn").trim().to_string()),
            [] => {}
            _ => self
                .warnings
                .push(format!("unreadable holder line `{line}`")),
        }
    }
}

/// A running holder, as deploy sees it.
pub(crate) struct Holder {
    /// Its identity (for `state.json`).
    pub id: ProcId,
    /// What it reported.
    pub report: HolderReport,
}

/// Starts the holder of lab `lab` for `devices` and waits (bounded) for its report. The
/// holder's stderr goes to `log`. On any failure the holder is killed and the error returned.
pub(crate) fn start_holder(lab: &str, devices: &[DeviceArg], log: &Path) -> Result<Holder, String> {
    let bin = crate::shims::locate_binary().map_err(|e| e.to_string())?;
    let stderr = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut cmd = std::process::Command::new(&bin);
    cmd.arg(APPLET)
        .args(devices.iter().map(DeviceArg::render))
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env(INIT_MARK, format!("{lab}/(dns)"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    // Its own process group: a Ctrl-C at the terminal goes to faultbench, whose teardown
    // kills the holder; the holder never dies half-way through a report.
    cmd.process_group(0);
    if bin
        .file_name()
        .is_some_and(|n| n != crate::shims::SHIM_BINARY)
    {
        // The running executable carries the shims (the `faultbench` CLI).
        cmd.arg0(crate::shims::SHIM_BINARY);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let id = ProcId::of(child.id() as i32).unwrap_or(ProcId {
        pid: child.id() as i32,
        start: 0,
    });
    match read_report(&mut child) {
        Ok(report) if report.ready => Ok(Holder { id, report }),
        Ok(report) => {
            kill(&mut child);
            Err(format!(
                "the DNS holder ended without reporting ready ({}; see {})",
                report.warnings.join("; "),
                log.display()
            ))
        }
        Err(e) => {
            kill(&mut child);
            Err(e)
        }
    }
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads the holder's stdout until `ready` or end of file, within [`READY_TIMEOUT`].
fn read_report(child: &mut Child) -> Result<HolderReport, String> {
    let out = child.stdout.take().ok_or("the DNS holder has no stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut report = HolderReport::default();
        for line in BufReader::new(out.take(1 << 20)).lines() {
            let Ok(line) = line else { break };
            report.push_line(&line);
            if report.ready {
                break;
            }
        }
        let _ = tx.send(report);
    });
    rx.recv_timeout(READY_TIMEOUT).map_err(|_| {
        format!(
            "the DNS holder did not report within {} s",
            READY_TIMEOUT.as_secs()
        )
    })
}

/// One device's sockets in the holder.
struct DeviceSockets {
    name: String,
    init: ProcId,
    udp: UdpSocket,
    tcp: TcpListener,
    conns: Vec<(TcpStream, Instant)>,
}

/// Entry point of the `dnsd` applet: `dnsd NAME=PID:START…`. Binds, installs the rules,
/// reports on stdout, then serves until every device is gone. Returns the exit code.
pub fn holder_main(args: &[String]) -> i32 {
    let devices: Vec<DeviceArg> = match args.iter().map(|a| DeviceArg::parse(a)).collect() {
        Some(d) => d,
        None => {
            eprintln!("usage: {APPLET} NAME=PID:START…");
            return 2;
        }
    };
    let own = match std::fs::File::open("/proc/self/ns/net") {
        Ok(f) => OwnedFd::from(f),
        Err(e) => {
            eprintln!("{APPLET}: /proc/self/ns/net: {e}");
            return 1;
        }
    };
    let somaxconn: i32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4096);
    let mut held: Vec<DeviceSockets> = Vec::new();
    let mut rules: Vec<(String, Child)> = Vec::new();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for d in &devices {
        match bind_in(d, &own, somaxconn) {
            Ok((s, child)) => {
                let _ = writeln!(
                    out,
                    "dev {} {} {}",
                    d.name,
                    port(s.udp.local_addr()),
                    port(s.tcp.local_addr())
                );
                rules.push((d.name.clone(), child));
                held.push(s);
            }
            Err(e) => {
                let _ = writeln!(out, "warn {}: {e}", d.name);
            }
        }
    }
    for (name, child) in rules {
        match child.wait_with_output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                let _ = writeln!(
                    out,
                    "warn {name}: iptables-restore failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
            }
            Err(e) => {
                let _ = writeln!(out, "warn {name}: iptables-restore: {e}");
            }
        }
    }
    let _ = writeln!(out, "ready");
    let _ = out.flush();
    drop(out);
    // Nobody reads stdout any more: point it at /dev/null so a late write cannot block.
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        // SAFETY: dup2(2) onto our own stdout descriptor.
        unsafe { libc::dup2(null.as_raw_fd(), 1) };
    }
    serve(held);
    0
}

fn port(a: std::io::Result<std::net::SocketAddr>) -> u16 {
    a.map(|a| a.port()).unwrap_or(0)
}

/// Binds the two sockets in `d`'s network namespace and starts `iptables-restore` there, then
/// returns to the namespace `own`.
fn bind_in(d: &DeviceArg, own: &OwnedFd, somaxconn: i32) -> Result<(DeviceSockets, Child), String> {
    if !d.init.alive() {
        return Err(format!("PID {} is not the device's PID 1", d.init.pid));
    }
    let ns = std::fs::File::open(format!("/proc/{}/ns/net", d.init.pid))
        .map_err(|e| format!("its network namespace: {e}"))?;
    // SAFETY: setns(2) on a namespace descriptor we opened; this process is single-threaded.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(format!(
            "entering its network namespace: {}",
            std::io::Error::last_os_error()
        ));
    }
    let r = bind_here(d, somaxconn);
    // SAFETY: as above, back to the namespace we started in.
    if unsafe { libc::setns(own.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        eprintln!(
            "{APPLET}: cannot return to its own network namespace: {}",
            std::io::Error::last_os_error()
        );
        std::process::exit(1);
    }
    r
}

fn bind_here(d: &DeviceArg, somaxconn: i32) -> Result<(DeviceSockets, Child), String> {
    let udp = UdpSocket::bind((RESOLVER_IP, 0)).map_err(|e| format!("binding UDP: {e}"))?;
    let tcp = TcpListener::bind((RESOLVER_IP, 0)).map_err(|e| format!("binding TCP: {e}"))?;
    // The backlog Docker's Go runtime asks for (the host's somaxconn): `ss` shows it.
    // SAFETY: listen(2) again on our listening socket only changes its backlog.
    unsafe { libc::listen(tcp.as_raw_fd(), somaxconn) };
    udp.set_nonblocking(true).map_err(|e| e.to_string())?;
    tcp.set_nonblocking(true).map_err(|e| e.to_string())?;
    let rules = nat_rules(port(udp.local_addr()), port(tcp.local_addr()));
    let mut child = std::process::Command::new("iptables-restore")
        .arg("--noflush")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("iptables-restore: {e}"))?;
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(rules.as_bytes());
    }
    Ok((
        DeviceSockets {
            name: d.name.clone(),
            init: d.init,
            udp,
            tcp,
            conns: Vec::new(),
        },
        child,
    ))
}

/// Reads and drops queries, holds TCP connections until 8 s idle, and returns when every
/// device is gone.
fn serve(mut held: Vec<DeviceSockets>) {
    let mut buf = vec![0u8; 65536];
    let mut last_check = Instant::now();
    while !held.is_empty() {
        let mut fds: Vec<libc::pollfd> = Vec::new();
        let mut owner: HashMap<usize, (usize, Option<usize>)> = HashMap::new();
        for (i, d) in held.iter().enumerate() {
            owner.insert(fds.len(), (i, None));
            fds.push(pollin(d.udp.as_raw_fd()));
            owner.insert(fds.len(), (i, Some(usize::MAX)));
            fds.push(pollin(d.tcp.as_raw_fd()));
            for (k, (c, _)) in d.conns.iter().enumerate() {
                owner.insert(fds.len(), (i, Some(k)));
                fds.push(pollin(c.as_raw_fd()));
            }
        }
        // SAFETY: poll(2) on a vector of pollfd we own, with its length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1000) };
        if n > 0 {
            let mut closed: Vec<(usize, usize)> = Vec::new();
            for (slot, f) in fds.iter().enumerate() {
                if f.revents == 0 {
                    continue;
                }
                let Some(&(i, what)) = owner.get(&slot) else {
                    continue;
                };
                let d = &mut held[i];
                match what {
                    None => while d.udp.recv_from(&mut buf).is_ok() {},
                    Some(usize::MAX) => {
                        while let Ok((c, _)) = d.tcp.accept() {
                            if d.conns.len() < MAX_CONNS_PER_DEVICE
                                && c.set_nonblocking(true).is_ok()
                            {
                                d.conns.push((c, Instant::now()));
                            }
                        }
                    }
                    Some(k) => {
                        let (c, seen) = &mut d.conns[k];
                        match c.read(&mut buf) {
                            Ok(0) => closed.push((i, k)),
                            Ok(_) => *seen = Instant::now(),
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                            Err(_) => closed.push((i, k)),
                        }
                    }
                }
            }
            // Highest index first, so the others keep their places.
            closed.sort_unstable_by(|a, b| b.cmp(a));
            for (i, k) in closed {
                held[i].conns.swap_remove(k);
            }
        }
        for d in &mut held {
            d.conns.retain(|(_, seen)| seen.elapsed() < TCP_IDLE);
        }
        if last_check.elapsed() >= Duration::from_millis(500) || n == 0 {
            last_check = Instant::now();
            held.retain(|d| {
                let alive = d.init.alive();
                if !alive {
                    eprintln!("{APPLET}: {} is gone; its sockets are closed", d.name);
                }
                alive
            });
        }
    }
}

fn pollin(fd: i32) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_are_dockers_for_the_given_ports() {
        let r = nat_rules(44453, 34721);
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines.first(), Some(&"*nat"));
        assert_eq!(lines.last(), Some(&"COMMIT"));
        // The 6 rules iptables-save shows in a Kathará device (measured), in its order.
        let rules: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| l.starts_with("-A"))
            .collect();
        assert_eq!(
            rules,
            [
                "-A OUTPUT -d 127.0.0.11/32 -j DOCKER_OUTPUT",
                "-A POSTROUTING -d 127.0.0.11/32 -j DOCKER_POSTROUTING",
                "-A DOCKER_OUTPUT -d 127.0.0.11/32 -p tcp -m tcp --dport 53 -j DNAT --to-destination 127.0.0.11:34721",
                "-A DOCKER_OUTPUT -d 127.0.0.11/32 -p udp -m udp --dport 53 -j DNAT --to-destination 127.0.0.11:44453",
                "-A DOCKER_POSTROUTING -s 127.0.0.11/32 -p tcp -m tcp --sport 34721 -j SNAT --to-source :53",
                "-A DOCKER_POSTROUTING -s 127.0.0.11/32 -p udp -m udp --sport 44453 -j SNAT --to-source :53",
            ]
        );
        // Each chain is declared before its first jump, so nft lists them in Docker's order.
        let pos = |s: &str| lines.iter().position(|l| l.starts_with(s)).unwrap();
        assert!(pos(":DOCKER_OUTPUT") < pos("-A OUTPUT"));
        assert!(pos("-A OUTPUT") < pos(":DOCKER_POSTROUTING"));
        assert!(pos(":DOCKER_POSTROUTING") < pos("-A POSTROUTING"));
    }

    #[test]
    fn device_arguments_round_trip_and_bad_ones_are_refused() {
        let d = DeviceArg {
            name: "router_1".into(),
            init: ProcId {
                pid: 4242,
                start: 99,
            },
        };
        assert_eq!(d.render(), "router_1=4242:99");
        assert_eq!(DeviceArg::parse(&d.render()), Some(d));
        for bad in [
            "r1",
            "r1=12",
            "=12:3",
            "r1=1:3",
            "r1=x:3",
            "r1=12:y",
            "r 1=12:3",
            "../r=12:3",
        ] {
            assert_eq!(DeviceArg::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_report_is_read_line_by_line() {
        let mut r = HolderReport::default();
        for l in [
            "dev router1 44453 34721",
            "warn pc1: iptables-restore failed: boom",
            "dev pc2 x 1",
            "ready",
        ] {
            r.push_line(l);
        }
        assert!(r.ready);
        assert_eq!(
            r.bound,
            [Bound {
                device: "router1".into(),
                udp: 44453,
                tcp: 34721
            }]
        );
        assert_eq!(r.warnings.len(), 2);
        assert_eq!(r.warnings[0], "pc1: iptables-restore failed: boom");
    }

    #[test]
    fn the_holder_refuses_bad_arguments() {
        assert_eq!(holder_main(&["nonsense".to_string()]), 2);
    }
}
