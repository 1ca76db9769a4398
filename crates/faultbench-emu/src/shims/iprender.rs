//! `ip link show` / `ip addr show` as a full kernel would print them for emulated links.
//!
//! The real `ip` prints the taps; this module rewrites what identifies them: the name gets its
//! `@parent` (VLANs), `-d` shows `vlan protocol 802.1Q id N <REORDER_HDR>` / `dummy` /
//! `bond mode M` instead of the tun details, bond members get `SLAVE` and `master BOND`, bonds
//! `MASTER` (in the text, `-br` and `-j` forms). Selectors the kernel cannot answer for
//! emulated links (`master BOND`, `type vlan|dummy|bond|bond_slave`, `nomaster`) are applied
//! here ([`super::ipfilter`]). When nothing in the namespace is emulated, the real `ip` runs
//! untouched (see the caller).

use super::ip::Parsed;
use super::ipfilter::{ShowFilter, bond_of};
use super::realbin;
use super::state::{self, LinkKind, LinkRecord};
use crate::hostcaps::HostCaps;
use std::io::Write;

/// `Some(exit code)` when handled (output rewritten), `None` to pass through.
pub fn show(p: &Parsed, caps: &HostCaps, object: &str, tail: &[String]) -> Option<i32> {
    let recs = state::list();
    let filtering: Vec<String> = super::brvlan::list()
        .into_iter()
        .filter(|b| b.filtering)
        .map(|b| b.bridge)
        .collect();
    if recs.is_empty() && filtering.is_empty() {
        return None;
    }
    let json = p.globals.iter().any(|g| is_opt(g, "json", 1));
    let color = p.globals.iter().any(|g| is_opt(g, "color", 1));
    if color {
        return None;
    }
    let brief = p.globals.iter().any(|g| is_opt(g, "brief", 2));
    let (real_tail, filter) = ShowFilter::parse(tail, &recs, caps);
    let mut args: Vec<String> = p.globals.clone();
    args.push(object.to_string());
    args.push("show".to_string());
    args.extend(real_tail);
    let out = match realbin::capture_stdout("ip", &args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("faultbench-netshim: cannot run the real ip: {e}");
            return Some(127);
        }
    };
    let text = out.text();
    let rewritten = if json {
        rewrite_json(&text, &recs, &filter)
    } else if brief {
        rewrite_brief(&text, &recs, &filter)
    } else {
        rewrite_text(&text, &recs, &filter)
    };
    let rewritten = mark_filtering(&rewritten, &filtering, json);
    let mut so = std::io::stdout();
    let _ = so.write_all(rewritten.as_bytes());
    let _ = so.flush();
    Some(out.code())
}

/// `vlan_filtering 0` → `1` in the details of bridges whose filtering is emulated.
fn mark_filtering(text: &str, bridges: &[String], json: bool) -> String {
    if bridges.is_empty() {
        return text.to_string();
    }
    if json {
        let mut out = text.to_string();
        for b in bridges {
            let key = format!("\"ifname\":\"{b}\",");
            if let Some(p) = out.find(&key)
                && let Some(q) = out[p..].find("\"vlan_filtering\":0")
            {
                let at = p + q + "\"vlan_filtering\":".len();
                out.replace_range(at..=at, "1");
            }
        }
        return out;
    }
    let mut out = String::with_capacity(text.len());
    let mut in_bridge = false;
    for line in text.split_inclusive('\n') {
        if let Some((_, name)) = header(line) {
            in_bridge = bridges.iter().any(|b| b == name);
        }
        if in_bridge && line.contains(" vlan_filtering 0 ") {
            out.push_str(&line.replacen(" vlan_filtering 0 ", " vlan_filtering 1 ", 1));
        } else {
            out.push_str(line);
        }
    }
    out
}

fn is_opt(arg: &str, long: &str, min: usize) -> bool {
    let a = arg.trim_start_matches('-');
    let a = a.split('=').next().unwrap_or(a);
    a.len() >= min && long.starts_with(a)
}

fn display_name(r: &LinkRecord) -> String {
    match &r.kind {
        LinkKind::Vlan { parent, .. } => format!("{}@{}", r.name, parent),
        _ => r.name.clone(),
    }
}

fn details(r: &LinkRecord) -> String {
    match &r.kind {
        LinkKind::Vlan { vid, .. } => format!("vlan protocol 802.1Q id {vid} <REORDER_HDR> "),
        LinkKind::Dummy => String::from("dummy "),
        LinkKind::Bond { mode, .. } => format!("bond mode {mode} "),
    }
}

/// An administratively up VLAN without carrier: its parent is down, which the kernel reports
/// as `LOWERLAYERDOWN`.
fn lower_down(r: &LinkRecord, line: &str) -> bool {
    matches!(r.kind, LinkKind::Vlan { .. }) && line.contains("NO-CARRIER") && line.contains(",UP")
}

/// Link flags in the order iproute2 prints them (`NO-CARRIER` first, `M-DOWN` last).
const FLAG_ORDER: [&str; 20] = [
    "NO-CARRIER",
    "LOOPBACK",
    "BROADCAST",
    "POINTOPOINT",
    "MULTICAST",
    "NOARP",
    "ALLMULTI",
    "PROMISC",
    "MASTER",
    "SLAVE",
    "DEBUG",
    "DYNAMIC",
    "AUTOMEDIA",
    "PORTSEL",
    "NOTRAILERS",
    "UP",
    "LOWER_UP",
    "DORMANT",
    "ECHO",
    "M-DOWN",
];

/// Insert `flag` into `flags` at the place iproute2 prints it (no duplicate).
fn insert_flag<'a>(flags: &mut Vec<&'a str>, flag: &'a str) {
    if flags.contains(&flag) {
        return;
    }
    let rank = |f: &str| {
        FLAG_ORDER
            .iter()
            .position(|o| *o == f)
            .unwrap_or(FLAG_ORDER.len())
    };
    let pos = flags
        .iter()
        .position(|f| rank(f) > rank(flag))
        .unwrap_or(flags.len());
    flags.insert(pos, flag);
}

/// Insert a flag into `<A,B,…>` keeping the kernel's order.
fn add_flag(line: &str, flag: &str) -> String {
    let (Some(open), Some(close)) = (line.find('<'), line.find('>')) else {
        return line.to_string();
    };
    let mut flags: Vec<&str> = line[open + 1..close]
        .split(',')
        .filter(|f| !f.is_empty())
        .collect();
    insert_flag(&mut flags, flag);
    format!(
        "{}<{}>{}",
        &line[..open],
        flags.join(","),
        &line[close + 1..]
    )
}

/// The flag the kernel sets on `name` for its part in an emulated bond, if any.
fn bond_flag(recs: &[LinkRecord], name: &str) -> Option<&'static str> {
    if recs
        .iter()
        .any(|r| r.name == name && matches!(r.kind, LinkKind::Bond { .. }))
    {
        Some("MASTER")
    } else if bond_of(recs, name).is_some() {
        Some("SLAVE")
    } else {
        None
    }
}

/// `line` with `MASTER` / `SLAVE` added to its `<…>` flags where an emulated bond calls for it.
fn relation_flags(recs: &[LinkRecord], name: &str, line: &str) -> String {
    match bond_flag(recs, name) {
        Some(flag) => add_flag(line, flag),
        None => line.to_string(),
    }
}

/// A `-j` interface object with `MASTER` / `SLAVE` added to its `"flags"` array.
fn json_flags(recs: &[LinkRecord], name: &str, obj: String) -> String {
    let Some(flag) = bond_flag(recs, name) else {
        return obj;
    };
    let key = "\"flags\":[";
    let Some(start) = obj.find(key).map(|p| p + key.len()) else {
        return obj;
    };
    let Some(len) = obj[start..].find(']') else {
        return obj;
    };
    let Ok(flags) = serde_json::from_str::<Vec<String>>(&obj[(start - 1)..=(start + len)]) else {
        return obj;
    };
    let mut refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    insert_flag(&mut refs, flag);
    let inner = refs
        .iter()
        .map(|f| format!("\"{f}\""))
        .collect::<Vec<_>>()
        .join(",");
    format!("{}{inner}{}", &obj[..start], &obj[start + len..])
}

fn rewrite_text(text: &str, recs: &[LinkRecord], filter: &ShowFilter) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut current: Option<&LinkRecord> = None;
    let mut keep_block = true;
    for line in text.split_inclusive('\n') {
        if let Some((idx, name)) = header(line) {
            keep_block = filter.keeps(recs, name);
            current = recs.iter().find(|r| r.name == name);
            let mut l = line.to_string();
            if let Some(r) = current {
                l = format!(
                    "{idx}: {}:{}",
                    display_name(r),
                    &line[idx.len() + 2 + name.len() + 1..]
                );
                if lower_down(r, &l) {
                    l = l.replacen(" state DOWN ", " state LOWERLAYERDOWN ", 1);
                }
            }
            l = relation_flags(recs, name, &l);
            if let Some(b) = bond_of(recs, name)
                && !l.contains(" master ")
                && let Some(p) = l.find(" state ")
            {
                l.insert_str(p, &format!(" master {}", b.name));
            }
            if keep_block {
                out.push_str(&l);
            }
            continue;
        }
        if !keep_block {
            continue;
        }
        if let Some(r) = current {
            let trimmed = line.trim_start();
            if trimmed.starts_with("tun type tap ") {
                let indent = &line[..line.len() - trimmed.len()];
                let rest = skip_tun_details(trimmed);
                out.push_str(indent);
                out.push_str(&details(r));
                out.push_str(rest);
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

/// `N: name: <…` → (N, name).
fn header(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(": ")?;
    let idx = &line[..colon];
    if idx.is_empty() || !idx.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let rest = &line[colon + 2..];
    let end = rest.find(": ")?;
    let name = &rest[..end];
    let name = name.split('@').next().unwrap_or(name);
    Some((idx, name))
}

/// Skip `tun type tap pi X vnet_hdr Y persist Z ` (and `multi_queue` if present).
fn skip_tun_details(s: &str) -> &str {
    let mut rest = s.strip_prefix("tun type tap ").unwrap_or(s);
    for key in ["pi ", "vnet_hdr ", "multi_queue ", "persist "] {
        if let Some(r) = rest.strip_prefix(key) {
            let sp = r.find(' ').map(|p| p + 1).unwrap_or(r.len());
            rest = &r[sp..];
        }
    }
    rest
}

fn rewrite_brief(text: &str, recs: &[LinkRecord], filter: &ShowFilter) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let name_tok = line.split_whitespace().next().unwrap_or("");
        let name = name_tok.split('@').next().unwrap_or(name_tok);
        if !filter.keeps(recs, name) {
            continue;
        }
        let line = &relation_flags(recs, name, line);
        match recs.iter().find(|r| r.name == name) {
            Some(r) if !name_tok.is_empty() => {
                let shown = display_name(r);
                let rest = line[name_tok.len()..].trim_start_matches(' ');
                let lowered;
                let rest = if lower_down(r, line) && rest.starts_with("DOWN ") {
                    lowered = format!("{:<14} {}", "LOWERLAYERDOWN", rest[5..].trim_start());
                    lowered.as_str()
                } else {
                    rest
                };
                out.push_str(&format!("{shown:<16} {rest}"));
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// JSON output: textual edits of each interface object (keeps the real field order).
fn rewrite_json(text: &str, recs: &[LinkRecord], filter: &ShowFilter) -> String {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_str::<serde_json::Value>(text)
    else {
        return text.to_string();
    };
    // Re-serialize object by object only where we change something; the objects are small and
    // printed compactly by `ip -j` as well.
    let mut parts = Vec::new();
    let raw_objects = split_top_level_objects(text);
    for (i, item) in items.iter().enumerate() {
        let raw = raw_objects
            .get(i)
            .cloned()
            .unwrap_or_else(|| item.to_string());
        let name = item.get("ifname").and_then(|v| v.as_str()).unwrap_or("");
        if !filter.keeps(recs, name) {
            continue;
        }
        let mut obj = json_flags(recs, name, raw);
        if let Some(r) = recs.iter().find(|r| r.name == name) {
            // iproute2 prints a lower device's `link` just before `ifname`.
            if let LinkKind::Vlan { parent, .. } = &r.kind {
                let key = format!("\"ifname\":\"{name}\",");
                obj = obj.replacen(&key, &format!("\"link\":\"{parent}\",{key}"), 1);
            }
            if let Some(start) = obj.find("\"linkinfo\":{\"info_kind\":\"tun\"")
                && let Some(len) = balanced_len(&obj[start + 11..])
            {
                {
                    let info = match &r.kind {
                        LinkKind::Vlan { vid, .. } => format!(
                            "{{\"info_kind\":\"vlan\",\"info_data\":{{\"protocol\":\"802.1Q\",\"id\":{vid},\"flags\":[\"REORDER_HDR\"]}}}}"
                        ),
                        LinkKind::Dummy => String::from("{\"info_kind\":\"dummy\"}"),
                        LinkKind::Bond { mode, .. } => format!(
                            "{{\"info_kind\":\"bond\",\"info_data\":{{\"mode\":\"{mode}\"}}}}"
                        ),
                    };
                    obj.replace_range(start + 11..start + 11 + len, &info);
                }
            }
        }
        if let Some(b) = bond_of(recs, name)
            && !obj.contains("\"master\":")
            && let Some(p) = obj.find("\"qdisc\":\"")
            && let Some(q) = obj[p + 9..].find('"')
        {
            let at = p + 9 + q + 1;
            obj.insert_str(at, &format!(",\"master\":\"{}\"", b.name));
        }
        parts.push(obj);
    }
    let trailing = if text.ends_with('\n') { "\n" } else { "" };
    format!("[{}]{trailing}", parts.join(","))
}

/// Length of the balanced `{…}` starting at `s[0]`.
pub(super) fn balanced_len(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut in_str = false;
    let mut esc = false;
    for (i, c) in s.char_indices() {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The raw text of each top-level object of a JSON array.
fn split_top_level_objects(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut i = match text.find('[') {
        Some(p) => p + 1,
        None => return v,
    };
    while let Some(off) = text[i..].find('{') {
        let start = i + off;
        match balanced_len(&text[start..]) {
            Some(len) => {
                v.push(text[start..start + len].to_string());
                i = start + len;
            }
            None => break,
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vlan() -> LinkRecord {
        LinkRecord {
            name: "eth1.10".into(),
            kind: LinkKind::Vlan {
                parent: "eth1".into(),
                vid: 10,
            },
            pid: 1,
            ifindex: 5,
        }
    }

    #[test]
    fn text_header_and_details() {
        let t = "5: eth1.10: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc fq state UP mode DEFAULT group default qlen 1000\n    link/ether aa:bb:cc:dd:ee:ff brd ff:ff:ff:ff:ff:ff promiscuity 0\n    tun type tap pi off vnet_hdr on persist off addrgenmode eui64 numtxqueues 1\n";
        let r = rewrite_text(t, &[vlan()], &ShowFilter::default());
        assert!(r.starts_with("5: eth1.10@eth1: <BROADCAST"), "{r}");
        assert!(
            r.contains("    vlan protocol 802.1Q id 10 <REORDER_HDR> addrgenmode eui64"),
            "{r}"
        );
        let no_dummy = HostCaps::full_kernel().with(crate::hostcaps::Feature::Dummy, false);
        let words = ["type".to_string(), "dummy".to_string()];
        let (_, only_dummies) = ShowFilter::parse(&words, &[vlan()], &no_dummy);
        assert_eq!(rewrite_text(t, &[vlan()], &only_dummies), "");
    }

    #[test]
    fn flags_keep_kernel_order() {
        assert_eq!(
            add_flag("3: e: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu", "SLAVE"),
            "3: e: <BROADCAST,MULTICAST,SLAVE,UP,LOWER_UP> mtu"
        );
        assert_eq!(
            add_flag("3: b: <BROADCAST,MULTICAST> mtu", "MASTER"),
            "3: b: <BROADCAST,MULTICAST,MASTER> mtu"
        );
    }

    #[test]
    fn json_vlan() {
        let t = r#"[{"ifindex":5,"ifname":"eth1.10","flags":[],"mtu":1500,"linkinfo":{"info_kind":"tun","info_data":{"type":"tap","pi":false}},"x":1}]"#;
        let r = rewrite_json(t, &[vlan()], &ShowFilter::default());
        let v: serde_json::Value = serde_json::from_str(&r).unwrap();
        assert_eq!(v[0]["link"], "eth1");
        assert_eq!(v[0]["linkinfo"]["info_kind"], "vlan");
        assert_eq!(v[0]["linkinfo"]["info_data"]["id"], 10);
        assert_eq!(v[0]["x"], 1);
        assert!(
            r.starts_with(r#"[{"ifindex":5,"link":"eth1","ifname":"eth1.10","#),
            "{r}"
        );
    }

    fn bond() -> LinkRecord {
        LinkRecord {
            name: "bond0".into(),
            kind: LinkKind::Bond {
                mode: "balance-rr".into(),
                members: vec!["eth2".into()],
            },
            pid: 1,
            ifindex: 6,
        }
    }

    #[test]
    fn bond_flags_in_every_form() {
        let recs = [bond()];
        let t = r#"[{"ifindex":3,"ifname":"eth2","flags":["NO-CARRIER","BROADCAST","MULTICAST","UP"],"mtu":1500,"qdisc":"noqueue","operstate":"DOWN"}]"#;
        let r = rewrite_json(t, &recs, &ShowFilter::default());
        assert_eq!(
            r,
            r#"[{"ifindex":3,"ifname":"eth2","flags":["NO-CARRIER","BROADCAST","MULTICAST","SLAVE","UP"],"mtu":1500,"qdisc":"noqueue","master":"bond0","operstate":"DOWN"}]"#
        );
        let b = "bond0            UP             aa:bb:cc:dd:ee:ff <BROADCAST,MULTICAST,UP,LOWER_UP> \n";
        assert!(
            rewrite_brief(b, &recs, &ShowFilter::default())
                .contains(" <BROADCAST,MULTICAST,MASTER,UP,LOWER_UP> \n")
        );
    }
}
