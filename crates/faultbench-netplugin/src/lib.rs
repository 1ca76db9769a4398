//! faultbench's Docker network plugin, a stand-in for Kathará's `katharanp`.
//!
//! Kathará's Docker manager creates one Docker network per collision domain with a *managed*
//! network plugin (`kathara/katharanp:amd64` or `kathara/katharanp_vde:amd64`) and connects each
//! device's container to it with the endpoint options `kathara.iface`, `kathara.link` and, when
//! the lab gives one, `kathara.mac_addr`. No image registry is reachable on the machines
//! faultbench runs on, so the project brings its own plugin, installed under those names.
//!
//! The model, the same as Kathará's Linux-bridge plugin:
//! - a **network** (collision domain) is a Linux bridge `kt-<first 12 hex of the network id>`
//!   in the host's network namespace, set up as Kathará's switch: STP off, forward delay 0 (a
//!   port forwards at once), ageing time 0 (no MAC learning: every frame reaches every port, as
//!   on a shared segment), and `group_fwd_mask` 0xfff8, so link-local groups such as LLDP are
//!   forwarded (the kernel refuses the three lowest bits; STP BPDUs pass anyway because the
//!   bridge runs no STP). An `ACCEPT` for frames from the bridge to itself goes into the host's
//!   `FORWARD` chain, because Docker sets that chain's policy to `DROP` and makes bridged frames
//!   traverse it (`bridge-nf-call-iptables=1`);
//! - an **endpoint** (one device interface) gets its MAC when it is created: the lab's
//!   `kathara.mac_addr`, else one derived from `kathara.machine` + `kathara.iface`, else from
//!   the network and endpoint ids; **join** creates a veth pair, the host end
//!   `kv-<12 hex of the endpoint id>` enslaved to the bridge and up, the other end handed to
//!   Docker, which moves it into the container and names it `eth<N>`; **leave** deletes the pair.
//!
//! State (networks, endpoints and their MACs) is kept in a JSON file written after every change,
//! so a restarted plugin carries on where it stopped; a bridge that vanished (a reboot) is made
//! again when Docker next uses its network, since Docker keeps its networks across reboots.
//!
//! The protocol is Docker's remote network-driver API: JSON POSTs over HTTP/1.1 on a unix
//! socket ([`http`], [`driver`]). Kernel changes go through rtnetlink ([`netlink`]), so the
//! plugin's root filesystem needs no `ip` and no interpreter; only the `FORWARD` rule is made by
//! the `iptables` binary of the host's own backend, copied into that root filesystem
//! ([`firewall`]).

pub mod driver;
pub mod error;
pub mod firewall;
pub mod http;
pub mod mac;
pub mod netlink;
pub mod state;

pub use driver::Driver;
pub use error::PluginError;
