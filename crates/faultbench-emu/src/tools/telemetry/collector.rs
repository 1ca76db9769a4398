//! The collector: samples every device of a lab every few seconds into a [`TelemetryStore`].
//!
//! One command per device and sample ([`SAMPLE_SCRIPT`], run with `sh -c` inside the device)
//! gives interface states and counters, the IPv4 routes, and the process names. They become
//! four measurements:
//!
//! | measurement | tags | fields |
//! |---|---|---|
//! | `interface` | device, interface | oper_state, up, carrier, mtu, rx/tx bytes, packets, errors, dropped |
//! | `routes` | device | total, default_route, and one count per protocol (kernel, static, ospf, bgp, rip, …) |
//! | `processes` | device, process | running, count — for routing daemons and services once seen on the device |
//! | `device` | device | reachable (the sample command ran), sample_ms |
//!
//! A daemon that disappears keeps being reported with `running = false`, so a crash before the
//! ticket arrived is visible afterwards.

use super::store::{Point, TelemetryStore};
use faultbench_core::{Command, Lab};
use futures_util::stream::{self, StreamExt};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The script run in each device per sample. Parts are separated by a line `@@`.
pub const SAMPLE_SCRIPT: &str = "ip -j -s link show 2>/dev/null; echo @@; ip -j -4 route show 2>/dev/null; echo @@; ps -e -o comm= 2>/dev/null";

/// Process names worth tracking: routing daemons and the services labs run.
pub const WATCHED_PROCESSES: [&str; 24] = [
    "zebra",
    "ospfd",
    "ospf6d",
    "bgpd",
    "ripd",
    "ripngd",
    "isisd",
    "staticd",
    "bfdd",
    "ldpd",
    "pimd",
    "vrrpd",
    "watchfrr",
    "dnsmasq",
    "named",
    "nginx",
    "apache2",
    "lighttpd",
    "dhcpd",
    "dhcrelay",
    "keepalived",
    "sshd",
    "influxd",
    "iperf3",
];

/// Processes seen per device so far (a seen process that vanishes is reported as stopped).
pub type SeenProcesses = HashMap<String, BTreeSet<String>>;

/// A running collector. Dropping it (or calling [`Collector::stop`]) ends sampling.
#[derive(Debug)]
pub struct Collector {
    task: tokio::task::JoinHandle<()>,
}

impl Collector {
    /// Samples `lab` now and then every `interval` into `store`, until stopped.
    pub fn start(lab: Arc<dyn Lab>, store: Arc<TelemetryStore>, interval: Duration) -> Collector {
        let task = tokio::spawn(async move {
            let mut seen = SeenProcesses::new();
            let mut tick = tokio::time::interval(interval.max(Duration::from_millis(100)));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                sample(lab.as_ref(), &store, &mut seen).await;
            }
        });
        Collector { task }
    }

    /// Stops sampling.
    pub fn stop(self) {
        self.task.abort();
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Takes one sample of every device (in parallel) and returns the number of points written.
pub async fn sample(lab: &dyn Lab, store: &TelemetryStore, seen: &mut SeenProcesses) -> usize {
    let devices = lab.devices();
    let outputs: Vec<(String, Option<String>, u64)> = stream::iter(devices)
        .map(|d| async move {
            let started = Instant::now();
            let out = lab
                .exec(&d, &Command::shell(SAMPLE_SCRIPT), Duration::from_secs(5))
                .await;
            let ms = started.elapsed().as_millis() as u64;
            let text = out.ok().filter(|o| !o.timed_out).map(|o| o.stdout);
            (d, text, ms)
        })
        .buffered(16)
        .collect()
        .await;
    let t = now_ms();
    let mut written = 0;
    for (device, text, ms) in outputs {
        let mut points = vec![
            Point::new("device", t)
                .tag("device", &device)
                .field("reachable", text.is_some())
                .field("sample_ms", ms as i64),
        ];
        if let Some(text) = text {
            let parts = split_parts(&text);
            if let Some(links) = parts.first() {
                points.extend(interface_points(&device, links, t));
            }
            if let Some(routes) = parts.get(1) {
                points.extend(route_point(&device, routes, t));
            }
            if let Some(ps) = parts.get(2) {
                let seen_here = seen.entry(device.clone()).or_default();
                points.extend(process_points(&device, ps, seen_here, t));
            }
        }
        written += points.len();
        for p in points {
            store.insert(p);
        }
    }
    written
}

/// Splits the sample output at the `@@` separator lines.
fn split_parts(text: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    for line in text.lines() {
        if line.trim() == "@@" {
            parts.push(String::new());
        } else if let Some(last) = parts.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    parts
}

fn interface_points(device: &str, json: &str, t: u64) -> Vec<Point> {
    let Ok(Value::Array(links)) = serde_json::from_str::<Value>(json.trim()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for l in links {
        let Some(name) = l["ifname"].as_str() else {
            continue;
        };
        if name == "lo" {
            continue;
        }
        let flags: Vec<&str> = l["flags"]
            .as_array()
            .map(|f| f.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut p = Point::new("interface", t)
            .tag("device", device)
            .tag("interface", name)
            .field("oper_state", l["operstate"].as_str().unwrap_or("UNKNOWN"))
            .field("up", flags.contains(&"UP"))
            .field("carrier", flags.contains(&"LOWER_UP"));
        if let Some(mtu) = l["mtu"].as_i64() {
            p = p.field("mtu", mtu);
        }
        for dir in ["rx", "tx"] {
            for k in ["bytes", "packets", "errors", "dropped"] {
                if let Some(v) = l["stats64"][dir][k].as_i64() {
                    p = p.field(format!("{dir}_{k}"), v);
                }
            }
        }
        out.push(p);
    }
    out
}

fn route_point(device: &str, json: &str, t: u64) -> Option<Point> {
    let Ok(Value::Array(routes)) = serde_json::from_str::<Value>(json.trim()) else {
        return None;
    };
    let mut by_proto: BTreeMap<String, i64> = BTreeMap::new();
    for r in &routes {
        let proto = r["protocol"].as_str().unwrap_or("boot").to_string();
        *by_proto.entry(proto).or_default() += 1;
    }
    let mut p = Point::new("routes", t)
        .tag("device", device)
        .field("total", routes.len() as i64)
        .field(
            "default_route",
            routes.iter().any(|r| r["dst"] == "default"),
        );
    for (proto, n) in by_proto {
        p = p.field(proto, n);
    }
    Some(p)
}

fn process_points(device: &str, ps: &str, seen: &mut BTreeSet<String>, t: u64) -> Vec<Point> {
    let mut counts: BTreeMap<&str, i64> = BTreeMap::new();
    for name in ps.lines().map(str::trim) {
        if let Some(w) = WATCHED_PROCESSES.iter().find(|w| **w == name) {
            *counts.entry(w).or_default() += 1;
        }
    }
    for name in counts.keys() {
        seen.insert(name.to_string());
    }
    seen.iter()
        .map(|name| {
            let n = counts.get(name.as_str()).copied().unwrap_or(0);
            Point::new("processes", t)
                .tag("device", device)
                .tag("process", name)
                .field("running", n > 0)
                .field("count", n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_links_routes_and_processes() {
        let links = r#"[{"ifname":"lo","flags":["LOOPBACK","UP"]},
            {"ifname":"eth0","flags":["BROADCAST","UP","LOWER_UP"],"mtu":1500,"operstate":"UP",
             "stats64":{"rx":{"bytes":10,"packets":1,"errors":0,"dropped":0},"tx":{"bytes":20,"packets":2,"errors":0,"dropped":3}}}]"#;
        let p = interface_points("r1", links, 5);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].tags["interface"], "eth0");
        assert_eq!(p[0].fields["tx_dropped"], 3i64.into());
        assert_eq!(p[0].fields["carrier"], true.into());

        let routes = r#"[{"dst":"default","gateway":"10.0.0.1"},{"dst":"10.0.0.0/24","protocol":"kernel"},{"dst":"10.1.0.0/24","protocol":"ospf"}]"#;
        let r = route_point("r1", routes, 5).unwrap();
        assert_eq!(r.fields["total"], 3i64.into());
        assert_eq!(r.fields["ospf"], 1i64.into());
        assert_eq!(r.fields["default_route"], true.into());

        let mut seen = BTreeSet::new();
        let p = process_points("r1", "bash\nzebra\nospfd\n", &mut seen, 5);
        assert_eq!(p.len(), 2);
        let p = process_points("r1", "zebra\n", &mut seen, 6);
        let ospfd = p.iter().find(|p| p.tags["process"] == "ospfd").unwrap();
        assert_eq!(ospfd.fields["running"], false.into());
    }
}
