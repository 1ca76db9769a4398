//! The lab image layer: what Kathará's stock images add to Debian, for labs written for them.
//!
//! Every device's `/etc` is an overlay of its own files over this layer over the host's `/etc`
//! (see `layout`). The host provides the software (FRR, bind9, ifupdown…); this layer provides
//! the conventions of the images that Kathará labs are written against, so their startup files
//! run unmodified:
//!
//! | path | image it mirrors | what it is |
//! |---|---|---|
//! | `init.d/frr` | `kathara/frr` | FRR's packaged init script (`frrinit.sh`): `watchfrr` starts and watches the daemons |
//! | `frr/vtysh.conf`, no `frr/frr.conf` | `kathara/frr` | per-daemon `write memory`; the host's default config hidden |
//! | `init.d/quagga`, `init.d/zebra` → `quagga` | `kathara/quagga` | Quagga's init script, run by FRR's daemons |
//! | `init.d/ospfd`, `bgpd`, `ripd` → `quagga` | netkit-era images | one Quagga daemon |
//! | `zebra` → `quagga`, `quagga/` | `kathara/quagga` | Quagga's configuration folder and its old name |
//! | `init.d/bind` → `named` (or `bind9`) | `kathara/base` | the DNS server's alias |
//! | `init.d/bind9` → `named` | `kathara/base` of Debian 10 | bind9's script under its old name |
//! | `network/interfaces` | `kathara/base` | ifupdown's fresh-install file; the host's `interfaces.d` hidden |
//!
//! `/etc/init.d/networking`, `ifup` and `ifdown` are Debian's ifupdown itself, from the host
//! (`apt-get install ifupdown`); each device keeps its state in its own `/run/network`.

use std::io;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

/// FRR's packaged init script, which Debian's package also installs as `/etc/init.d/frr` and
/// Kathará's FRR image runs: `start` launches `watchfrr` with the enabled daemons, and watchfrr
/// starts them, applies `frr.conf` per daemon and restarts any that dies (after about 5 s).
/// Copied from `/usr/lib/frr` rather than relying on the host's `/etc/init.d/frr`, which an
/// administrator may have edited or removed.
pub(crate) const PACKAGED_FRR_INIT: &str = "/usr/lib/frr/frrinit.sh";
const QUAGGA_INIT: &str = include_str!("scripts/quagga.init");
/// vtysh.conf of Kathará's FRR image: per-daemon `write memory`, like the image.
const VTYSH_CONF: &str = "no service integrated-vtysh-config\n";
/// `/etc/network/interfaces` as ifupdown's installation leaves it in a fresh image: nothing
/// configured, the drop-in folder included.
const INTERFACES: &str = "# interfaces(5) file used by ifup(8) and ifdown(8)\n\
                          # Include files from /etc/network/interfaces.d:\n\
                          source /etc/network/interfaces.d/*\n";
/// Init-script names that are links to the Quagga script: the image's own (`zebra`) and the
/// single-daemon names of older images.
const QUAGGA_ALIASES: [&str; 4] = ["zebra", "ospfd", "bgpd", "ripd"];

/// Where ifupdown's init script is on a host that has the package.
pub(crate) const NETWORKING_INIT: &str = "/etc/init.d/networking";

fn write_mode(path: &Path, text: &str, mode: u32) -> io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

fn link(target: &str, at: &Path) -> io::Result<()> {
    if let Some(d) = at.parent() {
        std::fs::create_dir_all(d)?;
    }
    symlink(target, at)
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

/// Writes the layer's `etc/` under `image` (an empty folder), looking at `host_etc` (the host's
/// `/etc`) for what to hide and which bind9 script exists.
pub(crate) fn write(image: &Path, host_etc: &Path) -> io::Result<()> {
    let etc = image.join("etc");
    if let Ok(text) = std::fs::read_to_string(PACKAGED_FRR_INIT) {
        write_mode(&etc.join("init.d/frr"), &text, 0o755)?;
    }
    write_mode(&etc.join("frr/vtysh.conf"), VTYSH_CONF, 0o644)?;
    // Kathará's FRR image ships without frr.conf; the host's default one must not leak in.
    whiteout(&etc.join("frr/frr.conf"))?;

    write_mode(&etc.join("init.d/quagga"), QUAGGA_INIT, 0o755)?;
    for alias in QUAGGA_ALIASES {
        link("quagga", &etc.join("init.d").join(alias))?;
    }
    std::fs::create_dir_all(etc.join("quagga"))?;
    link("quagga", &etc.join("zebra"))?;

    // Debian 12's bind9 installs /etc/init.d/named; Debian 10's was /etc/init.d/bind9. The
    // base images link `bind` to whichever they have; older labs call `bind9` too.
    let host_init = host_etc.join("init.d");
    let has = |n: &str| host_init.join(n).exists();
    let server = if !has("named") && has("bind9") {
        "bind9"
    } else {
        "named"
    };
    link(server, &etc.join("init.d/bind"))?;
    if server == "named" && !has("bind9") {
        link("named", &etc.join("init.d/bind9"))?;
    }

    write_mode(&etc.join("network/interfaces"), INTERFACES, 0o644)?;
    // The host's own drop-ins (a cloud image's `50-cloud-init`, say) configure the host's
    // interfaces, not a device's: hide each of them.
    if let Ok(rd) = std::fs::read_dir(host_etc.join("network/interfaces.d")) {
        for e in rd.flatten() {
            whiteout(&etc.join("network/interfaces.d").join(e.file_name()))?;
        }
    }
    std::fs::create_dir_all(etc.join("network/interfaces.d"))?;
    Ok(())
}

/// The deploy warning for a device whose files include `etc/network/interfaces` on a host
/// without ifupdown: its startup's `/etc/init.d/networking restart` would fail with "No such
/// file", and the device would have no address.
pub(crate) fn ifupdown_missing(device: &str, host_has_ifupdown: bool) -> Option<String> {
    (!host_has_ifupdown).then(|| {
        format!(
            "{device}: its etc/network/interfaces is applied by ifupdown (`ifup`, \
             `{NETWORKING_INIT}`), which this host lacks: run `apt-get install ifupdown` as root"
        )
    })
}

/// Whether the host has ifupdown, which `/etc/network/interfaces` files need.
pub(crate) fn host_has_ifupdown() -> bool {
    Path::new(NETWORKING_INIT).is_file()
        && ["/usr/sbin/ifup", "/sbin/ifup"]
            .iter()
            .any(|p| Path::new(p).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    fn host(init: &[&str], dropins: &[&str]) -> tempfile::TempDir {
        let h = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(h.path().join("init.d")).unwrap();
        for n in init {
            std::fs::write(h.path().join("init.d").join(n), "#!/bin/sh\n").unwrap();
        }
        std::fs::create_dir_all(h.path().join("network/interfaces.d")).unwrap();
        for n in dropins {
            std::fs::write(
                h.path().join("network/interfaces.d").join(n),
                "auto eth0\niface eth0 inet dhcp\n",
            )
            .unwrap();
        }
        h
    }

    fn target(image: &Path, rel: &str) -> String {
        std::fs::read_link(image.join("etc").join(rel))
            .unwrap()
            .display()
            .to_string()
    }

    /// Issue 29: `/etc/init.d/quagga`, `/etc/init.d/zebra` and `/etc/init.d/bind` were missing.
    #[test]
    fn quagga_and_bind_conventions_are_in_the_layer() {
        let h = host(&["named"], &[]);
        let img = tempfile::tempdir().unwrap();
        write(img.path(), h.path()).unwrap();
        let quagga = img.path().join("etc/init.d/quagga");
        assert!(
            std::fs::metadata(&quagga).unwrap().permissions().mode() & 0o111 != 0,
            "executable"
        );
        assert!(
            std::fs::read_to_string(&quagga)
                .unwrap()
                .contains("/etc/quagga/daemons")
        );
        for alias in ["zebra", "ospfd", "bgpd", "ripd"] {
            assert_eq!(target(img.path(), &format!("init.d/{alias}")), "quagga");
        }
        assert_eq!(target(img.path(), "zebra"), "quagga");
        assert!(img.path().join("etc/quagga").is_dir());
        assert_eq!(target(img.path(), "init.d/bind"), "named");
        assert_eq!(target(img.path(), "init.d/bind9"), "named");
    }

    #[test]
    fn an_older_host_links_bind_to_its_bind9_script() {
        let h = host(&["bind9"], &[]);
        let img = tempfile::tempdir().unwrap();
        write(img.path(), h.path()).unwrap();
        assert_eq!(target(img.path(), "init.d/bind"), "bind9");
        // The host's own bind9 script shows through; no link shadows it.
        assert!(!img.path().join("etc/init.d/bind9").exists());
    }

    #[test]
    fn a_host_without_ifupdown_is_named_with_the_fix() {
        let w = ifupdown_missing("h1", false).unwrap();
        assert!(w.starts_with("h1: "), "{w}");
        assert!(w.contains("apt-get install ifupdown"), "{w}");
        assert_eq!(ifupdown_missing("h1", true), None);
    }

    /// A host's `interfaces.d` drop-in configures the host: inside a device it would bring up
    /// the device's eth0 with DHCP.
    #[test]
    fn the_host_interfaces_drop_ins_are_hidden() {
        let h = host(&[], &["50-cloud-init"]);
        let img = tempfile::tempdir().unwrap();
        write(img.path(), h.path()).unwrap();
        let w = img.path().join("etc/network/interfaces.d/50-cloud-init");
        let ft = std::fs::symlink_metadata(&w).unwrap().file_type();
        assert!(ft.is_char_device(), "a whiteout");
        let ifs = std::fs::read_to_string(img.path().join("etc/network/interfaces")).unwrap();
        assert!(
            !ifs.lines()
                .any(|l| l.starts_with("auto") || l.starts_with("iface"))
        );
    }
}
