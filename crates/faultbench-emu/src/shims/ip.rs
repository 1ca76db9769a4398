//! The `ip` wrapper: emulates `ip link add/del/set` for link types the kernel lacks and shows
//! emulated links the way the kernel would; hands everything else to the real `ip` untouched.

use super::iprender;
use super::portd::{self, PortdSpec};
use super::realbin;
use super::state::{self, LinkKind};
use super::sys;
use super::{shim_caps, unsupported};
use crate::hostcaps::{Feature, HostCaps};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;

/// Global options of `ip` that take a value.
const OPTS_WITH_VALUE: [&str; 5] = ["b", "batch", "f", "family", "l"];

/// `ip` options after parsing: the global flags (as given) and the rest.
pub(super) struct Parsed {
    pub globals: Vec<String>,
    pub rest: Vec<String>,
}

/// iproute2 accepts any prefix of an option, `-` or `--`.
fn opt_matches(arg: &str, long: &str, min: usize) -> bool {
    let a = arg.trim_start_matches('-');
    a.len() >= min && long.starts_with(a)
}

/// iproute2's `matches()`: `arg` is a non-empty prefix of `word`.
pub(super) fn matches(arg: &str, word: &str) -> bool {
    !arg.is_empty() && word.starts_with(arg)
}

pub(super) fn parse_globals(args: &[String]) -> Option<Parsed> {
    let mut globals = Vec::new();
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') && args[i].len() > 1 {
        let a = args[i].clone();
        let bare = a.trim_start_matches('-');
        // Options we cannot reason about: namespaces, batches, loops, rcvbuf.
        if opt_matches(&a, "netns", 1)
            || opt_matches(&a, "batch", 1)
            || opt_matches(&a, "loops", 1)
            || opt_matches(&a, "rcvbuf", 2)
            || opt_matches(&a, "force", 5)
        {
            return None;
        }
        let takes = OPTS_WITH_VALUE.contains(&bare) || opt_matches(&a, "family", 1);
        globals.push(a);
        if takes {
            i += 1;
            globals.push(args.get(i)?.clone());
        }
        i += 1;
    }
    Some(Parsed {
        globals,
        rest: args[i..].to_vec(),
    })
}

/// Entry point of the `ip` wrapper.
pub fn main(argv0: &OsString, args: &[OsString]) -> i32 {
    let Some(s) = to_strings(args) else {
        return pass(argv0, args);
    };
    let caps = shim_caps();
    if let Some(code) = batch(&s) {
        return code;
    }
    let Some(p) = parse_globals(&s) else {
        return pass(argv0, args);
    };
    let Some(object) = p.rest.first() else {
        return pass(argv0, args);
    };
    let verb = p.rest.get(1).map(String::as_str).unwrap_or("");
    let tail = &p.rest[2.min(p.rest.len())..];
    if matches(object, "link") {
        if matches(verb, "add") {
            if let Some(code) = link_add(&caps, tail) {
                return code;
            }
        } else if verb == "set" || verb == "s" || matches(verb, "change") && verb.len() >= 2 {
            if let Some(code) = link_set(&caps, tail) {
                return code;
            }
        } else if matches(verb, "delete") && verb.len() >= 3 || verb == "del" {
            if let Some(code) = link_del(tail) {
                return code;
            }
        } else if is_show(verb)
            && let Some(code) = iprender::show(&p, &caps, "link", tail)
        {
            return code;
        }
    } else if (matches(object, "address") || object == "a")
        && is_show(verb)
        && let Some(code) = iprender::show(&p, &caps, "addr", tail)
    {
        return code;
    }
    pass(argv0, args)
}

/// `ip [-force] -b FILE` whose commands touch emulated features: run it line by line through
/// this wrapper (iproute2's rules: `#` comments, blank lines skipped, stop at the first failure
/// unless `-force`). Other batches go to the real `ip` untouched.
fn batch(args: &[String]) -> Option<i32> {
    let mut file = None;
    let mut force = false;
    let mut others = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if opt_matches(a, "batch", 1) && a.starts_with('-') {
            file = Some(args.get(i + 1)?.clone());
            i += 2;
            continue;
        }
        if a.starts_with('-') && opt_matches(a, "force", 5) {
            force = true;
        } else {
            others.push(a.clone());
        }
        i += 1;
    }
    let file = file?;
    let text = if file == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut t).ok()?;
        t
    } else {
        std::fs::read_to_string(&file).ok()?
    };
    let names: Vec<String> = state::list().into_iter().map(|r| r.name).collect();
    let touches = |l: &str| {
        l.split_whitespace().any(|w| {
            [
                "vlan",
                "dummy",
                "bond",
                "vrf",
                "vlan_filtering",
                "vlan_default_pvid",
            ]
            .contains(&w)
                || names.iter().any(|n| n == w)
        })
    };
    if !text.lines().any(touches) {
        if file == "-" {
            // stdin is consumed: replay it to the real ip.
            let mut full = args.to_vec();
            let pos = full.iter().position(|a| a == "-")?;
            let tmp = std::env::temp_dir().join(format!("fb-ip-batch-{}", std::process::id()));
            std::fs::write(&tmp, &text).ok()?;
            full[pos] = tmp.to_string_lossy().into_owned();
            let code = run_real_inherit(&full);
            let _ = std::fs::remove_file(tmp);
            return Some(code);
        }
        return None;
    }
    let me = std::env::current_exe().ok()?;
    let mut failed = false;
    for (n, line) in text.lines().enumerate() {
        let words: Vec<&str> = line
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        if words.is_empty() {
            continue;
        }
        let ok = std::process::Command::new(&me)
            .arg0("ip")
            .args(&others)
            .args(&words)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("Command failed {file}:{}", n + 1);
            failed = true;
            if !force {
                return Some(1);
            }
        }
    }
    Some(i32::from(failed))
}

fn is_show(verb: &str) -> bool {
    verb.is_empty() || matches(verb, "show") || matches(verb, "list") || verb == "lst"
}

fn to_strings(args: &[OsString]) -> Option<Vec<String>> {
    args.iter()
        .map(|a| a.to_str().map(str::to_string))
        .collect()
}

fn pass(argv0: &OsString, args: &[OsString]) -> i32 {
    let e = realbin::exec("ip", argv0, args);
    eprintln!("faultbench-netshim: cannot run the real ip: {e}");
    127
}

/// `ip link add` arguments split at `type`.
#[derive(Debug, Default)]
struct LinkAdd {
    name: Option<String>,
    link: Option<String>,
    mtu: Option<u32>,
    address: Option<String>,
    up: bool,
    other: Vec<String>,
    kind: Option<String>,
    type_args: Vec<String>,
}

fn parse_link_add(tail: &[String]) -> Result<LinkAdd, String> {
    let mut a = LinkAdd::default();
    let mut i = 0;
    let value = |i: usize| -> Result<String, String> {
        tail.get(i + 1)
            .cloned()
            .ok_or_else(|| "Command line is not complete. Try option \"help\"".to_string())
    };
    while i < tail.len() {
        let w = tail[i].as_str();
        match w {
            "type" => {
                a.kind = Some(value(i)?);
                a.type_args = tail[i + 2..].to_vec();
                break;
            }
            "name" | "dev" => {
                a.name = Some(value(i)?);
                i += 1;
            }
            "link" => {
                a.link = Some(value(i)?);
                i += 1;
            }
            "mtu" => {
                let v = value(i)?;
                a.mtu = Some(v.parse().map_err(|_| {
                    format!("Error: argument \"{v}\" is wrong: Invalid \"mtu\" value")
                })?);
                i += 1;
            }
            "address" => {
                a.address = Some(value(i)?);
                i += 1;
            }
            "up" => a.up = true,
            "down" => {}
            "txqueuelen" | "txqlen" | "qlen" | "broadcast" | "brd" | "alias" | "group"
            | "numtxqueues" | "numrxqueues" | "index" | "netns" | "gso_max_size"
            | "gso_max_segs" => {
                a.other.push(w.to_string());
                a.other.push(value(i)?);
                i += 1;
            }
            _ => {
                if a.name.is_none() {
                    a.name = Some(w.to_string());
                } else {
                    a.other.push(w.to_string());
                }
            }
        }
        i += 1;
    }
    Ok(a)
}

/// `Some(exit code)` when handled here, `None` to pass through.
fn link_add(caps: &HostCaps, tail: &[String]) -> Option<i32> {
    // On a parse error, let the real ip print its own usage error.
    let Ok(a) = parse_link_add(tail) else {
        return None;
    };
    let kind = a.kind.clone()?;
    let spec_kind = match kind.as_str() {
        "vlan" if !caps.has(Feature::Vlan8021q) => vlan_kind(&a),
        "dummy" if !caps.has(Feature::Dummy) => Ok(LinkKind::Dummy),
        "bond" if !caps.has(Feature::Bonding) => bond_kind(&a.type_args),
        "vrf" if !caps.has(Feature::Vrf) => {
            return Some(unsupported(
                "VRF devices (`ip link add … type vrf`): this kernel lacks CONFIG_NET_VRF and \
                 faultbench has no faithful emulation",
            ));
        }
        "bridge" if !caps.has(Feature::BridgeVlanFiltering) => {
            return bridge_add(caps, &a, tail);
        }
        _ => return None,
    };
    let kind_v = match spec_kind {
        Ok(k) => k,
        Err(code) => return Some(code),
    };
    if !caps.can_emulate_links() {
        return Some(unsupported(&format!(
            "`type {kind}` links: this kernel lacks them and also tun/AF_PACKET/nftables netdev, \
             which the emulation needs"
        )));
    }
    if !a.other.is_empty() {
        return Some(unsupported(&format!(
            "option(s) {:?} on an emulated `type {kind}` link",
            a.other
        )));
    }
    let Some(name) = a.name.clone() else {
        eprintln!("Not enough information: \"dev\" argument is required.");
        return Some(2);
    };
    if name.len() > 15 {
        eprintln!("Error: argument \"{name}\" is wrong: \"name\" not a valid ifname");
        return Some(1);
    }
    if sys::ifindex(&name).is_some() {
        eprintln!("RTNETLINK answers: File exists");
        return Some(2);
    }
    let spec = PortdSpec {
        name: name.clone(),
        kind: kind_v,
        mtu: a.mtu,
        address: a.address.clone(),
    };
    if let Err(msg) = portd::spawn(&spec) {
        eprintln!("{msg}");
        return Some(2);
    }
    if a.up
        && let Err(e) = realbin::run_ok("ip", &["link", "set", "dev", &name, "up"])
    {
        eprintln!("{e}");
        return Some(2);
    }
    Some(0)
}

fn vlan_kind(a: &LinkAdd) -> Result<LinkKind, i32> {
    let Some(parent) = a.link.clone() else {
        eprintln!("Not enough information: \"link\" argument is required.");
        return Err(2);
    };
    let mut vid = None;
    let mut i = 0;
    let t = &a.type_args;
    while i < t.len() {
        match t[i].as_str() {
            "id" => {
                let v = t.get(i + 1).cloned().unwrap_or_default();
                match v.parse::<u16>() {
                    Ok(n) if n < 4095 => vid = Some(n),
                    _ => {
                        eprintln!("Error: argument \"{v}\" is wrong: id is invalid");
                        return Err(1);
                    }
                }
                i += 1;
            }
            "protocol" => {
                let p = t.get(i + 1).map(String::as_str).unwrap_or("");
                if !p.eq_ignore_ascii_case("802.1q") {
                    return Err(unsupported(&format!(
                        "VLAN protocol {p} (only 802.1Q sub-interfaces are emulated)"
                    )));
                }
                i += 1;
            }
            "reorder_hdr" | "loose_binding" | "bridge_binding" => i += 1,
            other => {
                return Err(unsupported(&format!(
                    "VLAN option `{other}` on an emulated 802.1Q sub-interface"
                )));
            }
        }
        i += 1;
    }
    let Some(vid) = vid else {
        eprintln!("8021q: VLAN device without id");
        return Err(2);
    };
    if sys::ifindex(&parent).is_none() {
        eprintln!("Cannot find device \"{parent}\"");
        return Err(1);
    }
    let clash = state::list().into_iter().any(
        |r| matches!(&r.kind, LinkKind::Vlan { parent: p, vid: v } if *p == parent && *v == vid),
    );
    if clash {
        eprintln!("RTNETLINK answers: File exists");
        return Err(2);
    }
    Ok(LinkKind::Vlan { parent, vid })
}

/// Kernel names of bonding modes, by number or name.
fn bond_mode_name(m: &str) -> Option<&'static str> {
    Some(match m {
        "0" | "balance-rr" => "balance-rr",
        "1" | "active-backup" => "active-backup",
        "2" | "balance-xor" => "balance-xor",
        "3" | "broadcast" => "broadcast",
        "4" | "802.3ad" => "802.3ad",
        "5" | "balance-tlb" => "balance-tlb",
        "6" | "balance-alb" => "balance-alb",
        _ => return None,
    })
}

fn bond_kind(t: &[String]) -> Result<LinkKind, i32> {
    let mut mode = "balance-rr";
    let mut i = 0;
    while i < t.len() {
        let v = t.get(i + 1).map(String::as_str).unwrap_or("");
        match t[i].as_str() {
            "mode" => match bond_mode_name(v) {
                Some(m) => mode = m,
                None => {
                    eprintln!("Error: argument \"{v}\" is wrong: invalid mode");
                    return Err(1);
                }
            },
            // Timing and negotiation knobs: accepted, documented as not modelled.
            "miimon" | "updelay" | "downdelay" | "lacp_rate" | "xmit_hash_policy" | "ad_select"
            | "min_links" | "use_carrier" | "primary_reselect" | "fail_over_mac"
            | "arp_interval" | "arp_ip_target" | "lacp_active" | "all_slaves_active"
            | "resend_igmp" | "num_grat_arp" | "num_unsol_na" | "peer_notify_delay"
            | "tlb_dynamic_lb" | "ad_actor_sys_prio" | "ad_user_port_key" | "ad_actor_system"
            | "packets_per_slave" | "primary" => {}
            other => {
                return Err(unsupported(&format!(
                    "bond option `{other}` (emulated bond)"
                )));
            }
        }
        i += 2;
    }
    Ok(LinkKind::Bond {
        mode: mode.to_string(),
        members: Vec::new(),
    })
}

/// `ip link add … type bridge …` on a kernel without bridge VLAN filtering: such a kernel
/// rejects every `vlan_*` attribute, even `vlan_filtering 0`; create the bridge without them
/// and hand them to the emulation.
fn bridge_add(caps: &HostCaps, a: &LinkAdd, tail: &[String]) -> Option<i32> {
    let (filtered, opts) = strip_bridge_vlan_opts(&a.type_args)?;
    if opts.filtering == Some(true) && !caps.can_emulate_bridge_vlans() {
        return Some(no_bridge_vlans());
    }
    let head_len = tail.len() - a.type_args.len();
    let mut args: Vec<String> = vec!["link".into(), "add".into()];
    args.extend(tail[..head_len].iter().cloned());
    args.extend(filtered);
    let code = run_real_inherit(&args);
    if code != 0 {
        return Some(code);
    }
    let name = a.name.clone()?;
    Some(apply_bridge_vlan_opts(&name, &opts))
}

fn no_bridge_vlans() -> i32 {
    unsupported(
        "bridge VLAN filtering (`vlan_filtering 1`): this kernel lacks \
         CONFIG_BRIDGE_VLAN_FILTERING and the eBPF/TCX support its emulation needs",
    )
}

/// The exit code of applying the bridge's VLAN options.
fn apply_bridge_vlan_opts(name: &str, opts: &BridgeVlanOpts) -> i32 {
    if opts.filtering.is_none() && opts.default_pvid.is_none() {
        return 0;
    }
    let on = match opts.filtering {
        Some(v) => v,
        None => super::brvlan::load(name).is_some_and(|s| s.filtering),
    };
    match super::brvlan::set_filtering(name, on, opts.default_pvid) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            2
        }
    }
}

/// Bridge VLAN attributes found on a command line.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct BridgeVlanOpts {
    filtering: Option<bool>,
    default_pvid: Option<u16>,
}

/// Removes the bridge's VLAN attributes (which this kernel rejects) and returns them. `None`
/// when there are none.
pub(super) fn strip_bridge_vlan_opts(t: &[String]) -> Option<(Vec<String>, BridgeVlanOpts)> {
    let mut out = Vec::new();
    let mut opts = BridgeVlanOpts::default();
    let mut changed = false;
    let mut i = 0;
    while i < t.len() {
        let k = t[i].as_str();
        let v = t.get(i + 1).map(String::as_str).unwrap_or("");
        match k {
            "vlan_filtering" => opts.filtering = Some(v != "0"),
            "vlan_default_pvid" => opts.default_pvid = v.parse().ok(),
            "vlan_stats_enabled" | "vlan_stats_per_port" | "vlan_protocol" => {}
            _ => {
                out.push(t[i].clone());
                i += 1;
                continue;
            }
        }
        changed = true;
        i += 2;
    }
    changed.then_some((out, opts))
}

fn run_real_inherit(args: &[String]) -> i32 {
    match realbin::find("ip").and_then(|p| std::process::Command::new(p).args(args).status()) {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("faultbench-netshim: cannot run the real ip: {e}");
            127
        }
    }
}

/// `ip link set [dev] NAME …`
fn link_set(caps: &HostCaps, tail: &[String]) -> Option<i32> {
    let (name, rest) = match tail.first().map(String::as_str) {
        Some("dev") => (tail.get(1)?.clone(), tail[2.min(tail.len())..].to_vec()),
        Some(n) => (n.to_string(), tail[1..].to_vec()),
        None => return None,
    };
    // `type bridge vlan_filtering …` on a kernel without it.
    if !caps.has(Feature::BridgeVlanFiltering)
        && let Some(pos) = rest.iter().position(|w| w == "type")
        && rest.get(pos + 1).map(String::as_str) == Some("bridge")
    {
        let (filtered, opts) = strip_bridge_vlan_opts(&rest[pos + 2..])?;
        if opts.filtering == Some(true) && !caps.can_emulate_bridge_vlans() {
            return Some(no_bridge_vlans());
        }
        if sys::ifindex(&name).is_none() {
            return Some(no_dev(&name));
        }
        if !filtered.is_empty() || pos > 0 {
            let mut args = vec!["link".into(), "set".into(), "dev".into(), name.clone()];
            args.extend(rest[..pos].iter().cloned());
            if !filtered.is_empty() {
                args.push("type".into());
                args.push("bridge".into());
                args.extend(filtered);
            }
            let code = run_real_inherit(&args);
            if code != 0 {
                return Some(code);
            }
        }
        return Some(apply_bridge_vlan_opts(&name, &opts));
    }
    // A port leaving (or changing) its bridge loses its emulated VLAN table.
    let moving = rest.iter().any(|w| w == "nomaster" || w == "master");
    if moving
        && super::brvlan::list()
            .iter()
            .any(|b| b.ports.contains_key(&name))
    {
        super::brvlan::forget_port(&name);
    }
    // Enslaving to / releasing from an emulated bond.
    let master_pos = rest.iter().position(|w| w == "master");
    let bond_target = master_pos
        .and_then(|p| rest.get(p + 1))
        .and_then(|m| state::load(m))
        .filter(|r| matches!(r.kind, LinkKind::Bond { .. }));
    let current_bond = state::bond_of(&name);
    let releasing = rest.iter().any(|w| w == "nomaster") && current_bond.is_some();
    if bond_target.is_none() && !releasing && !(master_pos.is_some() && current_bond.is_some()) {
        return None;
    }
    if sys::ifindex(&name).is_none() {
        return Some(no_dev(&name));
    }
    // Apply everything else with the real ip first.
    let mut others = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        match rest[i].as_str() {
            "master" => i += 1,
            "nomaster" => {}
            w => others.push(w.to_string()),
        }
        i += 1;
    }
    if let Some(old) = &current_bond {
        super::bondctl::release(old, &name);
    }
    if !others.is_empty() || bond_target.is_none() && master_pos.is_some() {
        let mut args = vec!["link".into(), "set".into(), "dev".into(), name.clone()];
        args.extend(others);
        if bond_target.is_none()
            && let Some(p) = master_pos
        {
            args.push("master".into());
            args.push(rest.get(p + 1).cloned().unwrap_or_default());
        }
        let code = run_real_inherit(&args);
        if code != 0 {
            return Some(code);
        }
    }
    if let Some(bond) = bond_target
        && let Err(msg) = super::bondctl::enslave(&bond, &name)
    {
        eprintln!("{msg}");
        return Some(2);
    }
    Some(0)
}

fn no_dev(name: &str) -> i32 {
    eprintln!("Cannot find device \"{name}\"");
    1
}

/// `ip link del|delete [dev] NAME [type T]`
fn link_del(tail: &[String]) -> Option<i32> {
    let name = match tail.first().map(String::as_str) {
        Some("dev") => tail.get(1)?.clone(),
        Some(n) => n.to_string(),
        None => return None,
    };
    let rec = state::load(&name)?;
    if let LinkKind::Bond { members, .. } = &rec.kind {
        for m in members {
            super::bondctl::release(&rec, m);
        }
    }
    if sys::signal(rec.pid, libc::SIGTERM).is_err() {
        return None;
    }
    // The tap vanishes when the daemon exits; wait for both, like the kernel call returns
    // only once the device is gone.
    for _ in 0..400 {
        if sys::ifindex(&name) != Some(rec.ifindex) && !sys::pid_alive(rec.pid) {
            return Some(0);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let _ = sys::signal(rec.pid, libc::SIGKILL);
    Some(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn link_add_forms() {
        let a = parse_link_add(&v("link eth1 name eth1.10 type vlan id 10")).unwrap();
        assert_eq!(a.name.as_deref(), Some("eth1.10"));
        assert_eq!(a.link.as_deref(), Some("eth1"));
        assert_eq!(a.kind.as_deref(), Some("vlan"));
        assert_eq!(a.type_args, v("id 10"));
        let b = parse_link_add(&v("lo1 mtu 1400 type dummy")).unwrap();
        assert_eq!((b.name.as_deref(), b.mtu), (Some("lo1"), Some(1400)));
        assert!(parse_link_add(&v("name")).is_err());
    }

    #[test]
    fn globals_and_prefixes() {
        let p = parse_globals(&v("-d -j link show dev eth0")).unwrap();
        assert_eq!(p.globals, v("-d -j"));
        assert_eq!(p.rest, v("link show dev eth0"));
        assert!(parse_globals(&v("-n other link")).is_none());
        assert!(parse_globals(&v("-family inet addr")).unwrap().rest == v("addr"));
        assert!(matches("l", "link") && matches("lin", "link") && !matches("links", "link"));
    }

    #[test]
    fn bridge_vlan_attributes_are_stripped() {
        let (rest, o) = strip_bridge_vlan_opts(&v(
            "vlan_filtering 1 vlan_default_pvid 0 stp_state 1 forward_delay 200",
        ))
        .unwrap();
        assert_eq!(rest, v("stp_state 1 forward_delay 200"));
        assert_eq!(o.filtering, Some(true));
        assert_eq!(o.default_pvid, Some(0));
        assert!(strip_bridge_vlan_opts(&v("stp_state 1")).is_none());
    }
}
