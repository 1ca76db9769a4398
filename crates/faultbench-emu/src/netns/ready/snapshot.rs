//! One poll of one device: which daemons run, what they report, and its kernel routes.

use super::bgp::{self, BgpState};
use super::bgp_config;
use super::eigrp::{self, EigrpState};
use super::flap::{RouteTable, route_table};
use super::isis::{self, Adjacency};
use super::linkstate::LinkState;
use super::model::ProtocolItem;
use super::net::{self, IpNet, NetView};
use super::rip::{self, RipState};
use super::vty::{DeviceSocket, vty_command, vty_enable_command};
use super::{ospf, ospf6};
use crate::netns::health::read_lab_file;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// Longest wait for one daemon's answer.
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// One device to watch (every device of the lab: hosts own addresses BGP peers may point at).
#[derive(Debug)]
pub(crate) struct Watched {
    pub device: String,
    /// Host PID of the device's PID 1 (its files are under `/proc/<pid>/root`).
    pub pid: i32,
    /// `ethN` → collision domain, from lab.conf.
    pub domains: HashMap<String, String>,
    /// keepalived runs: the longest time a VRRP backup waits before taking over.
    pub vrrp_wait: Option<Duration>,
    /// Running configurations read once (daemon → text): what the JSON does not show.
    configs: std::sync::Mutex<HashMap<&'static str, std::sync::Arc<OnceLock<Option<String>>>>>,
    /// zebra's interfaces with their addresses, once they have some: the startup files have
    /// run when readiness starts, and re-reading them costs a query per device and poll.
    ifaces: OnceLock<HashMap<String, Vec<IpNet>>>,
    /// bgpd's `show bgp neighbors json`, kept while `show bgp summary json` lists every
    /// neighbour it names (the summary then has their fresh state).
    bgp_neighbours: std::sync::Mutex<Option<Value>>,
}

impl Watched {
    /// Watches `device` (PID 1 `pid`), whose lab.conf interfaces sit on `domains`.
    pub(crate) fn new(device: &str, pid: i32, domains: HashMap<String, String>) -> Self {
        let root = PathBuf::from(format!("/proc/{pid}/root"));
        // The device's files, read without following links out of it.
        let vrrp_wait = read_lab_file(&root, "run/keepalived.pid")
            .is_some()
            .then(|| vrrp_takeover(&root));
        Watched {
            device: device.to_string(),
            pid,
            domains,
            vrrp_wait,
            configs: Default::default(),
            ifaces: OnceLock::new(),
            bgp_neighbours: Default::default(),
        }
    }

    /// `daemon`'s vty socket, found inside the device (an agent may have put a link there).
    fn socket(&self, daemon: &str) -> std::io::Result<DeviceSocket> {
        DeviceSocket::open(self.pid, daemon)
    }

    /// The device runs FRR or keepalived (something that converges).
    pub(crate) fn routes(&self) -> bool {
        self.vrrp_wait.is_some()
            || PathBuf::from(format!("/proc/{}/root/run/frr", self.pid)).is_dir()
    }

    /// `daemon`'s running configuration, read once (asked again while the daemon does not
    /// answer).
    async fn config(&self, daemon: &'static str) -> Option<String> {
        let cell = {
            let mut m = self.configs.lock().unwrap_or_else(|e| e.into_inner());
            m.entry(daemon).or_default().clone()
        };
        if let Some(c) = cell.get() {
            return c.clone();
        }
        let text = match self.socket(daemon) {
            Ok(socket) => vty_enable_command(&socket.path(), "show running-config", QUERY_TIMEOUT)
                .await
                .ok(),
            Err(_) => None,
        };
        if text.is_some() {
            let _ = cell.set(text.clone());
        }
        text
    }
}

/// A VRRP backup takes over after three advertisement intervals plus a skew below one second;
/// the longest `advert_int` of the device's `/etc/keepalived/keepalived.conf` (under `root`,
/// reached without links) decides (1 s when unset), plus a margin.
pub(super) fn vrrp_takeover(root: &std::path::Path) -> Duration {
    let advert = read_lab_file(root, "etc/keepalived/keepalived.conf")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("advert_int"))
                .then(|| w.next().and_then(|v| v.parse::<f64>().ok()))
                .flatten()
        })
        .fold(1.0f64, f64::max);
    Duration::from_secs_f64(3.0 * advert + 2.0)
}

/// What one poll of one device found.
#[derive(Debug, Default)]
pub(super) struct Snapshot {
    pub net: NetView,
    /// The kernel's routes, by prefix.
    pub routes: RouteTable,
    /// Digest of the local addresses where a VIP may move (keepalived runs), else 0.
    pub vips: u64,
    pub daemons: Vec<&'static str>,
    pub ospf: Option<LinkState>,
    pub ospf6: Option<LinkState>,
    pub bgp: Option<BgpState>,
    pub rip: Option<RipState>,
    pub ripng: Option<RipState>,
    pub eigrp: Option<EigrpState>,
    pub isis: Option<Vec<Adjacency>>,
    pub vrrp_wait: Option<Duration>,
    /// Daemons that did not answer.
    pub silent: Vec<ProtocolItem>,
}

const DAEMONS: [&str; 8] = [
    "zebra", "ospfd", "ospf6d", "bgpd", "ripd", "ripngd", "eigrpd", "isisd",
];

/// Polls one device.
pub(super) async fn take(w: &Watched) -> Snapshot {
    let proc_net =
        |f: &str| std::fs::read_to_string(format!("/proc/{}/net/{f}", w.pid)).unwrap_or_default();
    let trie = proc_net("fib_trie");
    let (local, link_local) = net::parse_local_addrs(&trie, &proc_net("if_inet6"));
    let mut s = Snapshot {
        net: NetView {
            device: w.device.clone(),
            domains: w.domains.clone(),
            local,
            link_local,
            ..NetView::default()
        },
        vrrp_wait: w.vrrp_wait,
        ..Snapshot::default()
    };
    s.daemons = DAEMONS
        .into_iter()
        .filter(|d| w.socket(d).is_ok())
        .collect();
    if !s.daemons.is_empty() {
        daemons(w, &mut s).await;
    }
    // The kernel's routes are read after the daemons answered: routes a daemon installs after
    // its state looked final still show as a change, and restart the quiet period.
    s.routes = route_table(&proc_net("route"), &proc_net("ipv6_route"));
    if w.vrrp_wait.is_some() {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        proc_net("fib_trie").hash(&mut h);
        s.vips = h.finish();
    }
    s
}

/// Asks every daemon of the device for its state.
async fn daemons(w: &Watched, s: &mut Snapshot) {
    let mut q = Querier {
        w,
        silent: Vec::new(),
    };
    if let Some(cached) = w.ifaces.get() {
        s.net.ifaces = cached.clone();
    } else if let Some(v) = q.json("zebra", "show interface brief json").await {
        s.net.ifaces = net::parse_interface_brief(&v);
        // Kept once zebra knows every address the kernel has: a zebra that has just started
        // may list some interfaces before it read all their addresses, and a view missing one
        // would be kept for good (RIP then never matched the neighbour speaking from it).
        let known = |ip: &std::net::IpAddr| s.net.ifaces.values().flatten().any(|n| n.addr == *ip);
        let complete = s
            .net
            .local
            .iter()
            .filter(|ip| !matches!(ip, std::net::IpAddr::V6(v6) if v6.is_unicast_link_local()))
            .all(known);
        if complete && s.net.ifaces.values().any(|a| !a.is_empty()) {
            let _ = w.ifaces.set(s.net.ifaces.clone());
        }
    }
    if s.daemons.contains(&"ospfd") {
        let [a, b, c] = ospf::COMMANDS;
        let (i, f, n) = (
            q.json("ospfd", a).await,
            q.json("ospfd", b).await,
            q.json("ospfd", c).await,
        );
        if let (Some(i), Some(f), Some(n)) = (i, f, n) {
            s.ospf = ospf::parse(&i, &f, &n);
            if let Some(st) = s.ospf.as_mut() {
                st.networks =
                    ospf::network_statements(&w.config("ospfd").await.unwrap_or_default());
            }
        }
    }
    if s.daemons.contains(&"ospf6d") {
        let [a, b, c, d] = ospf6::COMMANDS;
        let (i, f, n, db) = (
            q.json("ospf6d", a).await,
            q.json("ospf6d", b).await,
            q.json("ospf6d", c).await,
            q.json("ospf6d", d).await,
        );
        if let (Some(i), Some(f), Some(n), Some(db)) = (i, f, n, db) {
            let passive = ospf6::passive_interfaces(&w.config("ospf6d").await.unwrap_or_default());
            s.ospf6 = ospf6::parse(&i, &f, &n, &db, &passive);
        }
    }
    if s.daemons.contains(&"bgpd") {
        s.bgp = bgp_state(&mut q).await;
    }
    for (daemon, routes, status) in [
        ("ripd", "show ip rip", "show ip rip status"),
        ("ripngd", "show ipv6 ripng", "show ipv6 ripng status"),
    ] {
        if !s.daemons.contains(&daemon) {
            continue;
        }
        if let (Some(r), Some(st)) = (q.text(daemon, routes).await, q.text(daemon, status).await) {
            let state = Some(rip::parse(&r, &st)).filter(RipState::configured);
            if daemon == "ripd" {
                s.rip = state;
            } else {
                s.ripng = state;
            }
        }
    }
    if s.daemons.contains(&"eigrpd")
        && let Some(config) = w
            .config("eigrpd")
            .await
            .as_deref()
            .and_then(eigrp::parse_config)
        && let (Some(n), Some(t)) = (
            q.text("eigrpd", "show ip eigrp neighbors").await,
            q.text("eigrpd", "show ip eigrp topology").await,
        )
    {
        s.eigrp = Some(EigrpState {
            config,
            neighbours: eigrp::parse_neighbours(&n),
            unsettled: eigrp::parse_topology(&t),
        });
    }
    if s.daemons.contains(&"isisd")
        && let Some(v) = q.json("isisd", "show isis neighbor json").await
    {
        let adj = isis::parse(&v);
        s.isis = (!adj.is_empty() || v["areas"].as_array().is_some_and(|a| !a.is_empty()))
            .then_some(adj);
    }
    s.silent = q.silent;
}

/// bgpd's neighbours, sessions and update groups; for each peer that is not up, whether the
/// device has a route to it.
async fn bgp_state(q: &mut Querier<'_>) -> Option<BgpState> {
    let summary = q.json("bgpd", "show bgp summary json").await?;
    let listed = |n: &Value| {
        n.as_object().is_some_and(|m| {
            m.keys().all(|k| {
                summary
                    .as_object()
                    .into_iter()
                    .flatten()
                    .any(|(_, af)| af["peers"].get(k).is_some())
            })
        })
    };
    let cached =
        q.w.bgp_neighbours
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
    let neighbours = match cached {
        Some(n) if listed(&n) => n,
        _ => {
            let n = q.json("bgpd", "show bgp neighbors json").await?;
            *q.w.bgp_neighbours.lock().unwrap_or_else(|e| e.into_inner()) = Some(n.clone());
            n
        }
    };
    let mut st = bgp::parse(&neighbours, &summary);
    if st.peers.is_empty() {
        return None;
    }
    let families: Vec<String> = st.table_version.keys().cloned().collect();
    for family in families {
        if let Some(cmd) = bgp::update_groups_command(&family)
            && let Some(text) = q.text("bgpd", &cmd).await
        {
            st.subgroups
                .extend(bgp::parse_update_groups(&family, &text));
        }
    }
    if let Some(text) = q.text("bgpd", "show work-queues").await {
        st.processing = bgp::parse_work_queues(&text);
    }
    // Every speaker's configuration, also where all its sessions are up: a neighbour of another
    // router that it does not name shows nowhere else.
    st.config =
        q.w.config("bgpd")
            .await
            .as_deref()
            .and_then(bgp_config::parse);
    for p in st.peers.iter_mut().filter(|p| p.state != "Established") {
        let Some(addr) = p.addr() else { continue };
        let cmd = if addr.is_ipv4() {
            format!("show ip route {addr} json")
        } else {
            format!("show ipv6 route {addr} json")
        };
        if let Some(v) = q.json("zebra", &cmd).await {
            p.routed = Some(v.as_object().is_some_and(|m| !m.is_empty()));
        }
    }
    Some(st)
}

/// Sends commands to one device's daemons, remembering the ones that did not answer.
struct Querier<'a> {
    w: &'a Watched,
    silent: Vec<ProtocolItem>,
}

impl Querier<'_> {
    async fn text(&mut self, daemon: &'static str, cmd: &str) -> Option<String> {
        let answer = match self.w.socket(daemon) {
            Ok(socket) => vty_command(&socket.path(), cmd, QUERY_TIMEOUT).await,
            Err(e) => Err(e),
        };
        match answer {
            Ok(t) => Some(t),
            Err(e) => {
                let item = ProtocolItem::new(
                    &self.w.device,
                    daemon,
                    "vty",
                    format!("not answering ({e})"),
                );
                if !self.silent.contains(&item) {
                    self.silent.push(item);
                }
                None
            }
        }
    }

    async fn json(&mut self, daemon: &'static str, cmd: &str) -> Option<Value> {
        let t = self.text(daemon, cmd).await?;
        Some(serde_json::from_str(&t).unwrap_or(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vrrp_takeover_follows_the_slowest_advert_interval() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("etc/keepalived")).unwrap();
        std::fs::write(
            d.path().join("etc/keepalived/keepalived.conf"),
            "vrrp_instance A {\n  advert_int 1\n}\nvrrp_instance B {\n advert_int 3\n}\n",
        )
        .unwrap();
        assert_eq!(vrrp_takeover(d.path()), Duration::from_secs(11));
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(vrrp_takeover(empty.path()), Duration::from_secs(5));
    }

    #[test]
    fn keepalived_conf_is_not_read_through_links_out_of_the_device() {
        // Someone in the device points its configuration (or its folder) at a file outside.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("conf"), "advert_int 100\n").unwrap();
        let dev = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dev.path().join("etc/keepalived")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("conf"),
            dev.path().join("etc/keepalived/keepalived.conf"),
        )
        .unwrap();
        assert_eq!(vrrp_takeover(dev.path()), Duration::from_secs(5));
        let dev2 = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dev2.path().join("etc")).unwrap();
        std::fs::create_dir_all(outside.path().join("keepalived")).unwrap();
        std::fs::write(
            outside.path().join("keepalived/keepalived.conf"),
            "advert_int 100\n",
        )
        .unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("keepalived"),
            dev2.path().join("etc/keepalived"),
        )
        .unwrap();
        assert_eq!(vrrp_takeover(dev2.path()), Duration::from_secs(5));
    }
}
