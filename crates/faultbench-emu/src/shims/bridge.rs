//! The `bridge` wrapper: `bridge vlan add|del|show` on a kernel without bridge VLAN filtering
//! act on the emulated VLAN tables of [`super::brvlan`]; every other `bridge` command is the
//! real one.

use super::brvlan::{self, BridgeVlans, VidFlags};
use super::realbin;
use super::{shim_caps, unsupported};
use crate::hostcaps::Feature;
use std::collections::BTreeMap;
use std::ffi::OsString;

/// Entry point of the `bridge` wrapper.
pub fn main(argv0: &OsString, args: &[OsString]) -> i32 {
    let s: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if !shim_caps().has(Feature::BridgeVlanFiltering)
        && let Some(code) = handle(&s)
    {
        return code;
    }
    let e = realbin::exec("bridge", argv0, args);
    eprintln!("faultbench-netshim: cannot run the real bridge: {e}");
    127
}

fn handle(args: &[String]) -> Option<i32> {
    let mut i = 0;
    let mut json = false;
    while i < args.len() && args[i].starts_with('-') {
        let o = args[i].trim_start_matches('-');
        match o {
            "j" | "json" => json = true,
            "p" | "pretty" | "c" | "compressvlans" | "d" | "details" | "color" => {}
            // Statistics, namespaces, batches: not modelled, the real tool answers.
            _ => return None,
        }
        i += 1;
    }
    let obj = args.get(i)?;
    if !super::ip::matches(obj, "vlan") {
        return None;
    }
    let verb = args.get(i + 1).map(String::as_str).unwrap_or("show");
    let rest = &args[(i + 2).min(args.len())..];
    if super::ip::matches(verb, "add") {
        Some(modify(rest, true))
    } else if super::ip::matches(verb, "delete") {
        Some(modify(rest, false))
    } else if super::ip::matches(verb, "show") || super::ip::matches(verb, "list") || verb == "lst"
    {
        Some(show(rest, json))
    } else {
        None
    }
}

/// Bridges and their ports as the kernel has them now.
fn topology() -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let Ok(c) = realbin::capture("ip", &["-j", "-d", "link", "show"]) else {
        return m;
    };
    let v: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap_or_default();
    let links = v.as_array().cloned().unwrap_or_default();
    for l in &links {
        if l["linkinfo"]["info_kind"] == "bridge"
            && let Some(n) = l["ifname"].as_str()
        {
            m.entry(n.to_string()).or_default();
        }
    }
    for l in &links {
        if let (Some(n), Some(master)) = (l["ifname"].as_str(), l["master"].as_str())
            && let Some(ports) = m.get_mut(master)
        {
            ports.push(n.to_string());
        }
    }
    m
}

/// The VLAN state of `bridge` as the kernel would report it: stored tables, default tables for
/// ports that have none (every bridge port starts with the default PVID, filtering or not).
fn view(bridge: &str, ports: &[String]) -> Option<BridgeVlans> {
    let mut s = brvlan::load(bridge).or_else(|| brvlan::fresh(bridge))?;
    for p in ports {
        s.ports.entry(p.clone()).or_insert_with(|| {
            let mut t = brvlan::VlanTable::new();
            if s.default_pvid != 0 {
                t.insert(
                    s.default_pvid,
                    VidFlags {
                        pvid: true,
                        untagged: true,
                    },
                );
            }
            t
        });
    }
    s.ports.retain(|p, _| ports.contains(p));
    Some(s)
}

fn modify(rest: &[String], add: bool) -> i32 {
    let mut dev = None;
    let mut vids = None;
    let mut flags = VidFlags::default();
    let mut own = false;
    let mut i = 0;
    while i < rest.len() {
        match rest[i].as_str() {
            "dev" => {
                dev = rest.get(i + 1).cloned();
                i += 1;
            }
            "vid" => {
                let v = rest.get(i + 1).cloned().unwrap_or_default();
                match brvlan::parse_vids(&v) {
                    Some(list) => vids = Some(list),
                    None => {
                        eprintln!("Invalid VLAN range \"{v}\"");
                        return 255;
                    }
                }
                i += 1;
            }
            "pvid" => flags.pvid = true,
            "untagged" => flags.untagged = true,
            "self" => own = true,
            "master" => {}
            other => {
                return unsupported(&format!(
                    "`bridge vlan` option `{other}` on an emulated VLAN-filtering bridge"
                ));
            }
        }
        i += 1;
    }
    let (Some(dev), Some(vids)) = (dev, vids) else {
        eprintln!("Device and VLAN ID are required arguments.");
        return 255;
    };
    let topo = topology();
    let (bridge, port) = if topo.contains_key(&dev) {
        (dev.clone(), None)
    } else if let Some((b, _)) = topo.iter().find(|(_, ps)| ps.contains(&dev)) {
        if own {
            // `self` on a port means the port's own driver; no driver here offloads VLANs.
            eprintln!("RTNETLINK answers: Operation not supported");
            return 255;
        }
        (b.clone(), Some(dev.clone()))
    } else if super::sys::ifindex(&dev).is_none() {
        eprintln!("Cannot find device \"{dev}\"");
        return 1;
    } else {
        eprintln!("RTNETLINK answers: Operation not supported");
        return 255;
    };
    let Some(mut s) = view(&bridge, &topo[&bridge]) else {
        eprintln!("Cannot find device \"{bridge}\"");
        return 1;
    };
    let table = match &port {
        Some(p) => s.ports.entry(p.clone()).or_default(),
        None => &mut s.own,
    };
    if add {
        if flags.pvid {
            for f in table.values_mut() {
                f.pvid = false;
            }
        }
        for v in &vids {
            table.insert(*v, flags);
        }
    } else {
        if vids.iter().any(|v| !table.contains_key(v)) {
            eprintln!("RTNETLINK answers: No such file or directory");
            return 255;
        }
        for v in &vids {
            table.remove(v);
        }
    }
    match brvlan::commit(s) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            2
        }
    }
}

fn show(rest: &[String], json: bool) -> i32 {
    let mut dev = None;
    let mut i = 0;
    while i < rest.len() {
        if rest[i] == "dev" {
            dev = rest.get(i + 1).cloned();
            i += 1;
        }
        i += 1;
    }
    if let Some(d) = &dev
        && super::sys::ifindex(d).is_none()
    {
        eprintln!("Cannot find device \"{d}\"");
        return 255;
    }
    let topo = topology();
    let states: Vec<BridgeVlans> = topo.iter().filter_map(|(b, ps)| view(b, ps)).collect();
    if json {
        print!("{}", render_json(&states, dev.as_deref()));
    } else {
        print!("{}", brvlan::render_show(&states, dev.as_deref()));
    }
    0
}

fn render_json(states: &[BridgeVlans], only: Option<&str>) -> String {
    let mut items = Vec::new();
    for s in states {
        let mut entries: Vec<(u32, &String, &brvlan::VlanTable)> = s
            .ports
            .iter()
            .map(|(n, t)| (super::sys::ifindex(n).unwrap_or(u32::MAX), n, t))
            .collect();
        entries.push((s.ifindex, &s.bridge, &s.own));
        entries.sort_by_key(|e| e.0);
        for (_, name, table) in entries {
            if only.is_some_and(|d| d != name.as_str()) || table.is_empty() {
                continue;
            }
            let vlans: Vec<serde_json::Value> = table
                .iter()
                .map(|(vid, f)| {
                    let mut o = serde_json::json!({ "vlan": vid });
                    let mut fl = Vec::new();
                    if f.pvid {
                        fl.push("PVID");
                    }
                    if f.untagged {
                        fl.push("Egress Untagged");
                    }
                    if !fl.is_empty() {
                        o["flags"] = serde_json::json!(fl);
                    }
                    o
                })
                .collect();
            items.push(serde_json::json!({ "ifname": name, "vlans": vlans }));
        }
    }
    format!("{}\n", serde_json::Value::Array(items))
}
