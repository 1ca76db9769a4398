//! The host-side folder of a lab instance, written before any device starts.
//!
//! ```text
//! /run/faultbench/labs/<instance>/
//!   state.json            processes and owner (see `state`)
//!   sbin/                 mounted read-only at /usr/local/sbin in every device:
//!                         systemctl, plus the kernel-emulation wrappers of `crate::shims`
//!   image/etc/            a layer between the device's files and the host's /etc:
//!                         init.d/frr (FRR without watchfrr), frr/vtysh.conf as in Kathará's
//!                         image, and a whiteout hiding the host's frr/frr.conf
//!   trees/<device>/       a copy of the lab's <device>/ folder (Kathará copies it too, so
//!                         editing the lab directory does not change a running lab)
//!   hostlab/<device>/     the device's .startup/.shutdown and shared.startup/.shutdown
//!   shared/               the lab's shared/ folder (a copy), /shared in every device
//! ```

use std::io;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

const SYSTEMCTL: &str = include_str!("scripts/systemctl");
const FRR_INIT: &str = include_str!("scripts/frr.init");
/// vtysh.conf of Kathará's FRR image: per-daemon `write memory`, like the image.
const VTYSH_CONF: &str = "no service integrated-vtysh-config\n";

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

/// An overlayfs whiteout (character device 0:0): hides the same path in lower layers.
fn whiteout(path: &Path) -> io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let c =
        std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(io::Error::other)?;
    // SAFETY: mknod(2) with a valid path.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(0, 0)) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Copies a folder recursively, keeping modes and symlinks.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    let mode = std::fs::metadata(from)?.permissions().mode();
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let ft = e.file_type()?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if ft.is_symlink() {
            let _ = std::fs::remove_file(&dst);
            symlink(std::fs::read_link(&src)?, &dst)?;
        } else if ft.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
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
    // Kernel emulations (VLAN, dummy, bond, netem…) from `crate::shims`, when this kernel
    // lacks them.
    let caps = host_caps();
    if let Err(e) = crate::shims::install(&sbin, &caps) {
        warnings.push(format!(
            "kernel emulations not installed ({e}); devices see this kernel's own limits"
        ));
    }
    let image = dirs.image();
    write_mode(&image.join("etc/init.d/frr"), FRR_INIT, 0o755)?;
    write_mode(&image.join("etc/frr/vtysh.conf"), VTYSH_CONF, 0o644)?;
    // Kathará's FRR image ships without frr.conf; the host's default one must not leak in.
    whiteout(&image.join("etc/frr/frr.conf"))?;
    Ok(warnings)
}

/// Copies one device's files: its tree and its startup/shutdown scripts.
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
        if src.is_file() {
            std::fs::copy(&src, hostlab.join(&f))?;
        }
    }
    let tree = lab_root.join(device);
    if !tree.is_dir() {
        return Ok(false);
    }
    let copy = dirs.tree(device);
    std::fs::create_dir_all(&copy)?;
    for e in std::fs::read_dir(&tree)? {
        let e = e?;
        let name = e.file_name();
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
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else if e.file_type()?.is_symlink() {
            symlink(std::fs::read_link(e.path())?, &dst)?;
        } else {
            std::fs::copy(e.path(), &dst)?;
        }
    }
    Ok(true)
}

/// Copies the lab's `shared/` folder (or creates an empty one).
pub(crate) fn write_shared(dirs: &InstanceDirs, lab_root: &Path) -> io::Result<()> {
    let src = lab_root.join("shared");
    if src.is_dir() {
        copy_tree(&src, &dirs.shared())
    } else {
        std::fs::create_dir_all(dirs.shared())
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
}
