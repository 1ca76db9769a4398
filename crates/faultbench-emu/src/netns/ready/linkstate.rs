//! Convergence of a link-state protocol (OSPFv2, OSPFv3), judged from its state.
//!
//! A link-state domain has converged when, at once:
//! - every interface that shares a segment with another router of the protocol has that router
//!   as a neighbour, and is past `Waiting` (its DR election is done);
//! - every neighbour is in a final state: `Full`, or `2-Way` between two DROthers (they never
//!   form an adjacency);
//! - no database exchange is under way (request and summary lists empty), and no LSA
//!   retransmission is pending that matters — flooding is done: an LSA a router has not passed
//!   on to a neighbour sits on that neighbour's retransmission list until acknowledged (also
//!   when the neighbour discarded it for arriving within MinLSArrival, to be sent again after
//!   the retransmit interval). An entry for an LSA instance the neighbour already holds (its
//!   database digest equals ours) is only an unacknowledged duplicate and does not count;
//! - no SPF run is scheduled (the last one ran after the last change);
//! - with an area border router in the lab (OSPFv2), the routes have been quiet for longer
//!   than ospfd's ABR task timer (see [`ABR_TASK_QUIET`]);
//! - the external routes are computed (OSPFv2): ospfd turns AS-external and NSSA LSAs into
//!   routes on a timer it sets at the end of each SPF run (`OSPF_ASE_CALC_INTERVAL`, 1 s), not
//!   in the run itself. A router holding such LSAs is not final until that timer has fired
//!   after its last SPF run: before, the externals its database holds are not routes yet (a
//!   lab redistributing RIP into OSPF reached nothing across the border for up to a second
//!   after every other state had settled).
//!
//! Adjacent routers' databases are not required to be equal on their own: FRR can keep them
//! apart for good with nothing left to send (over a virtual link, ASBR-summary LSAs of the
//! backbone are not passed on), and flooding still in progress always shows as a retransmission.
//!
//! An interface in `Waiting` with nobody else on its segment is no obstacle: it is advertised
//! as a stub network either way (RFC 2328, 12.4.1.2), so a host LAN that is not passive does
//! not hold the lab up for its 40 s wait timer. Two routers on one segment whose parameters
//! forbid an adjacency (different area, hello or dead interval, or the same address: each drops
//! the other's packets as its own) are reported, not waited for;
//! so is a `network` statement that matches no interface address (it enables nothing, and
//! nothing waits for it, but the lab's author meant something by it).

use super::model::{Assessment, ProtocolItem};
use super::net::{IpNet, NetView, same_segment};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// One interface the protocol runs on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct LsIface {
    pub name: String,
    /// `Waiting`, `DR`, `Backup`, `DROther`, `Point-To-Point`, `Loopback`, `Down`…
    pub state: String,
    pub area: String,
    /// Its address (OSPFv2), for matching segments by subnet.
    pub addr: Option<IpNet>,
    pub passive: bool,
    pub hello_ms: u64,
    pub dead_s: u64,
    /// `BROADCAST`, `POINTOPOINT`, `VIRTUALLINK`, `LOOPBACK`, `NBMA`… (upper case).
    pub network_type: String,
    pub nbr_count: u64,
    /// The far end's router id, for a virtual link.
    pub vlink_peer: Option<String>,
}

impl LsIface {
    fn speaks(&self) -> bool {
        !self.passive
            && !matches!(self.network_type.as_str(), "LOOPBACK" | "VIRTUALLINK")
            && self.state != "Loopback"
            && self.state != "Down"
    }

    fn point_to_point(&self) -> bool {
        self.network_type.contains("POINT")
    }
}

/// One neighbour.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct LsNeighbour {
    pub router_id: String,
    /// `Init`, `2-Way`, `ExStart`, `Exchange`, `Loading`, `Full`…
    pub state: String,
    /// Its role on the segment: `DR`, `Backup`, `DROther` (`-` on point-to-point links).
    pub role: String,
    /// Our interface it was heard on.
    pub iface: String,
    pub address: String,
    pub retransmit: u64,
    pub request: u64,
    pub summary: u64,
}

/// What one router's daemon reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct LinkState {
    pub router_id: String,
    /// Milliseconds until a scheduled SPF run (`None`: none scheduled).
    pub spf_due_ms: Option<u64>,
    pub ifaces: Vec<LsIface>,
    pub neighbours: Vec<LsNeighbour>,
    /// Digest of each area's database (which LSA instances it holds, not their ages).
    pub area_db: BTreeMap<String, u64>,
    /// Digest of the AS-scoped LSAs (externals).
    pub as_db: u64,
    /// How many AS-scoped LSAs it holds (none in a stub area, whatever the ABR holds).
    pub as_lsas: u64,
    /// How many LSAs it holds whose routes the external-route timer computes (AS-external
    /// and NSSA; OSPFv2 only, 0 for OSPFv3).
    pub externals: u64,
    /// Milliseconds since its last SPF run (`None`: unknown, or no run yet).
    pub spf_last_ms: Option<u64>,
    /// Its `network PREFIX area AREA` statements (OSPFv2).
    pub networks: Vec<(IpNet, String)>,
}

impl LinkState {
    fn iface(&self, name: &str) -> Option<&LsIface> {
        self.ifaces.iter().find(|i| i.name == name)
    }

    /// The area shared with a neighbour (through the interface it was heard on).
    fn area_towards(&self, n: &LsNeighbour) -> Option<&str> {
        self.iface(&n.iface).map(|i| i.area.as_str())
    }
}

/// How long after an SPF run its external routes may still be missing: ospfd's external-route
/// timer (1 s, `OSPF_ASE_CALC_INTERVAL` in ospf_ase.c) plus a margin for a busy host, where the
/// timer fires late.
const EXTERNAL_ROUTES_AFTER_MS: u64 = 1300;

/// How long an OSPFv2 lab with an area border router must stay quiet: ospfd runs its ABR task
/// (which originates the summary-LSAs of other areas and a stub area's default) on a 5 s timer
/// (`OSPF_ABR_TASK_DELAY` in ospf_abr.h) that some events set — an ABR receiving one of its
/// own summary-LSAs back during a database exchange, for one — and no state shows that timer.
/// Without this wait, routers of the backbone missed the summaries of the areas behind the
/// other ABR for ~5 s after readiness ended (1 run in 3 of a multi-area census lab). What sets
/// the timer there is not an adjacency change of an ABR (waiting 6.5 s after those only still
/// failed 1 run in 2): it follows the flooding, which shows as route and state changes, so the
/// whole lab's quiet period is lengthened. The margin covers a loaded host, where the timer
/// fires late. Cost: up to 6.5 s more for a multi-area lab.
pub(super) const ABR_TASK_QUIET: Duration = Duration::from_millis(6500);

/// The router has interfaces up in two areas or more: an area border router.
fn is_abr(st: &LinkState) -> bool {
    let areas: std::collections::BTreeSet<&str> = st
        .ifaces
        .iter()
        .filter(|i| i.state != "Down" && i.network_type != "VIRTUALLINK")
        // FRR writes a stub area as `0.0.0.1 [Stub]`.
        .filter_map(|i| i.area.split_whitespace().next())
        .collect();
    areas.len() >= 2
}

/// Digest of LSA headers, order-independent.
pub(super) fn digest(headers: &mut [String]) -> u64 {
    use std::hash::{Hash, Hasher};
    headers.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    headers.hash(&mut h);
    h.finish()
}

/// Judges one link-state protocol (`daemon` is `ospfd` or `ospf6d`) over the routers running it.
pub(super) fn assess(daemon: &str, routers: &[(&NetView, &LinkState)], a: &mut Assessment) {
    let by_rid: HashMap<&str, usize> = routers
        .iter()
        .enumerate()
        .filter(|(_, (_, s))| !s.router_id.is_empty())
        .map(|(i, (_, s))| (s.router_id.as_str(), i))
        .collect();
    if daemon == "ospfd" && routers.iter().any(|(_, st)| is_abr(st)) {
        a.need_quiet(ABR_TASK_QUIET);
    }
    for (i, (net, st)) in routers.iter().enumerate() {
        let dev = net.device.as_str();
        if let Some(ms) = st.spf_due_ms {
            a.block(ProtocolItem::new(
                dev,
                daemon,
                "SPF",
                format!("scheduled, due in {ms} ms"),
            ));
        } else if st.externals > 0
            && st
                .spf_last_ms
                .is_some_and(|ms| ms < EXTERNAL_ROUTES_AFTER_MS)
        {
            // A timer: the routes it computes show as a route change; its coming and going
            // alone restarts no quiet period (a VRRP lab waits 5 s after the last change).
            a.block_timer(ProtocolItem::new(
                dev,
                daemon,
                "external routes",
                format!(
                    "not computed yet ({} external LSAs; their routes follow each SPF run by 1 s)",
                    st.externals
                ),
            ));
        }
        for iface in &st.ifaces {
            interface(daemon, routers, i, iface, a);
        }
        for (prefix, area) in &st.networks {
            let matched = net
                .ifaces
                .values()
                .flatten()
                .any(|x| prefix.contains(x.addr));
            if !matched && !net.ifaces.is_empty() {
                a.cannot(ProtocolItem::new(
                    dev,
                    daemon,
                    format!("network {prefix} area {area}"),
                    format!("matches no interface address of {dev}: enables nothing"),
                ));
            }
        }
        for n in &st.neighbours {
            let subject = format!("neighbour {} ({})", n.router_id, n.iface);
            let ours = st.iface(&n.iface).map(|x| x.state.as_str()).unwrap_or("");
            let final_state = n.state == "Full"
                || (n.state == "2-Way" && ours == "DROther" && n.role == "DROther");
            let shown = if n.role.is_empty() || n.role == "-" {
                n.state.clone()
            } else {
                format!("{}/{}", n.state, n.role)
            };
            if !final_state {
                a.block(ProtocolItem::new(dev, daemon, subject, shown));
                continue;
            }
            if n.request > 0 || n.summary > 0 {
                a.block(ProtocolItem::new(
                    dev,
                    daemon,
                    subject,
                    format!(
                        "{shown}, {} LSAs requested, {} to describe",
                        n.request, n.summary
                    ),
                ));
                continue;
            }
            let peer = by_rid.get(n.router_id.as_str()).map(|&j| routers[j]);
            let area = st.area_towards(n).unwrap_or("");
            let same_db = |other: &LinkState| {
                st.area_db.get(area) == other.area_db.get(area)
                    && (st.as_db == other.as_db || st.as_lsas == 0 || other.as_lsas == 0)
            };
            if n.retransmit > 0 && !peer.is_some_and(|(_, p)| same_db(p)) {
                a.block(ProtocolItem::new(
                    dev,
                    daemon,
                    subject,
                    format!("{shown}, {} LSAs awaiting acknowledgement", n.retransmit),
                ));
                continue;
            }
            a.state(&ProtocolItem::new(dev, daemon, subject, shown));
        }
    }
}

/// One interface of router `i`: its state, and the neighbours its segment promises.
fn interface(
    daemon: &str,
    routers: &[(&NetView, &LinkState)],
    i: usize,
    iface: &LsIface,
    a: &mut Assessment,
) {
    let (net, st) = routers[i];
    let dev = net.device.as_str();
    let subject = format!("interface {}", iface.name);
    if iface.network_type == "VIRTUALLINK" {
        let peer = iface.vlink_peer.as_deref().unwrap_or("?");
        let item = ProtocolItem::new(dev, daemon, format!("virtual link to {peer}"), &iface.state);
        if iface.state == "Down" {
            a.block(item);
        } else {
            a.state(&item);
        }
        return;
    }
    if !iface.speaks() {
        a.state(&ProtocolItem::new(dev, daemon, subject, &iface.state));
        return;
    }
    let mut expected = 0;
    for (j, (pnet, p)) in routers.iter().enumerate() {
        for other in p.ifaces.iter().filter(|o| o.speaks()) {
            if !same_segment(
                net,
                &iface.name,
                iface.addr.as_ref(),
                pnet,
                &other.name,
                other.addr.as_ref(),
            ) {
                continue;
            }
            if let (Some(x), Some(y)) = (iface.addr, other.addr)
                && x.addr == y.addr
            {
                // Each drops the other's packets as its own: no adjacency, ever.
                if i < j {
                    a.cannot(ProtocolItem::new(
                        dev,
                        daemon,
                        format!("{} and {} {}", iface.name, pnet.device, other.name),
                        format!(
                            "share a segment and the address {}: cannot become neighbours (the lab's own duplicate address)",
                            x.addr
                        ),
                    ));
                }
                continue;
            }
            if let Some(why) = incompatible(iface, other) {
                if i < j {
                    a.cannot(ProtocolItem::new(
                        dev,
                        daemon,
                        format!("{} and {} {}", iface.name, pnet.device, other.name),
                        format!("share a segment but cannot become neighbours ({why})"),
                    ));
                }
                continue;
            }
            expected += 1;
            let heard = st
                .neighbours
                .iter()
                .any(|n| n.iface == iface.name && n.router_id == p.router_id);
            if !heard {
                let addr = other
                    .addr
                    .map(|x| format!(" ({})", x.addr))
                    .unwrap_or_default();
                a.block(ProtocolItem::new(
                    dev,
                    daemon,
                    subject.clone(),
                    format!("{}: no neighbour {}{addr} yet", iface.state, pnet.device),
                ));
            }
        }
    }
    let item = ProtocolItem::new(dev, daemon, subject, &iface.state);
    if iface.state == "Waiting" && (expected > 0 || iface.nbr_count > 0) {
        a.block(ProtocolItem {
            state: "Waiting (DR election not done: the interface's wait timer runs)".into(),
            ..item
        });
    } else {
        a.state(&item);
    }
}

/// Why two interfaces on one segment can never become neighbours, if they cannot.
fn incompatible(x: &LsIface, y: &LsIface) -> Option<String> {
    if x.area != y.area {
        return Some(format!("areas {} and {}", x.area, y.area));
    }
    if x.hello_ms != y.hello_ms && x.hello_ms > 0 && y.hello_ms > 0 {
        return Some(format!(
            "hello intervals {} ms and {} ms",
            x.hello_ms, y.hello_ms
        ));
    }
    if x.dead_s != y.dead_s && x.dead_s > 0 && y.dead_s > 0 {
        return Some(format!("dead intervals {} s and {} s", x.dead_s, y.dead_s));
    }
    if !x.point_to_point()
        && !y.point_to_point()
        && let (Some(p), Some(q)) = (x.addr, y.addr)
        && p.prefix != q.prefix
    {
        return Some(format!("network masks /{} and /{}", p.prefix, q.prefix));
    }
    None
}
