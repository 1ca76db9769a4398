//! The host-side folder of a lab instance, written before any device starts.
//!
//! ```text
//! /run/faultbench/labs/<instance>/
//!   state.json            processes and owner (see `state`)
//!   sbin/                 mounted read-only at /usr/local/sbin in every device:
//!                         systemctl, the routing daemons by name (`zebra` … → the Quagga
//!                         init script), plus the kernel-emulation wrappers of `crate::shims`
//!   image/etc/            a layer between the device's files and the host's /etc: the
//!                         conventions of Kathará's images (FRR's packaged init.d/frr,
//!                         init.d/quagga, init.d/bind, /etc/zebra…; see `image`)
//!   trees/<device>/       a copy of the lab's <device>/ folder (Kathará copies it too, so
//!                         editing the lab directory does not change a running lab)
//!   hostlab/<device>/     the device's .startup/.shutdown and shared.startup/.shutdown, the
//!                         lower layer of its writable /hostlab
//!   shared/               the lab's shared/ folder (a copy), /shared in every device
//! ```

use std::io;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

const SYSTEMCTL: &str = include_str!("scripts/systemctl");
/// Routing daemons a device can call by name (Quagga's packages have them on PATH).
const QUAGGA_DAEMONS: [&str; 10] = [
    "zebra", "staticd", "bgpd", "ripd", "ripngd", "ospfd", "ospf6d", "isisd", "babeld", "pimd",
];

/// Paths inside an instance folder.
#[derive(Debug, Clone)]
pub(crate) struct InstanceDirs {
    pub root: PathBuf,
}

impl InstanceDirs {
    pub fn sbin(&self) -> PathBuf {
        self.root.join("sbin")
    }
    pub fn image(&self) -> PathBuf {
        self.root.join("image")
    }
    pub fn tree(&self, device: &str) -> PathBuf {
        self.root.join("trees").join(device)
    }
    pub fn hostlab(&self, device: &str) -> PathBuf {
        self.root.join("hostlab").join(device)
    }
    pub fn shared(&self) -> PathBuf {
        self.root.join("shared")
    }
}

fn write_mode(path: &Path, text: &str, mode: u32) -> io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// A lab entry that cannot be copied into a device, as an error naming the lab directory.
fn refused(lab_root: &Path, what: &Path, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "lab directory {}: `{}` {why}",
            lab_root.display(),
            what.display()
        ),
    )
}

/// A top-level name of a device tree becomes a mount point and goes into overlay mount options
/// (`lowerdir=…`), where `:` separates layers, `,` separates options and `\` escapes; such
/// names (and control characters) are refused rather than escaped: no real lab uses them.
fn check_top_level_name(lab_root: &Path, device: &str, name: &std::ffi::OsStr) -> io::Result<()> {
    let ok = name.to_str().is_some_and(|n| {
        !n.chars()
            .any(|c| matches!(c, ':' | ',' | '\\') || c.is_control())
    });
    if ok {
        Ok(())
    } else {
        Err(refused(
            lab_root,
            &Path::new(device).join(name),
            "has a name with `:`, `,`, `\\` or a control character, which would change the \
             device's mount options; rename it",
        ))
    }
}

/// Copies one regular file without following links (the source is opened `O_NOFOLLOW`, and
/// `O_NONBLOCK` so that a FIFO swapped in cannot block the copy), keeping its mode.
fn copy_file(src: &Path, dst: &Path) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut from = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(src)?;
    let meta = from.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a regular file", src.display()),
        ));
    }
    let mut to = std::fs::File::create(dst)?;
    io::copy(&mut from, &mut to)?;
    to.set_permissions(std::fs::Permissions::from_mode(meta.permissions().mode()))
}

/// Copies a folder recursively, keeping modes and keeping symbolic links as links (never
/// following them: a link is resolved inside the device, against the device's own files).
/// FIFOs, sockets and device nodes are refused, naming `lab_root`.
pub(crate) fn copy_tree(lab_root: &Path, from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    let mode = std::fs::symlink_metadata(from)?.permissions().mode();
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let ft = e.file_type()?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if ft.is_symlink() {
            let _ = std::fs::remove_file(&dst);
            symlink(std::fs::read_link(&src)?, &dst)?;
        } else if ft.is_dir() {
            copy_tree(lab_root, &src, &dst)?;
        } else if ft.is_file() {
            copy_file(&src, &dst)?;
        } else {
            let rel = src.strip_prefix(lab_root).unwrap_or(&src);
            return Err(refused(
                lab_root,
                rel,
                "is not a regular file, folder or link (a FIFO, socket or device node)",
            ));
        }
    }
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
}

/// What is at a path, without following a final link.
enum Entry {
    Missing,
    File,
    Dir,
    Link,
    Other,
}

fn entry(path: &Path) -> io::Result<Entry> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Ok(Entry::Link),
        Ok(m) if m.is_dir() => Ok(Entry::Dir),
        Ok(m) if m.is_file() => Ok(Entry::File),
        Ok(_) => Ok(Entry::Other),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Entry::Missing),
        Err(e) => Err(e),
    }
}

/// What this kernel can do, probed once per boot: the probe (a trial in a scratch namespace)
/// costs a few hundred milliseconds, a deploy should not pay it every time. Cached in
/// `/run/faultbench/hostcaps.json` with the boot id and kernel release it is valid for.
pub(crate) fn host_caps() -> crate::hostcaps::HostCaps {
    use crate::hostcaps::HostCaps;
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Cached {
        boot_id: String,
        caps: HostCaps,
    }
    let path = Path::new("/run/faultbench/hostcaps.json");
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap_or_default()
        .trim()
        .to_string();
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    if let Ok(text) = std::fs::read_to_string(path)
        && let Ok(c) = serde_json::from_str::<Cached>(&text)
        && !boot_id.is_empty()
        && c.boot_id == boot_id
        && c.caps.kernel_release == release
        && crate::hostcaps::Feature::ALL
            .iter()
            .all(|f| c.caps.features.contains_key(f))
    {
        return c.caps;
    }
    let caps = HostCaps::probe();
    if let Ok(json) = serde_json::to_vec_pretty(&Cached {
        boot_id,
        caps: caps.clone(),
    }) {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, json).is_ok() {
            let _ = std::fs::rename(&tmp, path);
        }
    }
    caps
}

/// Writes `sbin/` (our service shims and the kernel emulations) and `image/`.
pub(crate) fn write_common(dirs: &InstanceDirs) -> io::Result<Vec<String>> {
    let mut warnings = Vec::new();
    let sbin = dirs.sbin();
    std::fs::create_dir_all(&sbin)?;
    write_mode(&sbin.join("systemctl"), SYSTEMCTL, 0o755)?;
    // Netkit-era startups call the routing daemons by name (`zebra -d`), which Quagga's
    // packages put on PATH; FRR keeps them in /usr/lib/frr. The Quagga init script runs them
    // when called by one of these names (see scripts/quagga.init).
    for d in QUAGGA_DAEMONS {
        symlink("/etc/init.d/quagga", sbin.join(d))?;
    }
    // Kernel emulations (VLAN, dummy, bond, netem…) from `crate::shims`, when this kernel
    // lacks them.
    let caps = host_caps();
    if let Err(e) = crate::shims::install(&sbin, &caps) {
        warnings.push(format!(
            "kernel emulations not installed ({e}); devices see this kernel's own limits"
        ));
    }
    super::image::write(&dirs.image(), Path::new("/etc"))?;
    Ok(warnings)
}

/// Copies one device's files: its tree and its startup/shutdown scripts.
///
/// Nothing is followed out of the lab directory: a startup file, a device folder or `shared/`
/// that is a symbolic link is refused (naming the lab directory), links inside a tree are
/// copied as links, and special files are refused — so no host file's contents can land
/// inside a device, where `cat_file` would read them.
pub(crate) fn write_device(dirs: &InstanceDirs, lab_root: &Path, device: &str) -> io::Result<bool> {
    let hostlab = dirs.hostlab(device);
    std::fs::create_dir_all(&hostlab)?;
    for f in [
        format!("{device}.startup"),
        format!("{device}.shutdown"),
        "shared.startup".to_string(),
        "shared.shutdown".to_string(),
    ] {
        let src = lab_root.join(&f);
        match entry(&src)? {
            Entry::Missing | Entry::Dir => {}
            Entry::File => copy_file(&src, &hostlab.join(&f))?,
            Entry::Link => {
                return Err(refused(
                    lab_root,
                    Path::new(&f),
                    "is a symbolic link; startup and shutdown files must be regular files",
                ));
            }
            Entry::Other => {
                return Err(refused(lab_root, Path::new(&f), "is not a regular file"));
            }
        }
    }
    let tree = lab_root.join(device);
    match entry(&tree)? {
        Entry::Dir => {}
        Entry::Link => {
            return Err(refused(
                lab_root,
                Path::new(device),
                "is a symbolic link; a device's folder must be a real folder of the lab",
            ));
        }
        _ => return Ok(false),
    }
    let copy = dirs.tree(device);
    std::fs::create_dir_all(&copy)?;
    for e in std::fs::read_dir(&tree)? {
        let e = e?;
        let name = e.file_name();
        check_top_level_name(lab_root, device, &name)?;
        let n = name.to_string_lossy();
        // On merged-/usr hosts `/bin` is a link into `/usr`: a tree's `bin/` lands in
        // `usr/bin/`, where Kathará's tar extraction over `/` would put it.
        let dst = if matches!(n.as_ref(), "bin" | "sbin" | "lib" | "lib64")
            && Path::new("/").join(n.as_ref()).is_symlink()
        {
            copy.join("usr").join(n.as_ref())
        } else {
            copy.join(&name)
        };
        let ft = e.file_type()?;
        if ft.is_dir() {
            copy_tree(lab_root, &e.path(), &dst)?;
        } else if ft.is_symlink() {
            symlink(std::fs::read_link(e.path())?, &dst)?;
        } else if ft.is_file() {
            copy_file(&e.path(), &dst)?;
        } else {
            return Err(refused(
                lab_root,
                &Path::new(device).join(&name),
                "is not a regular file, folder or link (a FIFO, socket or device node)",
            ));
        }
    }
    merge_zebra_into_quagga(&copy)?;
    Ok(true)
}

/// Quagga-era trees put their configuration in `etc/zebra/` (netkit's name) or `etc/quagga/`.
/// In Kathará's Quagga image `/etc/zebra` is a link to `/etc/quagga`, and the tree is extracted
/// following links, so files of `etc/zebra/` land in `/etc/quagga/`. The copy is rearranged to
/// match: `etc/zebra/`'s files move into `etc/quagga/` (a file both have keeps its `etc/quagga`
/// version), and `etc/zebra` becomes that link.
fn merge_zebra_into_quagga(tree: &Path) -> io::Result<()> {
    // Only inside a real `etc/` of the copy: through a linked `etc` the paths below would
    // reach wherever the link points.
    if !matches!(entry(&tree.join("etc"))?, Entry::Dir) {
        return Ok(());
    }
    let zebra = tree.join("etc/zebra");
    if !matches!(entry(&zebra)?, Entry::Dir) {
        return Ok(());
    }
    let quagga = tree.join("etc/quagga");
    match entry(&quagga)? {
        Entry::Missing => {
            std::fs::rename(&zebra, &quagga)?;
            return symlink("quagga", &zebra);
        }
        Entry::Dir => {}
        // A link or file named etc/quagga: leave both as the lab wrote them.
        _ => return Ok(()),
    }
    move_missing(&zebra, &quagga)?;
    std::fs::remove_dir_all(&zebra)?;
    symlink("quagga", &zebra)
}

/// Moves what `from` has and `to` lacks into `to`, recursively.
fn move_missing(from: &Path, to: &Path) -> io::Result<()> {
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dst = to.join(e.file_name());
        match entry(&dst)? {
            Entry::Missing => std::fs::rename(e.path(), &dst)?,
            Entry::Dir if e.file_type()?.is_dir() => move_missing(&e.path(), &dst)?,
            _ => {}
        }
    }
    Ok(())
}

/// Copies the lab's `shared/` folder (or creates an empty one); a `shared` link is refused.
pub(crate) fn write_shared(dirs: &InstanceDirs, lab_root: &Path) -> io::Result<()> {
    let src = lab_root.join("shared");
    match entry(&src)? {
        Entry::Dir => copy_tree(lab_root, &src, &dirs.shared()),
        Entry::Link => Err(refused(
            lab_root,
            Path::new("shared"),
            "is a symbolic link; the shared folder must be a real folder of the lab",
        )),
        _ => std::fs::create_dir_all(dirs.shared()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_are_copied_with_modes_and_links() {
        let t = tempfile::tempdir().unwrap();
        let lab = t.path().join("lab");
        std::fs::create_dir_all(lab.join("r1/etc/frr")).unwrap();
        std::fs::write(lab.join("r1/etc/frr/frr.conf"), "hostname r1\n").unwrap();
        write_mode(&lab.join("r1/etc/run.sh"), "#!/bin/sh\n", 0o750).unwrap();
        symlink("frr/frr.conf", lab.join("r1/etc/link")).unwrap();
        std::fs::write(lab.join("r1.startup"), "ip link\n").unwrap();
        let dirs = InstanceDirs {
            root: t.path().join("inst"),
        };
        assert!(write_device(&dirs, &lab, "r1").unwrap());
        assert!(!write_device(&dirs, &lab, "pc1").unwrap());
        let tree = dirs.tree("r1");
        assert_eq!(
            std::fs::read_to_string(tree.join("etc/frr/frr.conf")).unwrap(),
            "hostname r1\n"
        );
        assert_eq!(
            std::fs::metadata(tree.join("etc/run.sh"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o750
        );
        assert!(tree.join("etc/link").is_symlink());
        assert!(dirs.hostlab("r1").join("r1.startup").is_file());
    }

    /// A lab directory next to a "host" folder holding a secret.
    fn crafted() -> (tempfile::TempDir, PathBuf, PathBuf, InstanceDirs) {
        let t = tempfile::tempdir().unwrap();
        let lab = t.path().join("lab");
        let host = t.path().join("host");
        std::fs::create_dir_all(&lab).unwrap();
        std::fs::create_dir_all(host.join("keys")).unwrap();
        std::fs::write(host.join("keys/id_rsa"), "HOST SECRET").unwrap();
        let dirs = InstanceDirs {
            root: t.path().join("inst"),
        };
        (t, lab, host, dirs)
    }

    /// Every file under the instance folder holding the secret.
    fn leaked(dirs: &InstanceDirs) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![dirs.root.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let ft = e.file_type().unwrap();
                if ft.is_dir() {
                    stack.push(e.path());
                } else if ft.is_file()
                    && std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("HOST SECRET"))
                {
                    out.push(e.path());
                }
            }
        }
        out
    }

    /// Issue 19, finding 8: a `<dev>.startup` that is a link to a host file was copied with the
    /// host file's contents into `/hostlab`, where `cat_file` reads it.
    #[test]
    fn a_linked_startup_file_is_refused_naming_the_lab() {
        let (_t, lab, host, dirs) = crafted();
        symlink(host.join("keys/id_rsa"), lab.join("r1.startup")).unwrap();
        let e = write_device(&dirs, &lab, "r1").unwrap_err().to_string();
        assert!(
            e.contains(&lab.display().to_string()) && e.contains("r1.startup"),
            "{e}"
        );
        assert!(e.contains("symbolic link"), "{e}");
        assert!(leaked(&dirs).is_empty(), "{:?}", leaked(&dirs));
    }

    /// Issue 19, finding 8: a device folder (or `shared/`) that is a link to a host folder was
    /// copied whole into the device.
    #[test]
    fn linked_device_and_shared_folders_are_refused() {
        let (_t, lab, host, dirs) = crafted();
        symlink(host.join("keys"), lab.join("r1")).unwrap();
        let e = write_device(&dirs, &lab, "r1").unwrap_err().to_string();
        assert!(e.contains("r1") && e.contains("symbolic link"), "{e}");
        symlink(host.join("keys"), lab.join("shared")).unwrap();
        let e = write_shared(&dirs, &lab).unwrap_err().to_string();
        assert!(e.contains("shared") && e.contains("symbolic link"), "{e}");
        assert!(leaked(&dirs).is_empty(), "{:?}", leaked(&dirs));
    }

    /// Links inside a tree stay links (resolved inside the device, never on the host), and a
    /// top-level name that would change overlay mount options is refused.
    #[test]
    fn links_inside_trees_are_kept_and_unsafe_names_refused() {
        let (_t, lab, host, dirs) = crafted();
        std::fs::create_dir_all(lab.join("r1/etc")).unwrap();
        symlink(host.join("keys/id_rsa"), lab.join("r1/etc/key")).unwrap();
        symlink(host.join("keys"), lab.join("r1/data")).unwrap();
        assert!(write_device(&dirs, &lab, "r1").unwrap());
        assert!(dirs.tree("r1").join("etc/key").is_symlink());
        assert!(dirs.tree("r1").join("data").is_symlink());
        assert!(leaked(&dirs).is_empty(), "{:?}", leaked(&dirs));
        for bad in ["a:b", "x,upperdir=y", "back\\slash"] {
            let (_t, lab, _, dirs) = crafted();
            std::fs::create_dir_all(lab.join("r2").join(bad)).unwrap();
            let e = write_device(&dirs, &lab, "r2").unwrap_err().to_string();
            assert!(
                e.contains(bad) && e.contains(&lab.display().to_string()),
                "{e}"
            );
        }
    }

    /// Issue 29: netkit-era trees keep Quagga's files in `etc/zebra/`, which Kathará's Quagga
    /// image extracts through its `/etc/zebra -> quagga` link.
    #[test]
    fn etc_zebra_files_land_in_etc_quagga() {
        let (_t, lab, _, dirs) = crafted();
        std::fs::create_dir_all(lab.join("r1/etc/zebra")).unwrap();
        std::fs::write(lab.join("r1/etc/zebra/daemons"), "zebra=yes\n").unwrap();
        std::fs::write(lab.join("r1/etc/zebra/ospfd.conf"), "from zebra\n").unwrap();
        std::fs::create_dir_all(lab.join("r2/etc/quagga")).unwrap();
        std::fs::create_dir_all(lab.join("r2/etc/zebra")).unwrap();
        std::fs::write(lab.join("r2/etc/quagga/ospfd.conf"), "from quagga\n").unwrap();
        std::fs::write(lab.join("r2/etc/zebra/ospfd.conf"), "from zebra\n").unwrap();
        std::fs::write(lab.join("r2/etc/zebra/zebra.conf"), "z\n").unwrap();
        assert!(write_device(&dirs, &lab, "r1").unwrap());
        assert!(write_device(&dirs, &lab, "r2").unwrap());
        let r1 = dirs.tree("r1").join("etc");
        assert_eq!(
            std::fs::read_link(r1.join("zebra")).unwrap(),
            Path::new("quagga")
        );
        assert_eq!(
            std::fs::read_to_string(r1.join("quagga/ospfd.conf")).unwrap(),
            "from zebra\n"
        );
        assert!(r1.join("quagga/daemons").is_file());
        let r2 = dirs.tree("r2").join("etc");
        assert_eq!(
            std::fs::read_link(r2.join("zebra")).unwrap(),
            Path::new("quagga")
        );
        assert_eq!(
            std::fs::read_to_string(r2.join("quagga/ospfd.conf")).unwrap(),
            "from quagga\n",
            "a file both folders have keeps its etc/quagga version"
        );
        assert_eq!(
            std::fs::read_to_string(r2.join("quagga/zebra.conf")).unwrap(),
            "z\n"
        );
        // The lab's own folders are untouched.
        assert!(lab.join("r2/etc/zebra/zebra.conf").is_file());
    }

    /// The rearrangement works on the copy only: through a linked `etc` it would move and
    /// delete files wherever the link points.
    #[test]
    fn a_linked_etc_is_never_rearranged() {
        let (_t, lab, host, dirs) = crafted();
        std::fs::create_dir_all(host.join("etc/zebra")).unwrap();
        std::fs::write(host.join("etc/zebra/zebra.conf"), "host\n").unwrap();
        std::fs::create_dir_all(lab.join("r1")).unwrap();
        symlink(host.join("etc"), lab.join("r1/etc")).unwrap();
        assert!(write_device(&dirs, &lab, "r1").unwrap());
        assert!(host.join("etc/zebra/zebra.conf").is_file());
        assert!(!host.join("etc/quagga").exists());
    }

    /// A FIFO (or device node) in a tree made the copy block on it forever.
    #[test]
    fn special_files_are_refused_not_read() {
        let (_t, lab, _, dirs) = crafted();
        std::fs::create_dir_all(lab.join("r1/etc")).unwrap();
        let fifo =
            std::ffi::CString::new(lab.join("r1/etc/pipe").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) with a valid path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = write_device(&dirs, &lab, "r1").map_err(|e| e.to_string());
            let _ = tx.send(r);
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the copy does not block on a FIFO");
        let e = r.unwrap_err();
        assert!(
            e.contains("pipe") && e.contains("not a regular file"),
            "{e}"
        );
    }
}
