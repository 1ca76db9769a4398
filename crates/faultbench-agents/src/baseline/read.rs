//! Reading tool outputs. Every reader is forgiving: an output it does not understand yields
//! "unknown", never a finding.

use serde_json::Value;

/// One probed pair of `get_reachability`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairResult {
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// `ok`, `unstable`, `down`, `timeout` or `unknown`.
    pub status: String,
}

impl PairResult {
    /// The pair answered without loss.
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }
}

/// A `get_reachability` answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// The listed pairs (a long report may list only the failing ones).
    pub pairs: Vec<PairResult>,
    /// Pairs probed in total (`summary.pairs` when given, else the listed ones).
    pub total: usize,
    /// Hosts that took part.
    pub hosts: Vec<String>,
    /// Hosts the tool found without an address (`hosts_without_address`).
    pub unaddressed: Vec<String>,
}

/// Reads a `get_reachability` answer (`{"hosts": {…}, "summary": {…}, "results": [{src, dst,
/// status, …}]}`); pairs are found wherever they sit in the JSON.
pub fn reachability(text: &str) -> Reach {
    let Some(v) = json_in(text) else {
        return Reach::default();
    };
    let mut r = Reach::default();
    collect_pairs(&v, &mut r.pairs);
    r.total = v
        .pointer("/summary/pairs")
        .and_then(Value::as_u64)
        .map(|n| n as usize)
        .unwrap_or(r.pairs.len())
        .max(r.pairs.len());
    let mut hosts: Vec<String> = match v.get("hosts") {
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    for p in &r.pairs {
        for h in [&p.src, &p.dst] {
            if !hosts.contains(h) {
                hosts.push(h.clone());
            }
        }
    }
    r.hosts = hosts;
    r.unaddressed = v
        .get("hosts_without_address")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    r
}

fn collect_pairs(v: &Value, out: &mut Vec<PairResult>) {
    match v {
        Value::Object(m) => {
            let s = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
            if let (Some(src), Some(dst), Some(status)) = (s("src"), s("dst"), s("status")) {
                out.push(PairResult {
                    src,
                    dst,
                    status: status.to_ascii_lowercase(),
                });
            } else {
                m.values().for_each(|x| collect_pairs(x, out));
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_pairs(x, out)),
        Value::String(s) if s.trim_start().starts_with(['{', '[']) => {
            if let Ok(inner) = serde_json::from_str::<Value>(s) {
                collect_pairs(&inner, out);
            }
        }
        _ => {}
    }
}

/// The first JSON value in `text` (tools may add a footer after it).
fn json_in(text: &str) -> Option<Value> {
    let start = text.find(['{', '['])?;
    let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    de.next()?.ok()
}

/// Loss percentage from ping's summary line (`… 33% packet loss …`).
pub fn ping_loss(text: &str) -> Option<f64> {
    let idx = text.find("% packet loss")?;
    let head = &text[..idx];
    let num: String = head
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    num.parse().ok()
}

/// Interface facts from `ip addr` text (as inside `get_host_net_config`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostNet {
    /// Interfaces whose state is DOWN (or that lack UP among their flags), loopback excluded.
    pub down: Vec<String>,
    /// Global IPv4 addresses with prefix length, per interface.
    pub ipv4: Vec<(String, String)>,
    /// There is a default route.
    pub has_default: bool,
    /// The reader recognised `ip addr` output at all.
    pub understood: bool,
}

/// Reads `ip addr` / `ip route` output (possibly inside a JSON object, possibly escaped).
pub fn host_net(text: &str) -> HostNet {
    // The tool may return a JSON object whose fields hold the texts.
    let owned;
    let text = match json_in(text).filter(Value::is_object) {
        Some(Value::Object(m)) => {
            owned = m
                .values()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n");
            owned.as_str()
        }
        _ => text,
    };
    let mut h = HostNet::default();
    let mut current = String::new();
    for line in text.lines() {
        let t = line.trim();
        // `2: eth0@if5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 … state UP …`
        if let Some((_, rest)) = t
            .split_once(": ")
            .filter(|(idx, _)| !idx.is_empty() && idx.chars().all(|c| c.is_ascii_digit()))
        {
            {
                h.understood = true;
                let name = rest
                    .split(':')
                    .next()
                    .unwrap_or("")
                    .split('@')
                    .next()
                    .unwrap_or("");
                current = name.trim().to_string();
                let flags = rest
                    .split('<')
                    .nth(1)
                    .and_then(|r| r.split('>').next())
                    .unwrap_or("");
                let admin_up = flags.split(',').any(|f| f == "UP");
                let state_down =
                    rest.contains(" state DOWN") || flags.split(',').any(|f| f == "NO-CARRIER");
                if current != "lo" && (!admin_up || state_down) {
                    h.down.push(current.clone());
                }
                continue;
            }
        }
        if let Some(rest) = t.strip_prefix("inet ") {
            let addr = rest.split_whitespace().next().unwrap_or("");
            if !addr.starts_with("127.") && !current.is_empty() {
                h.ipv4.push((current.clone(), addr.to_string()));
            }
        }
        if t.starts_with("default via")
            || t.starts_with("default dev")
            || t.starts_with("0.0.0.0/0")
        {
            h.has_default = true;
        }
    }
    h
}

/// FRR `show interface brief`: interfaces whose status is `down`.
pub fn frr_down_interfaces(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols.len() >= 2 && cols[1].eq_ignore_ascii_case("down") && cols[0] != "lo")
                .then(|| cols[0].to_string())
        })
        .collect()
}

/// A routing daemon's answer to a `show` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DaemonView {
    /// vtysh says the daemon is not running.
    NotRunning,
    /// The daemon answered; the count of neighbours/sessions in each state class.
    Up {
        /// Neighbours fully up (OSPF Full/2-Way, BGP Established).
        up: usize,
        /// Neighbours listed but not up.
        down: usize,
    },
    /// Output not understood (or the command failed otherwise).
    Unknown,
}

fn not_running(text: &str) -> bool {
    let l = text.to_ascii_lowercase();
    l.contains("is not running") || l.contains("failed to connect to any daemons")
}

/// FRR `show ip ospf neighbor`.
pub fn ospf_neighbours(text: &str) -> DaemonView {
    if not_running(text) {
        return DaemonView::NotRunning;
    }
    if !text.contains("Neighbor ID") {
        return DaemonView::Unknown;
    }
    let (mut up, mut down) = (0, 0);
    for l in text
        .lines()
        .skip_while(|l| !l.contains("Neighbor ID"))
        .skip(1)
    {
        let cols: Vec<&str> = l.split_whitespace().collect();
        if cols.len() < 3 || cols[0].parse::<std::net::Ipv4Addr>().is_err() {
            continue;
        }
        if cols[2].starts_with("Full") || cols[2].starts_with("2-Way") {
            up += 1;
        } else {
            down += 1;
        }
    }
    DaemonView::Up { up, down }
}

/// FRR `show bgp summary`.
pub fn bgp_sessions(text: &str) -> DaemonView {
    if not_running(text) {
        return DaemonView::NotRunning;
    }
    if !text.contains("Neighbor") {
        return DaemonView::Unknown;
    }
    let (mut up, mut down) = (0, 0);
    for l in text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Neighbor"))
        .skip(1)
    {
        let cols: Vec<&str> = l.split_whitespace().collect();
        if cols.len() < 9 || !(cols[1] == "4" || cols[1] == "6") {
            continue;
        }
        // The State/PfxRcd column: a number (prefixes received) when Established.
        let state = cols[9.min(cols.len() - 1)];
        if state.parse::<u64>().is_ok() || state.starts_with('(') {
            up += 1;
        } else {
            down += 1;
        }
    }
    DaemonView::Up { up, down }
}

/// Routing daemons a `/etc/frr/daemons` file enables (`ospfd=yes`).
pub fn enabled_daemons(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            (v.trim().trim_matches('"') == "yes"
                && k.ends_with('d')
                && !k.contains(' ')
                && !k.starts_with('#'))
            .then(|| k.trim().to_string())
        })
        .collect()
}

/// Whether `netstat -tuln` output shows a socket listening on `port`.
pub fn listens_on(text: &str, port: u16) -> bool {
    let suffix = format!(":{port}");
    text.lines().any(|l| {
        let cols: Vec<&str> = l.split_whitespace().collect();
        cols.len() >= 4 && cols[0].starts_with(['t', 'u']) && cols[3].ends_with(&suffix)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachability_json() {
        let text = r#"{"hosts":{"pc1":"10.0.1.2","pc2":"10.0.2.2"},"results":[
            {"src":"pc1","dst":"pc2","dst_ip":"10.0.2.2","tx":2,"rx":0,"loss_percent":100,"status":"down"},
            {"src":"pc2","dst":"pc1","status":"ok"}]}
[note] something"#;
        let r = reachability(text);
        assert_eq!((r.pairs.len(), r.total), (2, 2));
        assert!(!r.pairs[0].ok() && r.pairs[1].ok());
        assert_eq!(r.hosts, vec!["pc1", "pc2"]);
        assert!(reachability("not json").pairs.is_empty());
        let cut = reachability(
            r#"{"hosts":{"a":"1.1.1.1"},"hosts_without_address":["b"],"summary":{"pairs":12,"ok":11},"results":[{"src":"a","dst":"c","status":"down"}]}"#,
        );
        assert_eq!(
            (cut.total, cut.unaddressed.clone()),
            (12, vec!["b".to_string()])
        );
    }

    #[test]
    fn ping_and_ip_addr() {
        assert_eq!(
            ping_loss("3 packets transmitted, 0 received, 100% packet loss, time 2ms"),
            Some(100.0)
        );
        assert_eq!(
            ping_loss("4 packets transmitted, 3 received, 25.5% packet loss"),
            Some(25.5)
        );
        assert_eq!(ping_loss("connect: Network is unreachable"), None);
        let h = host_net(
            "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN\n    inet 127.0.0.1/8 scope host lo\n\
             2: eth0@if7: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n    inet 10.0.1.2/24 brd 10.0.1.255 scope global eth0\n\
             3: eth1@if9: <BROADCAST,MULTICAST> mtu 1500 state DOWN\n\
             default via 10.0.1.1 dev eth0\n",
        );
        assert!(h.understood && h.has_default);
        assert_eq!(h.down, vec!["eth1"]);
        assert_eq!(
            h.ipv4,
            vec![("eth0".to_string(), "10.0.1.2/24".to_string())]
        );
        let j = host_net(
            r#"{"host_name":"pc1","ip_addr":"2: eth0: <UP,LOWER_UP> mtu 1500 state UP\n    inet 10.0.0.5/24 scope global eth0","ip_route":"10.0.0.0/24 dev eth0"}"#,
        );
        assert!(j.understood && !j.has_default && j.down.is_empty());
    }

    #[test]
    fn frr_outputs() {
        let ospf = "\nNeighbor ID     Pri State           Up Time         Dead Time Address         Interface                        RXmtL RqstL DBsmL\n\
                    2.2.2.2           1 Full/DR         1m02s             38.123s 10.0.12.2       eth1:10.0.12.1                       0     0     0\n\
                    3.3.3.3           1 Init/DROther    1m02s             38.123s 10.0.13.3       eth2:10.0.13.1                       0     0     0\n";
        assert_eq!(ospf_neighbours(ospf), DaemonView::Up { up: 1, down: 1 });
        assert_eq!(
            ospf_neighbours("ospfd is not running"),
            DaemonView::NotRunning
        );
        assert_eq!(
            ospf_neighbours("vtysh: command not found"),
            DaemonView::Unknown
        );
        let bgp = "IPv4 Unicast Summary:\nBGP router identifier 1.1.1.1, local AS number 65001 vrf-id 0\n\
                   Neighbor        V         AS   MsgRcvd   MsgSent   TblVer  InQ OutQ  Up/Down State/PfxRcd   PfxSnt Desc\n\
                   10.0.0.2        4      65002        10        12        0    0    0 00:05:01            3        4 N/A\n\
                   10.0.0.3        4      65003         0         0        0    0    0    never       Active        0 N/A\n";
        assert_eq!(bgp_sessions(bgp), DaemonView::Up { up: 1, down: 1 });
        let brief = "Interface       Status  VRF             Addresses\n---------       ------  ---             ---------\neth0            up      default         10.0.0.1/24\neth1            down    default         10.0.1.1/24\nlo              up      default\n";
        assert_eq!(frr_down_interfaces(brief), vec!["eth1"]);
        assert_eq!(
            enabled_daemons("zebra=yes\nospfd=yes\nbgpd=no\n# ripd=yes\n#isisd=yes\n"),
            vec!["ospfd"]
        );
        let ns = "Proto Recv-Q Send-Q Local Address  Foreign Address State\ntcp 0 0 0.0.0.0:80 0.0.0.0:* LISTEN\nudp 0 0 0.0.0.0:53 0.0.0.0:*\n";
        assert!(listens_on(ns, 80) && listens_on(ns, 53) && !listens_on(ns, 8));
    }
}
