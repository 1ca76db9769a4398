//! What a lab needs that this host cannot give it, known before anything is deployed.
//!
//! Two kinds of need are visible in a lab's files:
//!
//! - **images** (`lab.conf` `image=`): the netns backend runs every device on the host's own
//!   software, which stands in for Kathará's Debian-based images (`kathara/base`, `frr`,
//!   `quagga`, `bind`…). Images built around something else — a P4 software switch
//!   (`kathara/p4`, `p4lang/…`), Open vSwitch (`kathara/sdn`, `…ovs…`, `…openvswitch…`), Windows
//!   — cannot be stood in for;
//! - **kernel features** the startup files use (`ip link add … type vlan|dummy|bond|vrf|vxlan`,
//!   `vconfig`, `ifenslave`, a VLAN-filtering bridge, `tc … netem`, and in
//!   `etc/network/interfaces` `vlan-raw-device`, `ethN.V` stanzas, `bond-slaves`,
//!   `bridge-vlan-aware`): on a kernel lacking one, the kernel emulations of
//!   [`crate::shims`] stand in for it — when they are installed, when this kernel has what
//!   they are built on, and for what they emulate (no VRF, no VXLAN; of netem, only loss).
//!
//! Every need that cannot be met is named with the device, the file and line, and the fix, in
//! one [`EmuError::Unsupported`] returned before the first namespace exists; a lab that needs
//! nothing missing deploys as before. Files are read from the lab directory without following
//! links.

use crate::hostcaps::{Feature, HostCaps};
use faultbench_core::emulator::EmuError;
use faultbench_core::lab::LabDir;
use std::path::Path;

/// One need that cannot be met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unmet {
    pub device: String,
    /// `lab.conf:7`, `r1.startup:3`.
    pub at: String,
    /// The feature, in a few words (`image kathara/p4`, `vlan_8021q`).
    pub feature: String,
    /// Why it cannot be met, and the fix.
    pub why: String,
}

/// What an image is built around, if it is something the host's software cannot stand in for.
fn unprovidable_image(image: &str) -> Option<&'static str> {
    let repo = image
        .split([':', '@'])
        .next()
        .unwrap_or(image)
        .to_ascii_lowercase();
    let words: Vec<&str> = repo.split(['/', '-', '_', '.']).collect();
    if words
        .iter()
        .any(|w| *w == "p4" || w.starts_with("p4lang") || *w == "bmv2")
    {
        Some("a P4 software switch (BMv2)")
    } else if words
        .iter()
        .any(|w| *w == "sdn" || w.contains("ovs") || w.contains("openvswitch"))
    {
        Some("Open vSwitch")
    } else if words.iter().any(|w| w.contains("windows") || *w == "win") {
        Some("Windows")
    } else {
        None
    }
}

/// The kernel features one line of a startup file uses.
fn startup_features(line: &str) -> Vec<Feature> {
    let l = line.split('#').next().unwrap_or("");
    let w: Vec<&str> = l.split_whitespace().collect();
    let has = |a: &str, b: &str| w.windows(2).any(|p| p[0] == a && p[1] == b);
    let mut out = Vec::new();
    if has("type", "vlan") || w.contains(&"vconfig") {
        out.push(Feature::Vlan8021q);
    }
    if has("type", "dummy") {
        out.push(Feature::Dummy);
    }
    if has("type", "bond") || w.contains(&"ifenslave") || has("modprobe", "bonding") {
        out.push(Feature::Bonding);
    }
    if has("type", "vrf") {
        out.push(Feature::Vrf);
    }
    if has("type", "vxlan") {
        out.push(Feature::Vxlan);
    }
    if has("vlan_filtering", "1") || (w.first() == Some(&"bridge") && w.get(1) == Some(&"vlan")) {
        out.push(Feature::BridgeVlanFiltering);
    }
    if w.contains(&"netem") {
        out.push(Feature::Netem);
    }
    out
}

/// The kernel features one line of `etc/network/interfaces` uses.
fn interfaces_features(line: &str) -> Vec<Feature> {
    let w: Vec<&str> = line
        .split('#')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let mut out = Vec::new();
    match w.as_slice() {
        ["vlan-raw-device" | "vlan_raw_device", ..] => out.push(Feature::Vlan8021q),
        ["iface", name, ..]
            if name
                .split_once('.')
                .is_some_and(|(b, v)| !b.is_empty() && v.parse::<u16>().is_ok()) =>
        {
            out.push(Feature::Vlan8021q);
        }
        ["bond-slaves" | "bond_slaves" | "slaves", ..] => out.push(Feature::Bonding),
        [
            "bridge-vlan-aware" | "bridge_vlan_aware",
            "yes" | "on" | "true" | "1",
        ] => {
            out.push(Feature::BridgeVlanFiltering);
        }
        ["pre-up" | "up" | "post-up", rest @ ..] => out.extend(startup_features(&rest.join(" "))),
        _ => {}
    }
    out
}

/// Netem options the emulation covers: loss only.
fn netem_emulated(line: &str) -> bool {
    let w: Vec<&str> = line.split_whitespace().collect();
    let Some(i) = w.iter().position(|x| *x == "netem") else {
        return true;
    };
    let opts = &w[i + 1..];
    !opts.is_empty()
        && opts
            .iter()
            .all(|o| *o == "loss" || *o == "random" || o.ends_with('%') || o.parse::<f64>().is_ok())
}

/// Why a missing `feature` used by `line` cannot be emulated here (`shims` says whether the
/// emulations can be installed, and why not), if it cannot.
fn not_emulated(
    feature: Feature,
    line: &str,
    caps: &HostCaps,
    shims: &Result<(), String>,
) -> Option<String> {
    let module = feature.kconfig();
    let fix_kernel = format!("a kernel with {module} (or its module loaded) has it natively");
    let emulated = match feature {
        Feature::Vlan8021q | Feature::Dummy | Feature::Bonding => {
            caps.can_emulate_links().then_some(()).ok_or(
                "the emulation needs tun, AF_PACKET and nftables netdev, which this kernel lacks",
            )
        }
        Feature::BridgeVlanFiltering => caps
            .can_emulate_bridge_vlans()
            .then_some(())
            .ok_or("the emulation needs eBPF TCX, which this kernel lacks"),
        Feature::Netem if !netem_emulated(line) => {
            Err("of netem, only `loss` is emulated; delay, jitter, rate and the rest are not")
        }
        Feature::Netem => caps
            .can_emulate_loss()
            .then_some(())
            .ok_or("the loss emulation needs nftables egress and numgen, which this kernel lacks"),
        Feature::Vrf => Err("no emulation of VRF devices exists"),
        Feature::Vxlan => Err("no emulation of VXLAN devices exists"),
        _ => Err("no emulation exists"),
    };
    match (emulated, shims) {
        (Err(why), _) => Some(format!("this kernel lacks {module}; {why}; {fix_kernel}")),
        (Ok(()), Err(why)) => Some(format!(
            "this kernel lacks {module}, and faultbench's kernel emulations are not installed \
             ({why}); install them, or {fix_kernel}"
        )),
        (Ok(()), Ok(())) => None,
    }
}

/// Checks `lab` against this host before deploying. `caps` is what the kernel has; `shims`
/// whether the kernel emulations can be installed (`Err` says why not).
pub(crate) fn check(
    lab: &LabDir,
    caps: &HostCaps,
    shims: &Result<(), String>,
) -> Result<(), EmuError> {
    report(&unmet(lab, caps, shims))
}

/// The Kathará backend's check: only the kernel features a lab's files use. Its devices run
/// their own images on this kernel, and no emulation runs inside them, so every missing
/// feature is unmet; each line says whether the netns backend would emulate it here.
#[cfg(feature = "kathara")]
pub(crate) fn check_kernel(lab: &LabDir, caps: &HostCaps) -> Result<(), EmuError> {
    let none = Err("none runs inside Kathará's containers".to_string());
    let on_netns = unmet(lab, caps, &Ok(()));
    let unmet: Vec<Unmet> = unmet(lab, caps, &none)
        .into_iter()
        .filter(|u| !u.feature.starts_with("image "))
        .map(|mut u| {
            let module = Feature::ALL
                .iter()
                .find(|f| f.name() == u.feature)
                .map_or("it", |f| f.kconfig());
            let netns = if on_netns
                .iter()
                .any(|n| n.device == u.device && n.feature == u.feature)
            {
                ""
            } else {
                "; the netns backend emulates it on this kernel (`--emulator netns`)"
            };
            u.why = format!(
                "this kernel lacks {module}, Kathará's containers share it, and faultbench runs \
                 no kernel emulation inside them{netns}; a kernel with {module} (or its module \
                 loaded) has it"
            );
            u
        })
        .collect();
    report(&unmet)
}

/// `Ok` when nothing is unmet, else one [`EmuError::Unsupported`] naming every need.
fn report(unmet: &[Unmet]) -> Result<(), EmuError> {
    if unmet.is_empty() {
        return Ok(());
    }
    // One line per need: the feature, where it is used (a few places), why, the fix.
    let mut groups: Vec<(&str, &str, Vec<String>)> = Vec::new();
    for u in unmet {
        let place = format!("{} ({})", u.device, u.at);
        match groups
            .iter_mut()
            .find(|(f, w, _)| *f == u.feature && *w == u.why)
        {
            Some((_, _, places)) => places.push(place),
            None => groups.push((&u.feature, &u.why, vec![place])),
        }
    }
    let lines: Vec<String> = groups
        .iter()
        .map(|(feature, why, places)| {
            let shown = places
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            let more = match places.len() {
                n if n > 3 => format!(" and {} more", n - 3),
                _ => String::new(),
            };
            format!("\n  {feature}, used by {shown}{more}: {why}")
        })
        .collect();
    let mut features: Vec<&str> = groups.iter().map(|(f, _, _)| *f).collect();
    features.dedup();
    Err(EmuError::Unsupported {
        feature: features.join(", "),
        reason: format!("nothing was deployed:{}\n", lines.concat()),
    })
}

/// Every need of `lab` this host cannot meet.
pub(crate) fn unmet(lab: &LabDir, caps: &HostCaps, shims: &Result<(), String>) -> Vec<Unmet> {
    let conf_text = read(&lab.root, "lab.conf").unwrap_or_default();
    let mut out = Vec::new();
    for d in &lab.conf.devices {
        let image = d.image();
        if let Some(what) = unprovidable_image(image) {
            let line = conf_text
                .lines()
                .position(|l| {
                    let l = l.trim_start();
                    l.starts_with(&format!("{}[image]", d.name)) && l.contains(image)
                })
                .map_or(String::from("lab.conf"), |n| format!("lab.conf:{}", n + 1));
            out.push(Unmet {
                device: d.name.clone(),
                at: line,
                feature: format!("image {image}"),
                why: format!(
                    "{what}, which the netns backend cannot provide (it runs Kathará's \
                     Debian-based images on the host's software); run this lab with Kathará"
                ),
            });
        }
        let mut files = vec![(format!("{}.startup", d.name), false)];
        files.push((format!("{}/etc/network/interfaces", d.name), true));
        for (file, is_interfaces) in files {
            let Some(text) = read(&lab.root, &file) else {
                continue;
            };
            for (n, line) in text.lines().enumerate() {
                let used = if is_interfaces {
                    interfaces_features(line)
                } else {
                    startup_features(line)
                };
                for f in used.into_iter().filter(|f| !caps.has(*f)) {
                    if let Some(why) = not_emulated(f, line, caps, shims) {
                        let u = Unmet {
                            device: d.name.clone(),
                            at: format!("{file}:{}", n + 1),
                            feature: f.name().to_string(),
                            why,
                        };
                        // One line per device and feature is enough to name the need.
                        if !out
                            .iter()
                            .any(|x: &Unmet| x.device == u.device && x.feature == u.feature)
                        {
                            out.push(u);
                        }
                    }
                }
            }
        }
    }
    out
}

/// A lab file's text, if it is a regular file reached without links.
fn read(root: &Path, rel: &str) -> Option<String> {
    super::health::read_lab_file(root, rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab(files: &[(&str, &str)]) -> (tempfile::TempDir, LabDir) {
        let t = tempfile::tempdir().unwrap();
        for (f, text) in files {
            let p = t.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let l = LabDir::load(t.path()).unwrap();
        (t, l)
    }

    fn without(fs: &[Feature]) -> HostCaps {
        fs.iter()
            .fold(HostCaps::full_kernel(), |c, f| c.with(*f, false))
    }

    #[cfg(feature = "kathara")]
    #[test]
    fn on_kathara_every_missing_feature_is_unmet_and_images_are_not_judged() {
        let (_t, l) = lab(&[
            (
                "lab.conf",
                "r1[0]=A\nr1[image]=\"kathara/p4\"\nr2[0]=A\nr3[0]=A\n",
            ),
            (
                "r1.startup",
                "ip link add link eth0 name eth0.10 type vlan id 10\n",
            ),
            (
                "r2.startup",
                "ip link add lo1 type dummy\nip link set lo1 up\n",
            ),
            ("r3.startup", "ip addr add 10.0.0.3/24 dev eth0\n"),
        ]);
        // The netns emulations would cover both features on this kernel; Kathará runs none.
        let caps = without(&[Feature::Vlan8021q, Feature::Dummy]);
        assert!(caps.can_emulate_links());
        let e = check_kernel(&l, &caps).unwrap_err();
        let EmuError::Unsupported { feature, reason } = &e else {
            panic!("{e:?}");
        };
        assert_eq!(feature, "vlan_8021q, dummy");
        assert!(
            reason.contains("r1 (r1.startup:1)") && reason.contains("r2 (r2.startup:1)"),
            "{reason}"
        );
        assert!(reason.contains("the netns backend emulates it"), "{reason}");
        // Kathará has its own images: a P4 image is not a need here.
        assert!(!reason.contains("kathara/p4"), "{reason}");
        // A kernel with both: nothing unmet.
        assert!(check_kernel(&l, &HostCaps::full_kernel()).is_ok());
    }

    #[test]
    fn images_nobody_here_can_provide_are_named_with_their_line() {
        let (_t, l) = lab(&[(
            "lab.conf",
            "r1[0]=A\nr1[image]=\"kathara/frr\"\ns1[0]=A\ns1[image]=\"kathara/p4\"\nc1[0]=A\nc1[image]=kathara/sdn:latest\nw1[0]=A\nw1[image]=someone/windows-server\n",
        )]);
        let u = unmet(&l, &HostCaps::full_kernel(), &Ok(()));
        let brief: Vec<String> = u
            .iter()
            .map(|x| format!("{} {} {}", x.device, x.at, x.feature))
            .collect();
        assert_eq!(
            brief,
            vec![
                "s1 lab.conf:4 image kathara/p4",
                "c1 lab.conf:6 image kathara/sdn:latest",
                "w1 lab.conf:8 image someone/windows-server",
            ]
        );
        assert!(u[0].why.contains("P4"), "{}", u[0].why);
        assert!(u[1].why.contains("Open vSwitch"), "{}", u[1].why);
        let e = check(&l, &HostCaps::full_kernel(), &Ok(()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("nothing was deployed")
                && e.contains("image kathara/p4, used by s1 (lab.conf:4): a P4 software switch"),
            "{e}"
        );
    }

    #[test]
    fn missing_kernel_features_need_the_emulations_or_the_kernel() {
        let (_t, l) = lab(&[
            ("lab.conf", "r1[0]=A\nr2[0]=A\nr3[0]=A\n"),
            (
                "r1.startup",
                "ip link set eth0 up\nip link add link eth0 name eth0.10 type vlan id 10\n",
            ),
            ("r2.startup", "ip link add vrf-blue type vrf table 10\n"),
            (
                "r3/etc/network/interfaces",
                "auto eth0.20\niface eth0.20 inet static\n address 10.0.0.1/24\n",
            ),
        ]);
        let caps = without(&[Feature::Vlan8021q, Feature::Vrf]);
        // Emulations installed: VLANs are emulated, VRF is not.
        let u = unmet(&l, &caps, &Ok(()));
        assert_eq!(u.len(), 1, "{u:?}");
        assert_eq!(
            (u[0].device.as_str(), u[0].at.as_str()),
            ("r2", "r2.startup:1")
        );
        assert!(u[0].why.contains("no emulation of VRF"), "{}", u[0].why);
        // Emulations not installed: the VLANs too, with the reason and the fix.
        let u = unmet(&l, &caps, &Err("`faultbench-netshim` not found".into()));
        let brief: Vec<String> = u
            .iter()
            .map(|x| format!("{} {} {}", x.device, x.at, x.feature))
            .collect();
        assert_eq!(
            brief,
            vec![
                "r1 r1.startup:2 vlan_8021q",
                "r2 r2.startup:1 vrf",
                "r3 r3/etc/network/interfaces:2 vlan_8021q",
            ]
        );
        assert!(
            u[0].why
                .contains("not installed (`faultbench-netshim` not found)")
                && u[0].why.contains("CONFIG_VLAN_8021Q"),
            "{}",
            u[0].why
        );
        // A kernel that has them needs nothing.
        assert!(unmet(&l, &HostCaps::full_kernel(), &Err("x".into())).is_empty());
    }

    #[test]
    fn vxlan_has_no_emulation() {
        let (_t, l) = lab(&[
            ("lab.conf", "leaf1[0]=A\n"),
            (
                "leaf1.startup",
                "ip link add vxlan10 type vxlan id 10 dstport 4789 local 10.0.0.1 nolearning\n",
            ),
        ]);
        let u = unmet(&l, &without(&[Feature::Vxlan]), &Ok(()));
        assert_eq!(u.len(), 1, "{u:?}");
        assert_eq!(u[0].feature, "vxlan");
        assert!(u[0].why.contains("CONFIG_VXLAN"), "{}", u[0].why);
        assert!(unmet(&l, &HostCaps::full_kernel(), &Ok(())).is_empty());
    }

    #[test]
    fn of_netem_only_loss_is_emulated() {
        assert!(netem_emulated("tc qdisc add dev eth0 root netem loss 10%"));
        assert!(!netem_emulated(
            "tc qdisc add dev eth0 root netem delay 100ms"
        ));
        let (_t, l) = lab(&[
            ("lab.conf", "r1[0]=A\n"),
            (
                "r1.startup",
                "tc qdisc add dev eth0 root netem delay 50ms 10ms\n",
            ),
        ]);
        let u = unmet(&l, &without(&[Feature::Netem]), &Ok(()));
        assert_eq!(u.len(), 1);
        assert!(u[0].why.contains("only `loss`"), "{}", u[0].why);
    }
}
