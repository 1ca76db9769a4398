//! Command wrappers that make a kernel without 802.1Q, dummy, bonding or netem look like one
//! that has them — inside lab devices only.
//!
//! # Model
//! [`install`] writes a directory holding one multi-call binary, `faultbench-netshim`, and the
//! wrappers `ip`, `tc`, `bridge` and `nft` (symlinks to it) — only those the probed [`HostCaps`] call
//! for; on a full kernel the directory stays empty of wrappers. The multi-call binary is either
//! the `faultbench-netshim` program or the `faultbench` CLI itself, which calls [`run_as_shim`]
//! first thing and so acts as the shims under their names: any install of the CLI carries the
//! emulations. The netns emulator bind-mounts
//! the directory read-only at `/usr/local/sbin` in every device and puts that first in `PATH`,
//! so `ip link add link eth1 name eth1.10 type vlan id 10` typed by a startup file, a fault
//! injection or an agent reaches the wrapper. A wrapper looks at its arguments:
//!
//! - anything it does not emulate is handed to the real tool with `exec` (same bytes, same exit
//!   code — the wrapper is invisible);
//! - a missing link type (`vlan`, `dummy`, `bond`) becomes a *tap* device of that name owned by
//!   a small daemon (`faultbench-netshim portd`) running inside the device: for a VLAN it pushes
//!   and pops the 802.1Q tag between the tap and the parent (`AF_PACKET`), for a bond it spreads
//!   frames over the members, for a dummy it swallows them. The daemon blocks in `poll`, lives in
//!   the device's PID namespace and dies with it; deleting the link stops it;
//! - `tc … netem loss P%` becomes an nftables `numgen` drop on the interface's egress hook;
//!   netem features that cannot be emulated exit with
//!   [`faultbench_core::emulator::UNSUPPORTED_EXIT`] and `faultbench: unsupported on this host: …`.
//!
//! Per-namespace state (which links are emulated, daemon PIDs, netem settings) lives under
//! `/run/faultbench-netshim/<netns inode>-<netns cookie>/`; the cookie keeps a namespace that
//! inherits a deleted one's inode from inheriting its state. [`collect_stale_state`] removes
//! the folders of namespaces that are gone. Limits of each emulation: `docs/emulations.md`.
//!
//! ```no_run
//! use faultbench_emu::{hostcaps::HostCaps, shims};
//! let dir = std::path::Path::new("/run/mylab/shims");
//! shims::install(dir, &HostCaps::probe()).unwrap();
//! // then, inside each device: bind-mount `dir` at /usr/local/sbin (read-only) and run
//! // commands with PATH=/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin
//! ```

mod bondctl;
mod bpf;
mod bridge;
mod brvlan;
mod error;
mod frames;
mod ip;
mod ipfilter;
mod iprender;
mod nftwrap;
mod portd;
pub mod realbin;
mod state;
mod stategc;
mod sys;
mod tc;

use crate::hostcaps::{Feature, HostCaps};
pub use error::ShimError;
pub use stategc::Collected;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// File name of the multi-call binary inside the shims directory.
pub const SHIM_BINARY: &str = "faultbench-netshim";
/// File holding the [`HostCaps`] the wrappers act on (JSON).
pub const CAPS_FILE: &str = "hostcaps.json";
/// Environment variable naming the `faultbench-netshim` binary to install (overrides lookup).
pub const BINARY_ENV: &str = "FAULTBENCH_NETSHIM";
/// Where devices see the shims directory.
pub const DEVICE_MOUNT_POINT: &str = "/usr/local/sbin";
/// `PATH` for commands run inside a device.
pub const DEVICE_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The wrappers `caps` calls for (empty on a full kernel).
pub fn wrappers_needed(caps: &HostCaps) -> Vec<&'static str> {
    let mut w = Vec::new();
    let link_features = [
        Feature::Vlan8021q,
        Feature::Dummy,
        Feature::Bonding,
        Feature::Vrf,
        Feature::BridgeVlanFiltering,
    ];
    if link_features.iter().any(|f| !caps.has(*f)) {
        w.push("ip");
    }
    if !caps.has(Feature::Netem) {
        w.push("tc");
    }
    if !caps.has(Feature::BridgeVlanFiltering) {
        w.push("bridge");
    }
    // The VLAN, bond and netem emulations keep nftables tables that must stay invisible.
    if [Feature::Vlan8021q, Feature::Bonding, Feature::Netem]
        .iter()
        .any(|f| !caps.has(*f))
    {
        w.push("nft");
    }
    w
}

/// Write the wrappers `caps` calls for into `dir` (created if needed): the multi-call binary,
/// one symlink per wrapper, and [`CAPS_FILE`]. Idempotent; stale wrappers are removed. On a full
/// kernel only the caps file is written.
pub fn install(dir: &Path, caps: &HostCaps) -> io::Result<()> {
    install_binary(dir, caps, None)
}

/// Like [`install`], with an explicit `faultbench-netshim` binary (e.g. a test's
/// `env!("CARGO_BIN_EXE_faultbench-netshim")`) instead of [`locate_binary`].
pub fn install_with_binary(dir: &Path, caps: &HostCaps, binary: &Path) -> io::Result<()> {
    install_binary(dir, caps, Some(binary))
}

fn install_binary(dir: &Path, caps: &HostCaps, binary: Option<&Path>) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let caps_json = serde_json::to_vec_pretty(caps).map_err(io::Error::other)?;
    write_atomic(&dir.join(CAPS_FILE), &caps_json, 0o644)?;
    let needed = wrappers_needed(caps);
    for name in ["ip", "tc", "bridge", "nft"] {
        let p = dir.join(name);
        if !needed.contains(&name) && p.symlink_metadata().is_ok() {
            std::fs::remove_file(&p)?;
        }
    }
    if needed.is_empty() {
        let _ = std::fs::remove_file(dir.join(SHIM_BINARY));
        return Ok(());
    }
    let bin = match binary {
        Some(b) => b.to_path_buf(),
        None => locate_binary()?,
    };
    let target = dir.join(SHIM_BINARY);
    let same = target
        .canonicalize()
        .ok()
        .zip(bin.canonicalize().ok())
        .is_some_and(|(a, b)| a == b);
    if !same {
        let tmp = dir.join(format!(".{SHIM_BINARY}.tmp"));
        let _ = std::fs::remove_file(&tmp);
        // A copy, not a hard link to the build output: a linker rewriting it in place would
        // otherwise hit "text file busy" while lab daemons run from it. The copy is made once
        // per binary (a hard link to it in every lab): the binary may be the whole
        // `faultbench` CLI, tens of megabytes.
        let linked = cached_copy(&bin).is_some_and(|c| std::fs::hard_link(c, &tmp).is_ok());
        if !linked {
            std::fs::copy(&bin, &tmp)?;
            set_mode(&tmp, 0o755)?;
        }
        std::fs::rename(&tmp, &target)?;
    }
    for name in needed {
        let p = dir.join(name);
        let _ = std::fs::remove_file(&p);
        std::os::unix::fs::symlink(SHIM_BINARY, &p)?;
    }
    Ok(())
}

/// Where [`install`] keeps one copy of each multi-call binary it installs (hard-linked into
/// every lab's shims folder on the same file system).
const CACHE_DIR: &str = "/run/faultbench/netshim";

/// A private copy of `bin` in [`CACHE_DIR`], made once per binary (its path, size, inode and
/// modification time name it); older copies are removed (labs keep theirs through their links).
/// `None` when the cache cannot be written.
fn cached_copy(bin: &Path) -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(bin).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (
        bin.canonicalize().ok()?,
        meta.len(),
        meta.ino(),
        meta.mtime(),
        meta.mtime_nsec(),
    )
        .hash(&mut h);
    let name = format!("{SHIM_BINARY}-{:016x}", h.finish());
    let dir = Path::new(CACHE_DIR);
    let path = dir.join(&name);
    if path.metadata().is_ok_and(|m| m.len() == meta.len()) {
        return Some(path);
    }
    std::fs::create_dir_all(dir).ok()?;
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    std::fs::copy(bin, &tmp).ok()?;
    set_mode(&tmp, 0o755).ok()?;
    std::fs::rename(&tmp, &path).ok()?;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let n = e.file_name();
        let n = n.to_string_lossy();
        if n.starts_with(SHIM_BINARY) && n != name.as_str() {
            let _ = std::fs::remove_file(e.path());
        }
    }
    Some(path)
}

/// Set by a program that is itself the multi-call binary (see [`run_as_shim`]).
static CARRIER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Names under which the multi-call binary runs as a wrapper or a daemon.
const CALLED_AS: [&str; 5] = ["ip", "tc", "bridge", "nft", SHIM_BINARY];

/// For a program that carries the shims itself (the `faultbench` CLI): when the process was
/// started as a wrapper (`ip`, `tc`, `bridge`, `nft`), as `faultbench-netshim`, or with the
/// hidden first argument `__netshim`, runs the shims' entry point and returns its exit code;
/// otherwise records that the running executable can serve as the multi-call binary
/// ([`locate_binary`] then falls back to it) and returns `None`. Call it first thing in
/// `main`, before threads or a runtime start.
pub fn run_as_shim() -> Option<i32> {
    let args: Vec<OsString> = std::env::args_os().collect();
    let called = args
        .first()
        .and_then(|a| Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if CALLED_AS.contains(&called.as_str()) {
        return Some(multicall_main(args));
    }
    if args.get(1).is_some_and(|a| a == "__netshim") {
        let mut rest = vec![OsString::from(SHIM_BINARY)];
        rest.extend(args.into_iter().skip(2));
        return Some(multicall_main(rest));
    }
    CARRIER.store(true, std::sync::atomic::Ordering::SeqCst);
    None
}

/// Folders where an installed `faultbench-netshim` is looked for, after the running
/// executable's own folder.
pub const INSTALLED_DIRS: [&str; 2] = ["/usr/local/lib/faultbench", "/usr/lib/faultbench"];

/// Where a `faultbench-netshim` may be, in order: beside `exe` (or one folder up, for test
/// binaries in `target/*/deps`), then the [`INSTALLED_DIRS`]. Shared by the shims' and the
/// device commands' lookups.
pub(crate) fn netshim_candidates(exe: Option<&Path>) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(d) = exe.and_then(Path::parent) {
        candidates.push(d.join(SHIM_BINARY));
        if let Some(up) = d.parent() {
            candidates.push(up.join(SHIM_BINARY));
        }
    }
    candidates.extend(
        INSTALLED_DIRS
            .iter()
            .map(|d| Path::new(d).join(SHIM_BINARY)),
    );
    candidates
}

/// Find the `faultbench-netshim` binary: `$FAULTBENCH_NETSHIM`, else next to the running
/// executable (or one directory up, for test binaries in `target/*/deps`), else in
/// [`INSTALLED_DIRS`], else the running executable itself when it carries the shims
/// ([`run_as_shim`]), else on `PATH`.
pub fn locate_binary() -> io::Result<PathBuf> {
    if let Some(p) = std::env::var_os(BINARY_ENV) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{BINARY_ENV}={} is not a file", p.display()),
            ))
        };
    }
    // An installed `faultbench-netshim` before the CLI itself: a shim's every call execs it, and
    // the small program starts faster (docs/performance.md).
    let mut candidates = netshim_candidates(std::env::current_exe().ok().as_deref());
    if CARRIER.load(std::sync::atomic::Ordering::SeqCst)
        && let Ok(exe) = std::env::current_exe()
    {
        candidates.push(exe);
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join(SHIM_BINARY)));
    }
    candidates.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "`{SHIM_BINARY}` not found next to the running executable or on PATH; build it \
                 (`cargo build -p faultbench-emu --bin {SHIM_BINARY}`) or set {BINARY_ENV} \
                 (the `faultbench` command carries it: `{BINARY_ENV}=$(command -v faultbench)`)"
            ),
        )
    })
}

/// Removes the shims' state folders of network namespaces that no longer exist (as seen from
/// the initial PID namespace; elsewhere it does nothing) and returns what it removed. Folders of
/// live namespaces are never touched. The netns emulator's `gc` calls it; so does the first
/// shim that writes state in a new namespace.
///
/// ```
/// use faultbench_emu::shims;
/// for c in shims::collect_stale_state() {
///     println!("removed {}: {}", c.folder.display(), c.why);
/// }
/// ```
pub fn collect_stale_state() -> Vec<Collected> {
    stategc::collect()
}

/// Entry point of the multi-call binary: dispatch on the name it was called by. Returns the
/// process exit code.
pub fn multicall_main(args: Vec<OsString>) -> i32 {
    let argv0 = args
        .first()
        .cloned()
        .unwrap_or_else(|| OsString::from(SHIM_BINARY));
    let called = Path::new(&argv0)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rest = &args[args.len().min(1)..];
    match called.as_str() {
        "ip" => ip::main(&argv0, rest),
        "tc" => tc::main(&argv0, rest),
        "bridge" => bridge::main(&argv0, rest),
        "nft" => nftwrap::main(&argv0, rest),
        // Not a kernel emulation: the entry that carries a command into a lab device; its
        // arguments are handed over byte for byte.
        _ if rest
            .first()
            .is_some_and(|a| a == crate::netns::nsexec::APPLET) =>
        {
            crate::netns::nsexec::main(&rest[1..])
        }
        // Its sibling: a device's snapshot state, read in the device without a shell.
        _ if rest
            .first()
            .is_some_and(|a| a == crate::netns::devstate::APPLET) =>
        {
            crate::netns::nsexec::state_main(&rest[1..])
        }
        _ => tool_main(rest),
    }
}

fn tool_main(args: &[OsString]) -> i32 {
    let a: Vec<String> = args
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    match a.first().map(String::as_str) {
        Some("portd") if a.len() == 2 => portd::main(&a[1]),
        Some("brvland") if a.len() == 2 => brvlan::daemon_main(&a[1]),
        // Not a kernel emulation: the holder of a netns lab's Docker-DNS sockets.
        Some(crate::netns::dns::APPLET) => crate::netns::dns::holder_main(&a[1..]),
        Some("caps") => {
            println!(
                "{}",
                serde_json::to_string_pretty(&shim_caps()).unwrap_or_default()
            );
            0
        }
        Some("install") if a.len() == 2 => match install(Path::new(&a[1]), &HostCaps::probe()) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{SHIM_BINARY}: install into {}: {e}", a[1]);
                1
            }
        },
        Some("state-dir") if a.len() == 1 => {
            println!("{}", state::dir().display());
            0
        }
        Some("gc") if a.len() == 1 => {
            for c in collect_stale_state() {
                println!("removed {}: {}", c.folder.display(), c.why);
            }
            0
        }
        Some("probe") => {
            println!(
                "{}",
                serde_json::to_string_pretty(&HostCaps::probe()).unwrap_or_default()
            );
            0
        }
        _ => {
            eprintln!(
                "usage: {SHIM_BINARY} probe | caps | install DIR | state-dir | gc   (as ip/tc/bridge/nft \
                 it wraps the real tools; see docs/emulations.md)"
            );
            2
        }
    }
}

/// Whether the bridge-VLAN eBPF programs load and attach (TCX) to interface `ifindex` of the
/// calling thread's network namespace; they are detached again before returning.
pub(crate) fn bpf_selftest(ifindex: u32) -> bool {
    let Ok(map) = bpf::VlanMap::new() else {
        return false;
    };
    bpf::attach(&map, bpf::Direction::In, ifindex, bpf::TCX_INGRESS).is_ok()
        && bpf::attach(&map, bpf::Direction::Out, ifindex, bpf::TCX_EGRESS).is_ok()
}

/// The capabilities the wrappers act on: [`CAPS_FILE`] next to the binary, else a probe.
pub(crate) fn shim_caps() -> HostCaps {
    let from_file = WRAPPER_DIR
        .get()
        .cloned()
        .or_else(|| {
            std::env::current_exe()
                .ok()?
                .parent()
                .map(Path::to_path_buf)
        })
        .map(|d| d.join(CAPS_FILE))
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<HostCaps>(&b).ok());
    from_file.unwrap_or_else(HostCaps::probe)
}

/// The folder of the wrappers this process runs on behalf of, when it calls a wrapper's code
/// in-process rather than as the wrapper's own program (the `devstate` reader): the caps file
/// is read from there instead of beside the running program.
static WRAPPER_DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Makes this process read the caps file of the wrappers in `dir` (once; later calls do
/// nothing).
pub(crate) fn act_for_wrappers_in(dir: PathBuf) {
    let _ = WRAPPER_DIR.set(dir);
}

/// Print the standard "unsupported on this host" message and return [`UNSUPPORTED_EXIT`].
///
/// [`UNSUPPORTED_EXIT`]: faultbench_core::emulator::UNSUPPORTED_EXIT
pub(crate) fn unsupported(what: &str) -> i32 {
    eprintln!("faultbench: unsupported on this host: {what}");
    faultbench_core::emulator::UNSUPPORTED_EXIT
}

fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    set_mode(&tmp, mode)?;
    std::fs::rename(&tmp, path)
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_kernel_needs_no_wrappers() {
        assert!(wrappers_needed(&HostCaps::full_kernel()).is_empty());
        let no_netem = HostCaps::full_kernel().with(Feature::Netem, false);
        assert_eq!(wrappers_needed(&no_netem), vec!["tc", "nft"]);
        let no_vlan = HostCaps::full_kernel().with(Feature::Vlan8021q, false);
        assert_eq!(wrappers_needed(&no_vlan), vec!["ip", "nft"]);
    }

    #[test]
    fn install_on_full_kernel_writes_only_caps() {
        let dir = std::env::temp_dir().join(format!("fb-shims-unit-{}", std::process::id()));
        install(&dir, &HostCaps::full_kernel()).unwrap();
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec![CAPS_FILE.to_string()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
