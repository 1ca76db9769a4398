//! What a device sees: the steps that build its file system, network defaults and identity.
//!
//! A device's root is a private tmpfs assembled like a container image from the host's
//! installed software:
//!
//! | path | what it is |
//! |---|---|
//! | `/usr` (and the `/bin`, `/lib`… links) | the host's, read-only |
//! | `/usr/local/sbin` | the lab's shim directory (service control, kernel emulations), read-only |
//! | `/etc`, `/var` | overlays: the device tree's files over the lab image layer over the host's; writes stay in the device |
//! | `/var/log` | a fresh tmpfs (with `frr/`, `apache2/`, `nginx/`, `quagga/` and its old name `zebra`): logs start empty, the host's never show |
//! | `/tmp`, `/run`, `/root`, `/home`, `/srv`, `/opt`, `/mnt`, `/media` | empty tmpfs (or the device tree's files, writable) |
//! | other top-level folders of the device tree | writable overlays of those files |
//! | `/dev` | a tmpfs with `null`, `zero`, `full`, `random`, `urandom`, `tty`, `net/tun`, its own `pts` and `shm` |
//! | `/proc`, `/sys` | the device's own (its PID and network namespace); `/proc/sys` read-only after setup, `/sys` read-only |
//! | `/hostlab` | the device's startup and shutdown files, writable as in Kathará: an overlay whose writes stay in the device (the lab directory and the instance's copy never change) |
//! | `/shared` | the lab instance's shared folder (Kathará's `shared/`), writable |
//!
//! Nothing else of the host — home folders, `/work`, other labs' state — is visible. Writes
//! land in memory that disappears with the device.

use super::init::Op;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Host-side inputs of one device's file system.
#[derive(Debug, Clone)]
pub(crate) struct DeviceFs {
    /// Empty host directory used as the device root's mount point during setup.
    pub root: PathBuf,
    /// The device's copied file tree (Kathará `<device>/`), if any.
    pub tree: Option<PathBuf>,
    /// The lab's image layer (our `/etc` additions: init scripts, FRR defaults).
    pub image: PathBuf,
    /// Shim directory mounted at `/usr/local/sbin`.
    pub sbin: PathBuf,
    /// Folder with this device's startup/shutdown files, the lower layer of `/hostlab`.
    pub hostlab: PathBuf,
    /// The lab's shared folder, mounted at `/shared`.
    pub shared: Option<PathBuf>,
}

/// Network identity and kernel settings of one device.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeviceNet {
    pub hostname: String,
    /// Interface names to bring up (besides `lo`).
    pub interfaces: Vec<String>,
    /// Keep IPv6 enabled (lab.conf `ipv6=true`).
    pub ipv6: bool,
    /// lab.conf `privileged=true`: `/proc/sys` stays writable.
    pub privileged: bool,
    /// lab.conf `sysctl` lines, `net.x.y=v`.
    pub sysctls: Vec<(String, String)>,
    /// `/etc/hosts` content unless the device tree has one.
    pub hosts: Option<String>,
    /// `/etc/resolv.conf` content unless the device tree has one.
    pub resolv: Option<String>,
}

/// Top-level folders that get a fresh, writable place (tmpfs, or an overlay of the tree's copy).
const FRESH: [(&str, u32); 8] = [
    ("tmp", 0o1777),
    ("run", 0o755),
    ("root", 0o700),
    ("home", 0o755),
    ("srv", 0o755),
    ("opt", 0o755),
    ("mnt", 0o755),
    ("media", 0o755),
];
/// Top-level folders overlaid on the host's own.
const FROM_HOST: [&str; 2] = ["etc", "var"];
/// Top-level names we build ourselves and never take from a device tree.
const RESERVED: [&str; 9] = [
    "usr", "proc", "sys", "dev", "hostlab", "shared", "bin", "sbin", "lib",
];
/// Host top-level names that are (on merged-/usr systems) links into `/usr`.
const USR_LINKS: [&str; 6] = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
/// Scratch tmpfs for overlay upper/work folders, detached once the overlays exist.
const SCRATCH: &str = ".fb-scratch";

fn c(p: impl AsRef<Path>) -> CString {
    CString::new(p.as_ref().as_os_str().as_bytes()).unwrap_or_default()
}

fn cs(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

/// Refuses paths that cannot be written into overlay mount options.
pub(crate) fn overlay_safe(p: &Path) -> Result<(), String> {
    let b = p.as_os_str().as_bytes();
    if b.iter().any(|c| matches!(c, b':' | b',' | b'\\' | b'\n')) {
        return Err(format!(
            "path {} contains `:`, `,` or `\\`, which overlay mounts cannot take",
            p.display()
        ));
    }
    Ok(())
}

fn mount(
    src: Option<&str>,
    target: CString,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<String>,
) -> Op {
    Op::Mount {
        src: src.map(cs),
        target,
        fstype: fstype.map(cs),
        flags,
        data: data.map(|d| CString::new(d).unwrap_or_default()),
    }
}

fn bind_ro(src: &Path, target: CString, extra: libc::c_ulong) -> [Op; 2] {
    [
        Op::Mount {
            src: Some(c(src)),
            target: target.clone(),
            fstype: None,
            flags: (libc::MS_BIND | libc::MS_REC),
            data: None,
        },
        Op::Mount {
            src: None,
            target,
            fstype: None,
            flags: (libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY) | extra,
            data: None,
        },
    ]
}

/// Phase-1 steps: build the root, pivot into it, set the hostname.
pub(crate) fn filesystem_ops(fs: &DeviceFs, hostname: &str) -> Result<Vec<Op>, String> {
    for p in [&fs.image, &fs.sbin, &fs.root, &fs.hostlab]
        .into_iter()
        .chain(fs.tree.as_ref())
    {
        overlay_safe(p)?;
    }
    let r = &fs.root;
    let at = |name: &str| c(r.join(name));
    let mut ops = vec![
        mount(None, cs("/"), None, libc::MS_REC | libc::MS_PRIVATE, None),
        mount(
            Some("tmpfs"),
            c(r),
            Some("tmpfs"),
            0,
            Some("mode=0755".into()),
        ),
    ];
    // /usr, read-only (with the tree's /usr files layered on top, if any).
    ops.push(Op::Mkdir {
        path: at("usr"),
        mode: 0o755,
    });
    // A folder of the (copied) tree, never through a link: overlay resolves `lowerdir=` on
    // the host, so a top-level link (`root -> /root`) would put a host folder in the device.
    let tree_dir = |name: &str| {
        fs.tree
            .as_ref()
            .map(|t| t.join(name))
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
    };
    match tree_dir("usr") {
        Some(tu) => ops.push(mount(
            Some("overlay"),
            at("usr"),
            Some("overlay"),
            libc::MS_RDONLY,
            Some(format!("lowerdir={}:/usr", tu.display())),
        )),
        None => ops.extend(bind_ro(Path::new("/usr"), at("usr"), 0)),
    }
    ops.extend(bind_ro(&fs.sbin, at("usr/local/sbin"), 0));
    for name in USR_LINKS {
        let host = Path::new("/").join(name);
        match std::fs::symlink_metadata(&host) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(t) = std::fs::read_link(&host) {
                    ops.push(Op::Symlink {
                        target: c(t),
                        link: at(name),
                    });
                }
            }
            Ok(m) if m.is_dir() => {
                ops.push(Op::Mkdir {
                    path: at(name),
                    mode: 0o755,
                });
                ops.extend(bind_ro(&host, at(name), 0));
            }
            _ => {}
        }
    }
    // Writable places.
    ops.push(Op::Mkdir {
        path: at(SCRATCH),
        mode: 0o700,
    });
    ops.push(mount(
        Some("tmpfs"),
        at(SCRATCH),
        Some("tmpfs"),
        0,
        Some("mode=0700".into()),
    ));
    for d in ["u", "w"] {
        ops.push(Op::Mkdir {
            path: at(&format!("{SCRATCH}/{d}")),
            mode: 0o755,
        });
    }
    let overlay = |ops: &mut Vec<Op>, name: &str, lowers: Vec<PathBuf>, mode: u32| {
        let upper = r.join(SCRATCH).join("u").join(name);
        let work = r.join(SCRATCH).join("w").join(name);
        ops.push(Op::Mkdir {
            path: at(name),
            mode,
        });
        ops.push(Op::Mkdir {
            path: c(&upper),
            mode,
        });
        ops.push(Op::Mkdir {
            path: c(&work),
            mode: 0o700,
        });
        let lower: Vec<String> = lowers.iter().map(|p| p.display().to_string()).collect();
        ops.push(mount(
            Some("overlay"),
            at(name),
            Some("overlay"),
            0,
            Some(format!(
                "lowerdir={},upperdir={},workdir={}",
                lower.join(":"),
                upper.display(),
                work.display()
            )),
        ));
    };
    for name in FROM_HOST {
        let mut lowers: Vec<PathBuf> = tree_dir(name).into_iter().collect();
        let img = fs.image.join(name);
        if img.is_dir() {
            lowers.push(img);
        }
        lowers.push(Path::new("/").join(name));
        overlay(&mut ops, name, lowers, 0o755);
    }
    // Logs start empty in every device, as in a fresh container: the host's own /var/log (and
    // whatever FRR or Apache wrote there outside any lab) must not show up inside devices, where
    // an agent reading logs would take it for the lab's history.
    ops.push(mount(
        Some("tmpfs"),
        at("var/log"),
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some("mode=755".into()),
    ));
    // Kathará's Quagga image has a world-writable /var/log/quagga, also known as
    // /var/log/zebra: Quagga-era configurations log there (`log file /var/log/zebra/ospfd.log`).
    for (dir, mode) in [
        ("var/log/frr", 0o1777),
        ("var/log/apache2", 0o750),
        ("var/log/nginx", 0o755),
        ("var/log/quagga", 0o777),
    ] {
        ops.push(Op::Mkdir {
            path: at(dir),
            mode,
        });
    }
    ops.push(Op::Symlink {
        target: cs("quagga"),
        link: at("var/log/zebra"),
    });
    for (name, mode) in FRESH {
        match tree_dir(name) {
            Some(t) => overlay(&mut ops, name, vec![t], mode),
            None => {
                ops.push(Op::Mkdir {
                    path: at(name),
                    mode,
                });
                ops.push(mount(
                    Some("tmpfs"),
                    at(name),
                    Some("tmpfs"),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    Some(format!("mode={mode:o}")),
                ));
            }
        }
    }
    // Debian's /var/lock is a link to /run/lock, which init scripts (apache2's among them)
    // expect to exist, as it does in Kathará's images.
    ops.push(Op::Mkdir {
        path: at("run/lock"),
        mode: 0o1777,
    });
    if let Some(tree) = &fs.tree {
        let mut extra: Vec<String> = std::fs::read_dir(tree)
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        extra.sort();
        for name in extra {
            // The name goes into mount options (`lowerdir=…,upperdir=…`).
            overlay_safe(Path::new(&name))
                .map_err(|e| format!("device tree {}: {e}", tree.display()))?;
            let known = FROM_HOST.contains(&name.as_str())
                || FRESH.iter().any(|(n, _)| *n == name)
                || RESERVED.contains(&name.as_str())
                || USR_LINKS.contains(&name.as_str())
                || name == SCRATCH;
            if !known {
                overlay(&mut ops, &name, vec![tree.join(&name)], 0o755);
            }
        }
    }
    // Kathará's /hostlab is part of the container, writable; labs (and Kathará's own start
    // commands) write there. Writes land in the device's scratch layer.
    overlay(&mut ops, "hostlab", vec![fs.hostlab.clone()], 0o755);
    ops.push(Op::Detach { path: at(SCRATCH) });
    ops.push(Op::Rmdir { path: at(SCRATCH) });
    // /dev
    ops.push(Op::Mkdir {
        path: at("dev"),
        mode: 0o755,
    });
    ops.push(mount(
        Some("tmpfs"),
        at("dev"),
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_STRICTATIME,
        Some("mode=0755".into()),
    ));
    for (name, major, minor) in [
        ("null", 1, 3),
        ("zero", 1, 5),
        ("full", 1, 7),
        ("random", 1, 8),
        ("urandom", 1, 9),
        ("tty", 5, 0),
    ] {
        ops.push(Op::CharDev {
            path: at(&format!("dev/{name}")),
            mode: 0o666,
            major,
            minor,
        });
    }
    ops.push(Op::Mkdir {
        path: at("dev/net"),
        mode: 0o755,
    });
    ops.push(Op::CharDev {
        path: at("dev/net/tun"),
        mode: 0o666,
        major: 10,
        minor: 200,
    });
    ops.push(Op::Mkdir {
        path: at("dev/pts"),
        mode: 0o755,
    });
    ops.push(mount(
        Some("devpts"),
        at("dev/pts"),
        Some("devpts"),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620,gid=5".into()),
    ));
    ops.push(Op::Symlink {
        target: cs("pts/ptmx"),
        link: at("dev/ptmx"),
    });
    ops.push(Op::Mkdir {
        path: at("dev/shm"),
        mode: 0o1777,
    });
    ops.push(mount(
        Some("tmpfs"),
        at("dev/shm"),
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some("mode=1777".into()),
    ));
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        ops.push(Op::Symlink {
            target: cs(target),
            link: at(&format!("dev/{name}")),
        });
    }
    // /proc and /sys of the device's own namespaces.
    ops.push(Op::Mkdir {
        path: at("proc"),
        mode: 0o555,
    });
    ops.push(mount(
        Some("proc"),
        at("proc"),
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    ));
    ops.push(Op::Mkdir {
        path: at("sys"),
        mode: 0o555,
    });
    ops.push(mount(
        Some("sysfs"),
        at("sys"),
        Some("sysfs"),
        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    ));
    // Kathará's shared folder (/hostlab is above, with the other overlays).
    if let Some(shared) = &fs.shared {
        ops.push(Op::Mkdir {
            path: at("shared"),
            mode: 0o755,
        });
        ops.push(Op::Mount {
            src: Some(c(shared)),
            target: at("shared"),
            fstype: None,
            flags: (libc::MS_BIND | libc::MS_REC),
            data: None,
        });
    }
    ops.push(Op::PivotRoot { root: c(r) });
    ops.push(Op::Hostname(cs(hostname)));
    Ok(ops)
}

/// The kernel defaults Kathará gives every device, as `(sysctl, value)`.
pub(crate) fn default_sysctls(ipv6: bool) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = [
        ("net.ipv4.ip_forward", "1"),
        ("net.ipv4.conf.all.rp_filter", "0"),
        ("net.ipv4.conf.default.rp_filter", "0"),
        ("net.ipv4.icmp_ratelimit", "0"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let off = if ipv6 { "0" } else { "1" };
    for k in [
        "net.ipv6.conf.all.disable_ipv6",
        "net.ipv6.conf.default.disable_ipv6",
    ] {
        v.push((k.into(), off.into()));
    }
    v
}

/// `net.ipv4.conf.eth0.rp_filter` → `/proc/sys/net/ipv4/conf/eth0/rp_filter`.
pub(crate) fn sysctl_path(key: &str) -> PathBuf {
    Path::new("/proc/sys").join(key.replace('.', "/"))
}

/// Phase-2 steps: interfaces up, sysctls, identity files, read-only kernel knobs.
pub(crate) fn runtime_ops(net: &DeviceNet) -> Vec<Op> {
    let mut ops = vec![Op::LinkUp(cs("lo"))];
    for i in &net.interfaces {
        ops.push(Op::LinkUp(cs(i)));
    }
    // Kathará sets these through the container runtime before the device starts; lab.conf
    // `sysctl` lines come after the defaults so they win.
    let mut sysctls = default_sysctls(net.ipv6);
    sysctls.extend(net.sysctls.iter().cloned());
    for (k, v) in &sysctls {
        ops.push(Op::WriteFile {
            path: c(sysctl_path(k)),
            data: format!("{v}\n").into_bytes(),
        });
    }
    for (file, content) in [
        ("/etc/hostname", Some(format!("{}\n", net.hostname))),
        ("/etc/hosts", net.hosts.clone()),
        ("/etc/resolv.conf", net.resolv.clone()),
    ] {
        if let Some(content) = content {
            ops.push(Op::Unlink(cs(file)));
            ops.push(Op::WriteFile {
                path: cs(file),
                data: content.into_bytes(),
            });
        }
    }
    let ro = |p: &str| {
        let [a, b] = bind_ro(
            Path::new(p),
            cs(p),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        );
        [Op::IfExists(Box::new(a)), Op::IfExists(Box::new(b))]
    };
    if !net.privileged {
        // As in a non-privileged container: the device cannot change kernel settings.
        ops.extend(ro("/proc/sys"));
    }
    for p in ["/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"] {
        ops.extend(ro(p));
    }
    for p in ["/proc/kcore", "/proc/keys", "/proc/timer_list"] {
        ops.push(Op::IfExists(Box::new(Op::Mount {
            src: Some(cs("/dev/null")),
            target: cs(p),
            fstype: None,
            flags: libc::MS_BIND,
            data: None,
        })));
    }
    ops
}

/// Steps of a switch (a collision domain with three or more members): one bridge, its ports.
pub(crate) fn switch_ops(bridge: &str, ports: &[String]) -> (Vec<Op>, Vec<Op>) {
    let mut phase1 = vec![Op::LinkUp(cs("lo"))];
    for (k, v) in [
        ("net.ipv6.conf.all.disable_ipv6", "1"),
        ("net.ipv6.conf.default.disable_ipv6", "1"),
    ] {
        phase1.push(Op::WriteFile {
            path: c(sysctl_path(k)),
            data: format!("{v}\n").into_bytes(),
        });
    }
    phase1.push(Op::Bridge(cs(bridge)));
    let mut phase2 = Vec::new();
    for p in ports {
        phase2.push(Op::BridgePort {
            bridge: cs(bridge),
            port: cs(p),
        });
        phase2.push(Op::LinkUp(cs(p)));
    }
    phase2.push(Op::LinkUp(cs(bridge)));
    (phase1, phase2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_keys_become_proc_paths() {
        assert_eq!(
            sysctl_path("net.ipv4.conf.all.rp_filter"),
            PathBuf::from("/proc/sys/net/ipv4/conf/all/rp_filter")
        );
    }

    #[test]
    fn kathara_defaults_forward_and_disable_ipv6() {
        let d = default_sysctls(false);
        assert!(d.contains(&("net.ipv4.ip_forward".into(), "1".into())));
        assert!(d.contains(&("net.ipv6.conf.all.disable_ipv6".into(), "1".into())));
        assert!(
            default_sysctls(true).contains(&("net.ipv6.conf.all.disable_ipv6".into(), "0".into()))
        );
    }

    #[test]
    fn overlay_paths_with_separators_are_refused() {
        assert!(overlay_safe(Path::new("/run/faultbench/labs/a,b")).is_err());
        assert!(overlay_safe(Path::new("/run/faultbench/labs/ok-1")).is_ok());
    }

    #[test]
    fn the_tree_never_replaces_usr_proc_or_dev() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["etc/frr", "proc", "data", "tmp"] {
            std::fs::create_dir_all(dir.path().join("tree").join(d)).unwrap();
        }
        let fs = DeviceFs {
            root: "/run/faultbench/.root".into(),
            tree: Some(dir.path().join("tree")),
            image: dir.path().join("image"),
            sbin: dir.path().join("sbin"),
            hostlab: dir.path().join("hostlab"),
            shared: None,
        };
        let ops = filesystem_ops(&fs, "r1").unwrap();
        let text: Vec<String> = ops.iter().map(Op::describe).collect();
        let mounts_at = |t: &str| {
            text.iter()
                .filter(|d| d.contains(&format!(" on /run/faultbench/.root/{t} ")))
                .count()
        };
        assert_eq!(mounts_at("data"), 1, "{text:#?}");
        assert_eq!(mounts_at("proc"), 1, "only the device's own proc");
        let etc = text
            .iter()
            .find(|d| d.contains(" on /run/faultbench/.root/etc "))
            .expect("an overlay at /etc");
        let tree_etc = format!("lowerdir={}/tree/etc:/etc,", dir.path().display());
        assert!(etc.contains(&tree_etc), "{etc}");
        assert!(text.last().unwrap().contains("hostname r1"));
    }

    /// Issue 29: `/hostlab` was a read-only bind of the instance's copy; labs write there.
    #[test]
    fn hostlab_is_a_writable_overlay_over_the_instance_copy() {
        let dir = tempfile::tempdir().unwrap();
        let fs = DeviceFs {
            root: "/run/faultbench/.root".into(),
            tree: None,
            image: dir.path().join("image"),
            sbin: dir.path().join("sbin"),
            hostlab: dir.path().join("hostlab"),
            shared: None,
        };
        let ops = filesystem_ops(&fs, "r1").unwrap();
        let text: Vec<String> = ops.iter().map(Op::describe).collect();
        let at_hostlab: Vec<&String> = text
            .iter()
            .filter(|d| d.contains(" on /run/faultbench/.root/hostlab "))
            .collect();
        assert_eq!(
            at_hostlab.len(),
            1,
            "one mount, no read-only remount: {text:#?}"
        );
        let m = at_hostlab[0];
        assert!(m.contains("type overlay"), "{m}");
        assert!(
            m.contains(&format!("lowerdir={}/hostlab,", dir.path().display()))
                && m.contains("upperdir=/run/faultbench/.root/.fb-scratch/u/hostlab"),
            "writes go to the device's scratch layer: {m}"
        );
        let mounted = text.iter().position(|d| d == m).unwrap();
        let detached = text
            .iter()
            .position(|d| d == "umount /run/faultbench/.root/.fb-scratch")
            .unwrap();
        assert!(mounted < detached, "the upper layer exists when mounted");
        assert!(
            text.contains(&"symlink /run/faultbench/.root/var/log/zebra -> quagga".to_string())
        );
    }

    /// Issue 19, finding 8: top-level folder names of a tree went into `lowerdir=` unescaped,
    /// and top-level links were followed on the host.
    #[test]
    fn tree_names_cannot_change_mount_options_or_reach_the_host() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("x,upperdir=y")).unwrap();
        let fs = DeviceFs {
            root: "/run/faultbench/.root".into(),
            tree: Some(tree.clone()),
            image: dir.path().join("image"),
            sbin: dir.path().join("sbin"),
            hostlab: dir.path().join("hostlab"),
            shared: None,
        };
        let e = filesystem_ops(&fs, "r1").unwrap_err();
        assert!(e.contains("x,upperdir=y"), "{e}");
        std::fs::remove_dir(tree.join("x,upperdir=y")).unwrap();
        std::fs::create_dir_all(tree.join("a:b")).unwrap();
        assert!(filesystem_ops(&fs, "r1").is_err());
        std::fs::remove_dir(tree.join("a:b")).unwrap();

        let host = dir.path().join("host-root");
        std::fs::create_dir_all(&host).unwrap();
        std::os::unix::fs::symlink(&host, tree.join("root")).unwrap();
        std::os::unix::fs::symlink(&host, tree.join("extra")).unwrap();
        let ops = filesystem_ops(&fs, "r1").unwrap();
        let text: Vec<String> = ops.iter().map(Op::describe).collect();
        assert!(
            !text
                .iter()
                .any(|d| d.contains("tree/root") || d.contains("tree/extra")),
            "a linked top-level folder is never a lower layer: {text:#?}"
        );
    }
}
