//! What this host's kernel can do for a lab, probed once.
//!
//! Labs and faults use kernel features that small or hardened kernels (Firecracker guests, some
//! CI runners) leave out: 802.1Q VLAN devices, bridge VLAN filtering, bonding, dummy interfaces,
//! the `netem` qdisc, VRF. [`HostCaps::probe`] finds out which of them exist, and which of the
//! building blocks the emulations in [`crate::shims`] rely on (tun/tap, `AF_PACKET`, nftables
//! netdev/bridge families, `numgen`) are there.
//!
//! The probe has two sources:
//! 1. the kernel's build configuration (`/proc/config.gz`, else `/boot/config-<release>`),
//!    which says what was built in (`=y`) or as a module (`=m`);
//! 2. when running as root, a *trial*: every feature is actually created in a scratch network
//!    namespace (`unshare --net`) and thrown away. The trial is authoritative (a module may be
//!    missing from disk, a feature may be blocked by policy); the configuration is the fallback
//!    when the trial cannot run.
//!
//! The first probe of a process is cached: [`HostCaps::probe`] is cheap to call repeatedly.
//!
//! ```
//! use faultbench_emu::hostcaps::{Feature, HostCaps};
//!
//! let full = HostCaps::full_kernel();
//! assert!(full.missing().is_empty());
//! assert!(full.has(Feature::Netem));
//!
//! // The probe never fails: what it cannot establish counts as missing, and `source` says how
//! // the answer was obtained.
//! let caps = HostCaps::probe();
//! let json = serde_json::to_string(&caps).unwrap();
//! let back: HostCaps = serde_json::from_str(&json).unwrap();
//! assert_eq!(back, caps);
//! for f in caps.missing() {
//!     println!("{}: missing, {}", f.name(), f.emulation().describe());
//! }
//! ```

mod kconfig;
mod trial;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub use kconfig::KernelConfig;

/// A kernel feature a lab, a fault or an emulation may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// 802.1Q VLAN sub-interfaces (`ip link add … type vlan`), `CONFIG_VLAN_8021Q`.
    #[serde(rename = "vlan_8021q")]
    Vlan8021q,
    /// VLAN-aware bridges (`vlan_filtering 1`, `bridge vlan …`), `CONFIG_BRIDGE_VLAN_FILTERING`.
    BridgeVlanFiltering,
    /// Bonding (`type bond`), `CONFIG_BONDING`.
    Bonding,
    /// Dummy interfaces (`type dummy`), `CONFIG_DUMMY`.
    Dummy,
    /// The netem qdisc (loss, delay, …), `CONFIG_NET_SCH_NETEM`.
    Netem,
    /// VRF devices (`type vrf`), `CONFIG_NET_VRF`.
    Vrf,
    /// VXLAN tunnel devices (`type vxlan`), `CONFIG_VXLAN`.
    Vxlan,
    /// veth pairs (every lab link), `CONFIG_VETH`.
    Veth,
    /// Linux bridges (collision domains, switches), `CONFIG_BRIDGE`.
    Bridge,
    /// macvlan devices, `CONFIG_MACVLAN`.
    Macvlan,
    /// tun/tap devices (`/dev/net/tun`), `CONFIG_TUN`: emulated interfaces are taps.
    Tun,
    /// `AF_PACKET` sockets, `CONFIG_PACKET`: the emulations' frame movers use them.
    AfPacket,
    /// nftables `netdev` family with an ingress hook, `CONFIG_NF_TABLES_NETDEV`.
    NftNetdev,
    /// nftables `netdev` egress hook, `CONFIG_NETFILTER_EGRESS` (netem loss emulation).
    NftEgress,
    /// nftables `numgen` expression, `CONFIG_NFT_NUMGEN` (random drops).
    NftNumgen,
    /// nftables `bridge` family, `CONFIG_NF_TABLES_BRIDGE`.
    NftBridge,
    /// eBPF `SCHED_CLS` programs attached with TCX links, `CONFIG_NET_XGRESS` (and
    /// `CONFIG_BPF_SYSCALL`): the bridge VLAN filtering emulation runs on them.
    BpfTcx,
}

impl Feature {
    /// Every feature, in report order (the seven lab features first).
    pub const ALL: [Feature; 17] = [
        Feature::Vlan8021q,
        Feature::BridgeVlanFiltering,
        Feature::Bonding,
        Feature::Dummy,
        Feature::Netem,
        Feature::Vrf,
        Feature::Vxlan,
        Feature::Veth,
        Feature::Bridge,
        Feature::Macvlan,
        Feature::Tun,
        Feature::AfPacket,
        Feature::NftNetdev,
        Feature::NftEgress,
        Feature::NftNumgen,
        Feature::NftBridge,
        Feature::BpfTcx,
    ];

    /// Stable snake_case name (as in the JSON form).
    pub fn name(self) -> &'static str {
        match self {
            Feature::Vlan8021q => "vlan_8021q",
            Feature::BridgeVlanFiltering => "bridge_vlan_filtering",
            Feature::Bonding => "bonding",
            Feature::Dummy => "dummy",
            Feature::Netem => "netem",
            Feature::Vrf => "vrf",
            Feature::Vxlan => "vxlan",
            Feature::Veth => "veth",
            Feature::Bridge => "bridge",
            Feature::Macvlan => "macvlan",
            Feature::Tun => "tun",
            Feature::AfPacket => "af_packet",
            Feature::NftNetdev => "nft_netdev",
            Feature::NftEgress => "nft_egress",
            Feature::NftNumgen => "nft_numgen",
            Feature::NftBridge => "nft_bridge",
            Feature::BpfTcx => "bpf_tcx",
        }
    }

    /// The kernel configuration symbol that provides the feature.
    pub fn kconfig(self) -> &'static str {
        match self {
            Feature::Vlan8021q => "CONFIG_VLAN_8021Q",
            Feature::BridgeVlanFiltering => "CONFIG_BRIDGE_VLAN_FILTERING",
            Feature::Bonding => "CONFIG_BONDING",
            Feature::Dummy => "CONFIG_DUMMY",
            Feature::Netem => "CONFIG_NET_SCH_NETEM",
            Feature::Vrf => "CONFIG_NET_VRF",
            Feature::Vxlan => "CONFIG_VXLAN",
            Feature::Veth => "CONFIG_VETH",
            Feature::Bridge => "CONFIG_BRIDGE",
            Feature::Macvlan => "CONFIG_MACVLAN",
            Feature::Tun => "CONFIG_TUN",
            Feature::AfPacket => "CONFIG_PACKET",
            Feature::NftNetdev => "CONFIG_NF_TABLES_NETDEV",
            Feature::NftEgress => "CONFIG_NETFILTER_EGRESS",
            Feature::NftNumgen => "CONFIG_NFT_NUMGEN",
            Feature::NftBridge => "CONFIG_NF_TABLES_BRIDGE",
            Feature::BpfTcx => "CONFIG_NET_XGRESS",
        }
    }

    /// Whether labs or faults use the feature directly (the other ones are building blocks).
    pub fn is_lab_feature(self) -> bool {
        matches!(
            self,
            Feature::Vlan8021q
                | Feature::BridgeVlanFiltering
                | Feature::Bonding
                | Feature::Dummy
                | Feature::Netem
                | Feature::Vrf
                | Feature::Vxlan
        )
    }

    /// What the shims do when this feature is missing.
    pub fn emulation(self) -> Emulation {
        match self {
            Feature::Vlan8021q => Emulation::Emulated(
                "tap sub-interface + user-space 802.1Q tagger on the parent (docs/emulations.md#vlan)",
            ),
            Feature::Dummy => {
                Emulation::Emulated("tap with a frame sink, NOARP (docs/emulations.md#dummy)")
            }
            Feature::Bonding => Emulation::Emulated(
                "tap + user-space frame distributor over the members; no LACP PDUs (docs/emulations.md#bond)",
            ),
            Feature::Netem => Emulation::Partial(
                "loss via nftables numgen on egress; delay/jitter/duplicate/corrupt/reorder/rate are unsupported_on_host (docs/emulations.md#netem)",
            ),
            Feature::BridgeVlanFiltering => Emulation::Emulated(
                "VLAN-transparent bridge + eBPF (TCX) PVID/membership/untagging at every port (docs/emulations.md#bridge-vlan-filtering)",
            ),
            Feature::Vrf => {
                Emulation::Unsupported("no faithful VRF emulation (docs/emulations.md#vrf)")
            }
            Feature::Vxlan => Emulation::Unsupported("no VXLAN emulation"),
            _ => Emulation::Unsupported("required building block; labs cannot run without it"),
        }
    }
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What happens to commands using a feature the kernel lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emulation {
    /// The shims emulate it (the text says how).
    Emulated(&'static str),
    /// Some uses are emulated, the others end with `unsupported_on_host`.
    Partial(&'static str),
    /// Commands using it exit with [`faultbench_core::emulator::UNSUPPORTED_EXIT`].
    Unsupported(&'static str),
}

impl Emulation {
    /// One line for reports (`faultbench doctor`).
    pub fn describe(self) -> String {
        match self {
            Emulation::Emulated(s) => format!("emulated: {s}"),
            Emulation::Partial(s) => format!("partly emulated: {s}"),
            Emulation::Unsupported(s) => format!("unsupported: {s}"),
        }
    }
}

/// How the answer was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeSource {
    /// Each feature was created and deleted in a scratch network namespace (authoritative).
    Trial,
    /// Read from the kernel build configuration only (not root, or `unshare` unavailable).
    KernelConfig,
    /// Neither worked; everything counts as missing.
    Unknown,
    /// Not probed: constructed by [`HostCaps::full_kernel`].
    Assumed,
}

/// The probed capabilities of this host's kernel (serializable; `faultbench doctor` prints it,
/// the netns emulator hands it to [`crate::shims::install`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCaps {
    /// `uname -r`.
    pub kernel_release: String,
    /// How the answer was obtained.
    pub source: ProbeSource,
    /// Feature → present. Every [`Feature`] has an entry. Names this build does not know
    /// (written by a newer faultbench into a shared cache) are skipped when reading.
    #[serde(deserialize_with = "known_features")]
    pub features: BTreeMap<Feature, bool>,
    /// Notes from the probe (e.g. why the trial could not run), for `doctor`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Reads the feature map, skipping feature names this build does not know: a cache written by
/// another faultbench version then still reads (the features it lacks are probed again),
/// instead of failing and being rewritten by each version in turn.
fn known_features<'de, D>(d: D) -> Result<BTreeMap<Feature, bool>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let raw: BTreeMap<String, bool> = BTreeMap::deserialize(d)?;
    Ok(raw
        .into_iter()
        .filter_map(|(k, v)| Feature::ALL.iter().find(|f| f.name() == k).map(|f| (*f, v)))
        .collect())
}

static PROBED: OnceLock<HostCaps> = OnceLock::new();

impl HostCaps {
    /// Probe the running kernel once per process and return the (cached) answer.
    pub fn probe() -> HostCaps {
        PROBED.get_or_init(Self::probe_uncached).clone()
    }

    /// Probe again, ignoring the cache (0.2–0.3 s as root on a 2-core VM: one `unshare` running a
    /// dozen `ip`, `tc` and `nft` calls, plus loading two eBPF programs).
    pub fn probe_uncached() -> HostCaps {
        let kernel_release = kconfig::kernel_release();
        let mut notes = Vec::new();
        let config = match KernelConfig::load(&kernel_release) {
            Ok(c) => Some(c),
            Err(e) => {
                notes.push(format!("kernel config not readable: {e}"));
                None
            }
        };
        match trial::run() {
            Ok(found) => {
                let features = Feature::ALL
                    .iter()
                    .map(|f| (*f, found.get(f).copied().unwrap_or(false)))
                    .collect();
                HostCaps {
                    kernel_release,
                    source: ProbeSource::Trial,
                    features,
                    notes,
                }
            }
            Err(e) => {
                notes.push(format!("trial in a scratch namespace not possible: {e}"));
                let (source, features) = match &config {
                    Some(c) => (
                        ProbeSource::KernelConfig,
                        Feature::ALL
                            .iter()
                            .map(|f| (*f, c.enabled(f.kconfig())))
                            .collect(),
                    ),
                    None => (
                        ProbeSource::Unknown,
                        Feature::ALL.iter().map(|f| (*f, false)).collect(),
                    ),
                };
                HostCaps {
                    kernel_release,
                    source,
                    features,
                    notes,
                }
            }
        }
    }

    /// A kernel with every feature (no emulation needed). Handy for tests and for hosts where
    /// the user vouches for the kernel.
    pub fn full_kernel() -> HostCaps {
        HostCaps {
            kernel_release: String::from("assumed"),
            source: ProbeSource::Assumed,
            features: Feature::ALL.iter().map(|f| (*f, true)).collect(),
            notes: Vec::new(),
        }
    }

    /// Whether the kernel has the feature.
    pub fn has(&self, f: Feature) -> bool {
        self.features.get(&f).copied().unwrap_or(false)
    }

    /// Features the kernel lacks, in report order.
    pub fn missing(&self) -> Vec<Feature> {
        Feature::ALL
            .iter()
            .copied()
            .filter(|f| !self.has(*f))
            .collect()
    }

    /// Set a feature (builder style, e.g. to test the shims against a pretend kernel).
    pub fn with(mut self, f: Feature, present: bool) -> HostCaps {
        self.features.insert(f, present);
        self
    }

    /// Whether the building blocks of the tap-based emulations are all present.
    pub fn can_emulate_links(&self) -> bool {
        self.has(Feature::Tun) && self.has(Feature::AfPacket) && self.has(Feature::NftNetdev)
    }

    /// Whether the bridge VLAN filtering emulation can work.
    pub fn can_emulate_bridge_vlans(&self) -> bool {
        self.has(Feature::BpfTcx)
    }

    /// Whether the netem loss emulation can work.
    pub fn can_emulate_loss(&self) -> bool {
        self.has(Feature::NftNetdev) && self.has(Feature::NftEgress) && self.has(Feature::NftNumgen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_match_serde() {
        let mut seen = std::collections::HashSet::new();
        for f in Feature::ALL {
            assert!(seen.insert(f.name()));
            assert_eq!(
                serde_json::to_string(&f).unwrap(),
                format!("\"{}\"", f.name())
            );
            assert!(f.kconfig().starts_with("CONFIG_"));
        }
    }

    /// A cache written by another faultbench version (a feature this build does not know, one
    /// it knows missing) still reads; the known entries keep their values.
    #[test]
    fn caches_of_other_versions_still_read() {
        let mut v =
            serde_json::to_value(HostCaps::full_kernel().with(Feature::Vrf, false)).unwrap();
        v["features"]["some_future_feature"] = true.into();
        v["features"].as_object_mut().unwrap().remove("vxlan");
        let caps: HostCaps = serde_json::from_value(v).unwrap();
        assert!(!caps.has(Feature::Vrf) && caps.has(Feature::Netem));
        assert!(!caps.features.contains_key(&Feature::Vxlan));
        assert_eq!(caps.features.len(), Feature::ALL.len() - 1);
    }

    #[test]
    fn with_and_missing() {
        let caps = HostCaps::full_kernel()
            .with(Feature::Netem, false)
            .with(Feature::Dummy, false);
        assert_eq!(caps.missing(), vec![Feature::Dummy, Feature::Netem]);
        assert!(caps.can_emulate_links());
        assert!(!caps.clone().with(Feature::Tun, false).can_emulate_links());
    }
}
