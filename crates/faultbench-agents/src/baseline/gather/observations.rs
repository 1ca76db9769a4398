//! What the gathering phases found ([`Observations`]), as the rules read it.

use crate::baseline::frr::{BgpSession, Config, OspfNeighbor, RipStatus};
use crate::baseline::probe::Facts;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// A router's control plane as vtysh showed it.
#[derive(Debug, Clone, Default)]
pub struct RouterState {
    /// vtysh could not reach FRR at all (zebra not running).
    pub frr_down: bool,
    /// The running configuration.
    pub config: Option<Config>,
    /// Its text.
    pub running: Option<String>,
    /// `/etc/frr/frr.conf` as saved on the router (where it keeps one).
    pub saved: Option<String>,
    /// OSPF neighbours (`None`: not asked, or ospfd not running).
    pub ospf: Option<Vec<OspfNeighbor>>,
    /// ospfd answered "not running".
    pub ospf_absent: bool,
    /// BGP sessions.
    pub bgp: Option<Vec<BgpSession>>,
    /// bgpd answered "not running".
    pub bgp_absent: bool,
    /// RIP status.
    pub rip: Option<RipStatus>,
    /// ripd answered "not running".
    pub rip_absent: bool,
}

/// One sweep ping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ping {
    /// Source device.
    pub src: String,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Echo replies received.
    pub received: u32,
    /// Echo requests sent.
    pub sent: u32,
}

impl Ping {
    /// No loss.
    pub fn ok(&self) -> bool {
        self.received >= self.sent
    }
    /// Total loss.
    pub fn dead(&self) -> bool {
        self.received == 0
    }
}

/// A DNS query and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsQuery {
    /// Client device.
    pub client: String,
    /// Server queried.
    pub server: Ipv4Addr,
    /// Name asked.
    pub name: String,
    /// `NOERROR`, `NXDOMAIN`, `REFUSED`, `SERVFAIL`, or `timeout`.
    pub status: String,
    /// A records returned.
    pub answers: Vec<Ipv4Addr>,
}

/// An HTTP fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    /// Client device.
    pub client: String,
    /// URL.
    pub url: String,
    /// The HTTP status when one came back (0: none).
    pub code: u16,
    /// First line of the tool's answer.
    pub detail: String,
}

/// Everything gathered.
#[derive(Debug, Clone, Default)]
pub struct Observations {
    /// Probe results by device.
    pub facts: BTreeMap<String, Facts>,
    /// Devices whose probe failed to run or was not understood.
    pub unprobed: Vec<String>,
    /// vtysh views by router.
    pub routers: BTreeMap<String, RouterState>,
    /// `get_reachability` pairs: (src, dst device, dst address, status).
    pub reach: Vec<(String, String, Option<Ipv4Addr>, String)>,
    /// The end hosts `get_reachability` named (with an address or without): the tools take
    /// them from the lab's evidence, so they are evidence too where a probe fails.
    pub reach_hosts: std::collections::BTreeSet<String>,
    /// Sweep pings.
    pub pings: Vec<Ping>,
    /// DNS queries.
    pub dns: Vec<DnsQuery>,
    /// HTTP fetches.
    pub http: Vec<Fetch>,
    /// Human-readable list of what was checked.
    pub checked: Vec<String>,
}
