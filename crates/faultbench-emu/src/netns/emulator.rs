//! Deploying a lab: files, namespaces, links, startups, readiness.

use super::exec;
use super::health::{self, trap};
use super::init::{self, Plan, Spawned};
use super::lab::{NetnsLab, destroy};
use super::layout::{self, DeviceFs, DeviceNet};
use super::prepare::{self, InstanceDirs};
use super::ready::{self, Readiness, Watched};
use super::reaper::Reaper;
use super::seccomp;
use super::state::{self, INIT_MARK, LabState, NodeState, Phase, ProcId, SETUP_ROOT};
use super::topo::{BRIDGE, Node, Topology};
use faultbench_core::emulator::{EmuError, Emulator, Lab, LabRequest, LinkModel};
use faultbench_core::lab::LabDir;
use std::collections::HashMap;
use std::ffi::CString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `PATH` of every command run in a device: the lab's shims first.
pub const DEVICE_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The Linux-namespaces backend. Needs root and the packages `faultbench doctor` lists.
///
/// ```
/// use faultbench_core::emulator::{Command, Emulator, Lab, LabRequest};
/// use faultbench_emu::netns::NetnsEmulator;
/// use std::time::Duration;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// // Two hosts on one link, configured by their startup files.
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("lab.conf"), "a[0]=LINK\nb[0]=LINK\n").unwrap();
/// std::fs::write(dir.path().join("a.startup"), "ip addr add 10.9.0.1/24 dev eth0\n").unwrap();
/// std::fs::write(dir.path().join("b.startup"), "ip addr add 10.9.0.2/24 dev eth0\n").unwrap();
///
/// let lab = NetnsEmulator::new().deploy(&LabRequest::new(dir.path())).await.unwrap();
/// let out = lab
///     .exec("a", &Command::shell("hostname; ping -c1 -W1 10.9.0.2 >/dev/null && echo reached"), Duration::from_secs(5))
///     .await
///     .unwrap();
/// assert_eq!(out.stdout, "a\nreached\n");
/// lab.teardown().await.unwrap();
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct NetnsEmulator {
    settle_cap: Duration,
    settle_quiet: Duration,
    startup_timeout: Duration,
    output_cap: usize,
    link_model: LinkModel,
    /// Background removals of the labs it deploys, once [`Emulator::defer_teardowns`] was
    /// called (shared by clones).
    reaper: Arc<Reaper>,
}

impl Default for NetnsEmulator {
    fn default() -> Self {
        NetnsEmulator {
            settle_cap: Duration::from_secs(60),
            settle_quiet: Duration::from_millis(200),
            startup_timeout: Duration::from_secs(120),
            output_cap: exec::DEFAULT_OUTPUT_CAP,
            link_model: LinkModel::Switch,
            reaper: Arc::default(),
        }
    }
}

impl NetnsEmulator {
    /// Defaults: routing settle cap 60 s, startup timeout 120 s, 1 MiB output cap per stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Longest wait for routing to settle after the startups (the lab is returned anyway, with
    /// [`NetnsLab::readiness`] saying what did not settle).
    pub fn settle_cap(mut self, cap: Duration) -> Self {
        self.settle_cap = cap;
        self
    }

    /// How collision domains are wired: [`LinkModel::Switch`] (the default, Kathará's: a
    /// bridge per domain, so a device setting its interface down leaves the other members'
    /// carrier up) or [`LinkModel::Veth`] (two-member domains as veth pairs, where the far
    /// end loses carrier too).
    pub fn link_model(mut self, model: LinkModel) -> Self {
        self.link_model = model;
        self
    }

    /// Shortest time routes must stay unchanged to count as settled (default 200 ms).
    pub fn settle_quiet(mut self, quiet: Duration) -> Self {
        self.settle_quiet = quiet;
        self
    }

    /// Longest time a device's startup file may run.
    pub fn startup_timeout(mut self, t: Duration) -> Self {
        self.startup_timeout = t;
        self
    }

    /// Output cap per stream for [`Lab::exec`](faultbench_core::Lab::exec).
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes;
        self
    }

    /// Deploys and returns the concrete lab type (for [`NetnsLab::detach`] and friends).
    pub async fn deploy_lab(&self, request: &LabRequest) -> Result<NetnsLab, EmuError> {
        timing("start");
        preflight()?;
        let lab = LabDir::load(&request.dir).map_err(|e| EmuError::InvalidLab(e.to_string()))?;
        let topo = Topology::plan(&lab, self.link_model)?;
        // What the host cannot give this lab is named now, before anything exists.
        let caps = tokio::task::spawn_blocking(prepare::host_caps)
            .await
            .map_err(|e| EmuError::Environment(format!("probing the kernel failed: {e}")))?;
        let shims = if crate::shims::wrappers_needed(&caps).is_empty() {
            Ok(())
        } else {
            crate::shims::locate_binary()
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        super::needs::check(&lab, &caps, &shims)?;
        timing("lab needs");
        // Leftovers of killed deploys must not pile up (and cannot collide: names are unique).
        let _ = tokio::task::spawn_blocking(super::gc::collect_instances).await;
        timing("gc");
        let name = match &request.name {
            Some(n) => {
                state::check_name(n).map_err(|e| EmuError::InvalidLab(e.to_string()))?;
                n.clone()
            }
            None => generate_name(&lab.name()),
        };
        let folder = LabState::folder(&name);
        std::fs::create_dir_all(state::LABS_DIR).map_err(|e| {
            EmuError::Environment(format!("cannot create {}: {e}", state::LABS_DIR))
        })?;
        match std::fs::create_dir(&folder) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(EmuError::Other(format!(
                    "a lab named `{name}` is already running (stop it with `faultbench lab down {name}`)"
                )));
            }
            Err(e) => {
                return Err(EmuError::Environment(format!(
                    "cannot create {}: {e}",
                    folder.display()
                )));
            }
        }
        let dir = std::fs::canonicalize(&lab.root).unwrap_or_else(|_| lab.root.clone());
        let st = LabState {
            name: name.clone(),
            dir,
            lab_name: lab.name(),
            created_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            owner: Some(ProcId::current()),
            phase: Phase::Deploying,
            devices: topo
                .devices
                .iter()
                .map(|d| {
                    let mut env = vec![
                        ("PATH".to_string(), DEVICE_PATH.to_string()),
                        ("HOME".to_string(), "/root".to_string()),
                        ("HOSTNAME".to_string(), d.name.clone()),
                    ];
                    env.extend(d.env.iter().cloned());
                    NodeState {
                        name: d.name.clone(),
                        init: None,
                        env,
                        shell: d.shell.clone(),
                    }
                })
                .collect(),
            switches: topo
                .switches
                .iter()
                .map(|s| NodeState {
                    name: s.name(),
                    init: None,
                    env: Vec::new(),
                    shell: String::new(),
                })
                .collect(),
            // Kathará wires every domain as a bridge: veth pairs deviate from it.
            deviations: match self.link_model {
                LinkModel::Switch => Vec::new(),
                LinkModel::Veth => vec![
                    "link model veth: two-member collision domains are veth pairs (on Kathará, bridges: a shut port leaves the far end's carrier up)".to_string(),
                ],
            },
            link_model: Some(self.link_model),
            dns: None,
        };
        let guard = DeployGuard(Some(st));
        guard
            .state()
            .save()
            .map_err(|e| incomplete(&name, format!("cannot save state: {e}")))?;
        let lab_root = lab.root.clone();
        let topo2 = topo.clone();
        // Namespaces and links are built with blocking system calls on a blocking thread. If
        // this future is dropped meanwhile, the guard travels back with the result and cleans up.
        let (mut guard, warnings) = tokio::task::spawn_blocking(move || {
            let mut guard = guard;
            let r = build(&lab_root, &topo2, &mut guard);
            (guard, r)
        })
        .await
        .map_err(|e| incomplete(&name, format!("setup thread failed: {e}")))
        .and_then(|(g, r)| r.map(|w| (g, w)))?;
        let st = guard.state().clone();
        // What lab.conf says that Kathará ignores comes first, naming its line.
        let warnings: Vec<String> = lab
            .conf
            .warnings()
            .iter()
            .map(ToString::to_string)
            .chain(topo.warnings.iter().cloned())
            .chain(warnings)
            .collect();
        timing("namespaces and links");
        let startups = run_startups(&lab, &topo, &st, self.startup_timeout).await?;
        // Each device's `ethN` → collision domain, from lab.conf.
        let domains: HashMap<String, HashMap<String, String>> = st
            .devices
            .iter()
            .map(|d| {
                let m = lab
                    .conf
                    .device(&d.name)
                    .map(|c| {
                        c.interfaces
                            .iter()
                            .map(|i| (i.name(), i.domain.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                (d.name.clone(), m)
            })
            .collect();
        let no_domains = HashMap::new();
        let watched: Vec<Watched> = st
            .devices
            .iter()
            .filter_map(|d| {
                let m = domains.get(&d.name).unwrap_or(&no_domains).clone();
                Some(Watched::new(&d.name, d.init?.pid, m))
            })
            .collect();
        timing("startups");
        let readiness: Readiness =
            ready::wait_settled(&watched, self.settle_cap, self.settle_quiet).await;
        timing("settled");
        let runs: Vec<health::DeviceRun<'_>> = startups
            .iter()
            .filter_map(|r| {
                let node = st.devices.iter().find(|d| d.name == r.device)?;
                let dev = topo.devices.iter().find(|d| d.name == r.device)?;
                let init = node.init?;
                Some(health::DeviceRun {
                    name: &r.device,
                    pid: init.pid,
                    output: &r.output,
                    exit: r.exit,
                    exec: &dev.exec,
                    init,
                    env: &node.env,
                    domains: domains.get(&r.device).unwrap_or(&no_domains),
                })
            })
            .collect();
        let problems = health::check(&lab.root, &runs).await;
        timing("startup checks");
        let mut st = guard.take();
        st.phase = Phase::Running;
        let owned_state = st.clone();
        if let Err(e) = st.save() {
            destroy(&owned_state);
            return Err(incomplete(&name, format!("cannot save state: {e}")));
        }
        let mut lab = NetnsLab::new(st, true, readiness, warnings);
        lab.startup_problems = problems;
        lab.set_output_cap(self.output_cap);
        lab.reaper = Some(self.reaper.clone());
        Ok(lab)
    }
}

#[async_trait::async_trait]
impl Emulator for NetnsEmulator {
    fn name(&self) -> &str {
        "netns"
    }

    fn link_model(&self) -> Option<LinkModel> {
        Some(self.link_model)
    }

    async fn deploy(&self, request: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> {
        Ok(Arc::new(self.deploy_lab(request).await?))
    }

    /// A run does not wait for the kernel to end its lab's processes (0.3 s for 20 devices
    /// when quiet, seconds beside a bring-up): signalled at teardown, removed in the
    /// background (`netns/reaper.rs`).
    fn defer_teardowns(&self) -> bool {
        self.reaper.enable();
        true
    }

    async fn flush_teardowns(&self) -> Vec<EmuError> {
        self.reaper.flush().await;
        Vec::new()
    }
}

/// Tears a half-deployed lab down unless disarmed with [`DeployGuard::take`].
struct DeployGuard(Option<LabState>);

impl DeployGuard {
    fn state(&self) -> &LabState {
        self.0.as_ref().expect("deploy guard used after take")
    }
    fn state_mut(&mut self) -> &mut LabState {
        self.0.as_mut().expect("deploy guard used after take")
    }
    fn take(&mut self) -> LabState {
        self.0.take().expect("deploy guard taken twice")
    }
}

impl Drop for DeployGuard {
    fn drop(&mut self) {
        if let Some(st) = self.0.take() {
            destroy(&st);
        }
    }
}

/// With `FAULTBENCH_TIMING=1`, prints how long each deploy phase took (to stderr), with the
/// CPU this process spent in it (`self`, every thread) and the CPU of the children it reaped
/// meanwhile (`children`: startup scripts, `ip`), and the `CLOCK_MONOTONIC` time the phase
/// ended (`at`), so that a system-wide trace (`perf record -k CLOCK_MONOTONIC`, see
/// `scripts/bringup-cost.py`) can be cut into the same phases.
fn timing(phase: &str) {
    use std::sync::Mutex;
    static LAST: Mutex<Option<(std::time::Instant, CpuTimes)>> = Mutex::new(None);
    if std::env::var_os("FAULTBENCH_TIMING").is_none() {
        return;
    }
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    let now = (std::time::Instant::now(), CpuTimes::now());
    if let Some((t, cpu)) = *last {
        eprintln!(
            "[faultbench timing] {phase}: {} ms (cpu self {} ms, children {} ms; at {:.6})",
            (now.0 - t).as_millis(),
            now.1.own.saturating_sub(cpu.own).as_millis(),
            now.1.children.saturating_sub(cpu.children).as_millis(),
            monotonic_secs()
        );
    }
    *last = Some(now);
}

/// CPU time (user + system) of this process and of its reaped children.
#[derive(Debug, Clone, Copy)]
struct CpuTimes {
    own: Duration,
    children: Duration,
}

impl CpuTimes {
    fn now() -> Self {
        CpuTimes {
            own: rusage(libc::RUSAGE_SELF),
            children: rusage(libc::RUSAGE_CHILDREN),
        }
    }
}

fn rusage(who: libc::c_int) -> Duration {
    // SAFETY: an all-zero `rusage` is valid plain data.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage(2) only writes the struct it is given.
    if unsafe { libc::getrusage(who, &mut r) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    tv(r.ru_utime) + tv(r.ru_stime)
}

/// `CLOCK_MONOTONIC`, seconds (the clock `perf record -k CLOCK_MONOTONIC` stamps events with).
fn monotonic_secs() -> f64 {
    // SAFETY: an all-zero `timespec` is valid plain data.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: clock_gettime(2) only writes the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

fn incomplete(lab: &str, reason: impl Into<String>) -> EmuError {
    EmuError::DeployIncomplete {
        lab: lab.to_string(),
        reason: reason.into(),
    }
}

/// Root and the host tools every deploy needs.
pub fn preflight() -> Result<(), EmuError> {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(EmuError::Environment(
            "the netns backend needs root (namespaces, mounts, veths): run as root, e.g. with sudo"
                .into(),
        ));
    }
    for (tool, pkg) in [("ip", "iproute2"), ("bash", "bash")] {
        if which(tool).is_none() {
            return Err(EmuError::Environment(format!(
                "`{tool}` not found: apt-get install {pkg}"
            )));
        }
    }
    // The rest of what `faultbench doctor` calls required (FRR, ping, ps, start-stop-daemon):
    // without them labs deploy but never reach their baseline, which says nothing of the cause.
    let missing: Vec<_> = super::requirements()
        .into_iter()
        .filter(|r| r.required && !r.present)
        .collect();
    if let Some(cmd) = super::install_command(&missing) {
        let programs: Vec<&str> = missing.iter().map(|r| r.program).collect();
        return Err(EmuError::Environment(format!(
            "{} not found: run `{cmd}` as root (scripts/install-deps.sh installs everything labs use)",
            programs.join(", ")
        )));
    }
    Ok(())
}

/// Finds a program on `PATH`.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

fn generate_name(lab_name: &str) -> String {
    let base: String = lab_name
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(24)
        .collect();
    let base = base.trim_matches('-');
    let base = if base.is_empty() { "lab" } else { base };
    loop {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let salt = (nanos ^ std::process::id().rotate_left(16)).wrapping_mul(2654435761) >> 16;
        let name = format!("{base}-{:04x}", salt & 0xffff);
        if !LabState::folder(&name).exists() {
            return name;
        }
    }
}

fn cstr(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

/// Files, namespaces and links (blocking). Returns warnings.
fn build(
    lab_root: &Path,
    topo: &Topology,
    guard: &mut DeployGuard,
) -> Result<Vec<String>, EmuError> {
    let name = guard.state().name.clone();
    let io = |what: &str, e: std::io::Error| incomplete(&name, format!("{what}: {e}"));
    let dirs = InstanceDirs {
        root: LabState::folder(&name),
    };
    let mut warnings = prepare::write_common(&dirs).map_err(|e| io("writing the lab image", e))?;
    timing("lab image and shims");
    prepare::write_shared(&dirs, lab_root).map_err(|e| io("copying shared/", e))?;
    std::fs::create_dir_all(SETUP_ROOT).map_err(|e| io("creating the setup root", e))?;
    let mut plans: Vec<(String, Plan)> = Vec::new();
    for d in &topo.devices {
        let has_tree = prepare::write_device(&dirs, lab_root, &d.name)
            .map_err(|e| io(&format!("copying {}'s files", d.name), e))?;
        let tree = has_tree.then(|| dirs.tree(&d.name));
        let tree_has = |p: &str| tree.as_ref().is_some_and(|t| t.join(p).exists());
        if tree_has("etc/network/interfaces") {
            warnings.extend(super::image::ifupdown_missing(
                &d.name,
                super::image::host_has_ifupdown(),
            ));
        }
        let fs = DeviceFs {
            root: PathBuf::from(SETUP_ROOT),
            tree: tree.clone(),
            image: dirs.image(),
            sbin: dirs.sbin(),
            hostlab: dirs.hostlab(&d.name),
            shared: Some(dirs.shared()),
        };
        let net = DeviceNet {
            hostname: d.name.clone(),
            interfaces: d.interfaces.clone(),
            ipv6: d.ipv6,
            privileged: d.privileged,
            sysctls: d.sysctls.clone(),
            // Kathará's device start writes these three lines when the device has no
            // `/etc/hosts` of its own (Docker's file is unmounted first).
            hosts: (!tree_has("etc/hosts"))
                .then(|| format!("127.0.0.1 localhost\n::1 localhost\n127.0.1.1 {}\n", d.name)),
            resolv: (!tree_has("etc/resolv.conf")).then(String::new),
        };
        let phase1 = layout::filesystem_ops(&fs, &d.name).map_err(|e| incomplete(&name, e))?;
        plans.push((
            d.name.clone(),
            Plan {
                phase1,
                phase2: layout::runtime_ops(&net),
                argv: vec![cstr("/bin/bash"), cstr("-s")],
                filter: seccomp::program(),
                env: vec![
                    cstr(&format!("PATH={DEVICE_PATH}")),
                    cstr("HOME=/root"),
                    cstr(&format!("{INIT_MARK}={name}/{}", d.name)),
                ],
            },
        ));
    }
    for s in &topo.switches {
        let (mut phase1, phase2) = layout::switch_ops(BRIDGE, &s.ports);
        phase1.insert(
            0,
            init::Op::Mount {
                src: None,
                target: cstr("/"),
                fstype: None,
                flags: libc::MS_REC | libc::MS_PRIVATE,
                data: None,
            },
        );
        phase1.push(init::Op::Hostname(cstr(&s.name())));
        plans.push((
            s.name(),
            Plan {
                phase1,
                phase2,
                argv: vec![cstr("/bin/bash"), cstr("-s")],
                filter: seccomp::program(),
                env: vec![
                    cstr("PATH=/usr/sbin:/usr/bin:/sbin:/bin"),
                    cstr(&format!("{INIT_MARK}={name}/{}", s.name())),
                ],
            },
        ));
    }
    timing("device files and plans");
    // Clone every device and switch; record them before anything else can fail.
    let mut spawned: Vec<(String, Spawned)> = Vec::new();
    let mut spawn_err = None;
    for (node, plan) in &plans {
        match init::spawn(plan) {
            Ok(s) => spawned.push((node.clone(), s)),
            Err(e) => {
                spawn_err = Some(incomplete(&name, format!("{node}: {e}")));
                break;
            }
        }
    }
    {
        let st = guard.state_mut();
        for (node, s) in &spawned {
            let id = ProcId::of(s.pid);
            if let Some(n) = st
                .devices
                .iter_mut()
                .chain(st.switches.iter_mut())
                .find(|n| &n.name == node)
            {
                n.init = id.or(Some(ProcId {
                    pid: s.pid,
                    start: 0,
                }));
            }
        }
    }
    guard.state().save().map_err(|e| io("saving state", e))?;
    if let Some(e) = spawn_err {
        return Err(e);
    }
    timing("clone");
    let setup_timeout = Duration::from_secs(20);
    for (node, s) in &mut spawned {
        s.wait_mounted(setup_timeout)
            .map_err(|e| incomplete(&name, format!("{node}: {e}")))?;
    }
    let pid_of = |n: Node| -> i32 {
        let st = guard.state();
        let node = match n {
            Node::Device(i) => &st.devices[i],
            Node::Switch(i) => &st.switches[i],
        };
        node.init.map(|p| p.pid).unwrap_or(0)
    };
    timing("file systems");
    let batch = topo.link_batch(pid_of);
    if !batch.is_empty() {
        let mut child = std::process::Command::new("ip")
            .args(["-b", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| io("running ip", e))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(batch.as_bytes())
                .map_err(|e| io("feeding ip", e))?;
        }
        let out = child.wait_with_output().map_err(|e| io("running ip", e))?;
        if !out.status.success() {
            return Err(incomplete(
                &name,
                format!(
                    "creating the links failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            ));
        }
    }
    timing("links");
    for (node, s) in &mut spawned {
        s.go_and_wait(setup_timeout)
            .map_err(|e| incomplete(&name, format!("{node}: {e}")))?;
    }
    timing("device runtime");
    warnings.extend(start_dns(guard).map_err(|e| io("saving state", e))?);
    timing("docker dns");
    if !warnings.is_empty() {
        warnings.dedup();
    }
    Ok(warnings)
}

/// Starts the lab's Docker-DNS holder (see [`super::dns`]) and records it in the state. A lab
/// whose holder cannot start still deploys, with a warning and a recorded deviation: it then
/// differs from Kathará in sockets and `nat` rules only.
fn start_dns(guard: &mut DeployGuard) -> std::io::Result<Vec<String>> {
    let st = guard.state();
    let devices: Vec<super::dns::DeviceArg> = st
        .devices
        .iter()
        .filter_map(|d| {
            Some(super::dns::DeviceArg {
                name: d.name.clone(),
                init: d.init?,
            })
        })
        .collect();
    let log = LabState::folder(&st.name).join("dns.log");
    let mut warnings = Vec::new();
    match super::dns::start_holder(&st.name, &devices, &log) {
        Ok(h) => {
            warnings.extend(
                h.report
                    .warnings
                    .iter()
                    .map(|w| format!("Docker's embedded DNS: {w}")),
            );
            guard.state_mut().dns = Some(h.id);
            guard.state().save()?;
        }
        Err(e) => {
            let line = format!("Docker's embedded DNS is not emulated: {e}");
            warnings.push(line.clone());
            guard.state_mut().deviations.push(line);
        }
    }
    Ok(warnings)
}

/// The script that runs inside a device after it started, as Kathará's device start does; its
/// output is the record of the startup commands that failed (see `health::trap`).
///
/// Every program it runs is a process per device (a few milliseconds of CPU each, beside 30+
/// devices starting at once), so the wrapper's own work uses shell built-ins where they do the
/// same, and one `chown` and one `find` cover both FRR folders.
fn startup_script(device: &str, shell: &str, exec_lines: &[String]) -> String {
    let mut s = format!(
        "fb_frr_dirs=\n\
         for d in /etc/frr /etc/quagga; do if [ -d $d ]; then fb_frr_dirs=\"$fb_frr_dirs $d/\"; fi; done\n\
         if [ -n \"$fb_frr_dirs\" ]; then chown -R frr:frr $fb_frr_dirs 2>/dev/null; find $fb_frr_dirs -maxdepth 1 -type f -exec chmod 640 {{}} + 2>/dev/null; fi\n\
         {prepare}\
         if [ -f /hostlab/shared.startup ]; then {shared}{shell} /hostlab/shared.startup >/var/log/shared.log 2>&1; fi\n\
         rc=0\n\
         if [ -f /hostlab/{device}.startup ]; then {dev}{shell} -x /hostlab/{device}.startup >/var/log/startup.log 2>&1; rc=$?; fi\n",
        prepare = trap::prepare(),
        shared = trap::arm(shell, "shared"),
        dev = trap::arm(shell, "device"),
    );
    for line in exec_lines {
        s.push_str(&format!("{{ {line}\n}} >>/var/log/startup.log 2>&1\n"));
    }
    s.push_str(&trap::report(shell));
    // `: >>` creates the file as `touch` does on a device that has none yet, without a process.
    s.push_str(": >>/tmp/EOS\nexit $rc\n");
    s
}

/// What one device's startup left: its outer script's output and exit status.
struct StartupRun {
    device: String,
    output: String,
    exit: Option<i32>,
}

/// Runs every device's startup, respecting lab.dep (devices whose dependencies are done start
/// together).
async fn run_startups(
    lab: &LabDir,
    topo: &Topology,
    st: &LabState,
    timeout: Duration,
) -> Result<Vec<StartupRun>, EmuError> {
    let mut runs_done: Vec<StartupRun> = Vec::new();
    let mut done: Vec<String> = Vec::new();
    let names: Vec<String> = topo.devices.iter().map(|d| d.name.clone()).collect();
    while done.len() < names.len() {
        let wave: Vec<&String> = names
            .iter()
            .filter(|n| !done.contains(n))
            .filter(|n| {
                lab.deps
                    .iter()
                    .find(|(d, _)| d == *n)
                    .is_none_or(|(_, needs)| needs.iter().all(|x| done.contains(x)))
            })
            .collect();
        let wave: Vec<&String> = if wave.is_empty() {
            names.iter().filter(|n| !done.contains(n)).collect()
        } else {
            wave
        };
        let runs = wave.iter().map(|n| {
            let dev = topo.devices.iter().find(|d| &&d.name == n);
            let node = st.devices.iter().find(|d| &&d.name == n);
            async move {
                let (Some(dev), Some(node)) = (dev, node) else {
                    return Err(incomplete(&st.name, format!("{n}: unknown device")));
                };
                let Some(init) = node.init else {
                    return Err(incomplete(&st.name, format!("{n}: not started")));
                };
                let script = startup_script(&dev.name, &dev.shell, &dev.exec);
                let argv = vec![dev.shell.clone(), "-c".to_string(), script];
                let out = exec::run(init, &argv, &node.env, timeout, 64 * 1024)
                    .await
                    .map_err(|e| incomplete(&st.name, format!("{n}: cannot run its startup: {e}")))?;
                if out.timed_out {
                    return Err(incomplete(
                        &st.name,
                        format!(
                            "{n}: its startup did not finish within {} s (see /var/log/startup.log in the device)",
                            timeout.as_secs()
                        ),
                    ));
                }
                Ok((dev.name.clone(), out))
            }
        });
        for r in futures_util::future::join_all(runs).await {
            let (n, out) = r?;
            done.push(n.clone());
            runs_done.push(StartupRun {
                device: n,
                output: out.stdout,
                exit: out.exit_code,
            });
        }
    }
    Ok(runs_done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_script_runs_shared_then_device_then_exec_lines() {
        let s = startup_script("r1", "/bin/bash", &["echo hi".to_string()]);
        let shared = s.find("shared.startup").unwrap();
        let dev = s.find("/hostlab/r1.startup").unwrap();
        let exec = s.find("echo hi").unwrap();
        assert!(shared < dev && dev < exec);
        assert!(s.contains("-x /hostlab/r1.startup >/var/log/startup.log"));
        assert!(s.trim_end().ends_with("exit $rc"));
    }

    #[test]
    fn generated_names_are_valid_instance_names() {
        for lab in ["Kath2", "simple_bgp", "", "a b c"] {
            let n = generate_name(lab);
            assert!(state::check_name(&n).is_ok(), "{n}");
        }
    }
}
