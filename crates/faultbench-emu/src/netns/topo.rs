//! From a Kathará lab directory to namespaces and links.
//!
//! Every device becomes one set of namespaces. A collision domain becomes a Linux bridge `br0`
//! in a *switch* namespace of its own, with one veth per member (`p0`, `p1`, … on the switch
//! side), as on Kathará, where every collision domain is a Docker network (a bridge): a device
//! that sets its interface down leaves the other members' carrier up. With
//! [`LinkModel::Veth`] a domain of exactly two members is a plain veth pair instead (one end
//! down drops the other's carrier, like a back-to-back cable). Interfaces are named `eth0`, `eth1`, … in lab.conf order and take the
//! MAC address lab.conf gives them. All veths are created from the host with one `ip -b` batch
//! directly inside their target namespaces, so nothing ever appears in the host's namespace.
//!
//! Options are checked here: what Kathará supports but this backend cannot do (host `volume`s,
//! `lab.ext` external links) is refused with an explicit *unsupported* error. A `bridged`
//! uplink (Kathará's extra interface on a Docker bridge, NAT to the host's network) is not
//! emulated but does not refuse the lab, as most labs declare it for convenience (package
//! installs, a way out) and run without it: a warning names the device; resource limits (`mem`, `cpus`, `ulimit`) and display options
//! (`num_terms`, `image`, `entrypoint`, `args`, `port`) have no effect here.

use faultbench_core::emulator::{EmuError, LinkModel};
use faultbench_core::lab::LabDir;

/// Interface index of the first veth end a lab creates (see `Topology::link_batch`).
pub const FIRST_VETH_IFINDEX: usize = 1000;

/// A network endpoint: a device or a switch, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Node {
    Device(usize),
    Switch(usize),
}

/// One end of a veth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct End {
    pub node: Node,
    pub ifname: String,
    pub mac: Option<String>,
}

/// One device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DevicePlan {
    pub name: String,
    pub interfaces: Vec<String>,
    pub ipv6: bool,
    pub privileged: bool,
    pub sysctls: Vec<(String, String)>,
    pub env: Vec<(String, String)>,
    pub exec: Vec<String>,
    pub shell: String,
}

/// One switch namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SwitchPlan {
    pub domain: String,
    pub ports: Vec<String>,
}

impl SwitchPlan {
    /// Name used in state and messages.
    pub fn name(&self) -> String {
        format!("sw-{}", self.domain)
    }
}

/// The whole lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Topology {
    pub devices: Vec<DevicePlan>,
    pub switches: Vec<SwitchPlan>,
    pub links: Vec<(End, End)>,
    /// What lab.conf asks for that is not emulated, though the lab runs without it.
    pub warnings: Vec<String>,
}

/// Name of the bridge inside every switch namespace.
pub(crate) const BRIDGE: &str = "br0";

fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "y" | "yes" | "t" | "true" | "on" | "1"
    )
}

impl Topology {
    /// Plans the lab with the given link model, refusing what this backend cannot run.
    pub fn plan(lab: &LabDir, model: LinkModel) -> Result<Topology, EmuError> {
        if lab.root.join("lab.ext").exists() {
            return Err(EmuError::Unsupported {
                feature: "lab.ext".into(),
                reason: "external links to host interfaces are not emulated by the netns backend; use the Kathará backend".into(),
            });
        }
        let mut devices = Vec::new();
        let mut warnings = Vec::new();
        for d in &lab.conf.devices {
            if d.option("bridged").is_some_and(truthy) {
                warnings.push(format!(
                    "lab.conf: {0}[bridged]: the NAT uplink to the host's network is not emulated by the netns backend (devices never reach the host): {0} is deployed without that extra interface; use the Kathará backend if the lab needs it",
                    d.name
                ));
            }
            if d.option("volume").is_some() {
                return Err(EmuError::Unsupported {
                    feature: format!("{}[volume]", d.name),
                    reason: "host folders are not mounted into netns devices (containment); put the files in the device's folder instead".into(),
                });
            }
            let sysctls = d
                .options_named("sysctl")
                .filter_map(|s| s.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect();
            let env = d
                .options_named("env")
                .filter_map(|s| s.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            devices.push(DevicePlan {
                name: d.name.clone(),
                interfaces: d.interfaces.iter().map(|i| i.name()).collect(),
                ipv6: d.option("ipv6").is_some_and(truthy),
                privileged: d.option("privileged").is_some_and(truthy),
                sysctls,
                env,
                exec: d.options_named("exec").map(str::to_string).collect(),
                shell: d.option("shell").unwrap_or("/bin/bash").to_string(),
            });
        }
        let index = |name: &str| devices.iter().position(|d| d.name == name).unwrap_or(0);
        let mac_of = |dev: &str, idx: u32| {
            lab.conf
                .device(dev)
                .and_then(|d| d.interfaces.iter().find(|i| i.index == idx))
                .and_then(|i| i.mac.clone())
        };
        let mut switches = Vec::new();
        let mut links = Vec::new();
        for (domain, members) in lab.conf.domains() {
            let end = |(dev, idx): &(String, u32)| End {
                node: Node::Device(index(dev)),
                ifname: format!("eth{idx}"),
                mac: mac_of(dev, *idx),
            };
            if model == LinkModel::Veth && members.len() == 2 {
                links.push((end(&members[0]), end(&members[1])));
                continue;
            }
            let s = switches.len();
            let mut ports = Vec::new();
            for (k, m) in members.iter().enumerate() {
                let port = format!("p{k}");
                links.push((
                    end(m),
                    End {
                        node: Node::Switch(s),
                        ifname: port.clone(),
                        mac: None,
                    },
                ));
                ports.push(port);
            }
            switches.push(SwitchPlan { domain, ports });
        }
        Ok(Topology {
            devices,
            switches,
            links,
            warnings,
        })
    }

    /// The `ip -b` batch creating every veth, given the host PID of each node's namespace.
    ///
    /// Every veth end gets a lab-wide unique interface index from [`FIRST_VETH_IFINDEX`] up. A
    /// veth's peer index is shown inside the device (`eth3@if1007`), and iproute2's `bridge`
    /// resolves it against the *device's own* interfaces: with the kernel's small per-namespace
    /// indexes, `bridge link show` on a switch would print `eth3@eth2` (its peer's index 2 is the
    /// local eth2), so `bridge link show | grep eth2` matched other ports. Docker's veths carry
    /// large host-wide indexes, so on Kathará this never happens; high indexes here do the same,
    /// while interfaces created inside devices (bridges, VLANs, bonds) keep small ones.
    pub fn link_batch(&self, pid: impl Fn(Node) -> i32) -> String {
        let mut out = String::new();
        for (k, (a, b)) in self.links.iter().enumerate() {
            let side = |e: &End, index: usize| {
                let mut s = format!("{} netns {} index {index}", e.ifname, pid(e.node));
                if let Some(m) = &e.mac {
                    s.push_str(&format!(" address {m}"));
                }
                s
            };
            let first = FIRST_VETH_IFINDEX + 2 * k;
            out.push_str(&format!(
                "link add {} type veth peer name {}\n",
                side(a, first),
                side(b, first + 1)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::lab::LabConf;

    fn lab(conf: &str) -> LabDir {
        LabDir {
            root: "/nonexistent".into(),
            conf: LabConf::parse(conf).unwrap(),
            deps: Vec::new(),
        }
    }

    #[test]
    fn two_member_domains_are_veths_and_larger_ones_switches() {
        let t = Topology::plan(
            &lab(
            "r1[0]=A\nr1[1]=LAN/02:42:ac:11:00:02\nr2[0]=A\npc1[0]=LAN\npc2[0]=LAN\nr1[sysctl]=\"net.ipv4.conf.all.forwarding=0\"\n",
        ),
            LinkModel::Veth,
        )
        .unwrap();
        assert_eq!(t.switches.len(), 1);
        assert_eq!(t.switches[0].ports, vec!["p0", "p1", "p2"]);
        assert_eq!(t.links.len(), 4);
        assert_eq!(t.devices[0].sysctls[0].0, "net.ipv4.conf.all.forwarding");
        let batch = t.link_batch(|n| match n {
            Node::Device(i) => 100 + i as i32,
            Node::Switch(i) => 200 + i as i32,
        });
        assert!(batch.contains(
            "link add eth0 netns 100 index 1000 type veth peer name eth0 netns 101 index 1001\n"
        ));
        assert!(batch.contains(
            "link add eth1 netns 100 index 1002 address 02:42:ac:11:00:02 type veth peer name p0 netns 200 index 1003\n"
        ));
    }

    #[test]
    fn a_lone_interface_gets_a_switch() {
        let t = Topology::plan(&lab("h1[0]=ALONE\n"), LinkModel::Veth).unwrap();
        assert_eq!(t.switches.len(), 1);
        assert!(t.warnings.is_empty());
    }

    /// Kathará deploys a lab with `r1[bridged]=true` (an extra NAT interface); this backend
    /// refused the whole lab. Now it deploys the rest and says what is missing.
    #[test]
    fn a_bridged_device_is_warned_about_not_refused() {
        let t = Topology::plan(
            &lab("r1[0]=A\nr1[bridged]=true\nr2[0]=A\nr2[bridged]=false\n"),
            LinkModel::Switch,
        )
        .unwrap();
        assert_eq!(t.devices.len(), 2);
        assert_eq!(t.devices[0].interfaces, vec!["eth0".to_string()]);
        assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
        assert!(
            t.warnings[0].starts_with("lab.conf: r1[bridged]: the NAT uplink"),
            "{}",
            t.warnings[0]
        );
    }

    /// Kathará's model, the default: a two-member domain is a bridge too, so one end going
    /// down leaves the other's carrier up.
    #[test]
    fn with_the_switch_model_every_domain_is_a_bridge() {
        let conf = "r1[0]=A\nr2[0]=A\nr1[1]=LAN\npc1[0]=LAN\npc2[0]=LAN\n";
        let t = Topology::plan(&lab(conf), LinkModel::Switch).unwrap();
        let domains: Vec<&str> = t.switches.iter().map(|s| s.domain.as_str()).collect();
        assert_eq!(domains, ["A", "LAN"]);
        assert_eq!(t.switches[0].ports, vec!["p0", "p1"]);
        // Every link joins a device to a switch: no device-to-device veth.
        assert!(
            t.links
                .iter()
                .all(|(a, b)| matches!((a.node, b.node), (Node::Device(_), Node::Switch(_))))
        );
        assert_eq!(t.links.len(), 5);
        assert_eq!(LinkModel::default(), LinkModel::Switch);
    }
}
