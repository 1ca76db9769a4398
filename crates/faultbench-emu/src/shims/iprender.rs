//! `ip link show` / `ip addr show` as a full kernel would print them for emulated links.
//!
//! The real `ip` prints the taps; this module rewrites what identifies them: the name gets its
//! `@parent` (VLANs), `-d` shows `vlan protocol 802.1Q id N <REORDER_HDR>` / `dummy` /
//! `bond mode M` instead of the tun details, bond members get `SLAVE` and `master BOND`, bonds
//! `MASTER`; `type vlan|dummy|bond` filters select the emulated links. When nothing in the
//! namespace is emulated, the real `ip` runs untouched (see the caller).

use super::ip::Parsed;
use super::realbin;
use super::state::{self, LinkKind, LinkRecord};
use std::io::Write;

/// `Some(exit code)` when handled (output rewritten), `None` to pass through.
pub fn show(p: &Parsed, object: &str, tail: &[String]) -> Option<i32> {
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
    // A `type T` filter naming an emulated kind: list everything, keep those.
    let mut real_tail = tail.to_vec();
    let mut type_filter = None;
    if let Some(pos) = tail.iter().position(|w| w == "type") {
        let t = tail.get(pos + 1).cloned().unwrap_or_default();
        if ["vlan", "dummy", "bond"].contains(&t.as_str()) {
            type_filter = Some(t);
            real_tail.drain(pos..(pos + 2).min(real_tail.len()));
        }
    }
    let verb = "show";
    let mut args: Vec<String> = p.globals.clone();
    args.push(object.to_string());
    args.push(verb.to_string());
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
        rewrite_json(&text, &recs, type_filter.as_deref())
    } else if brief {
        rewrite_brief(&text, &recs, type_filter.as_deref())
    } else {
        rewrite_text(&text, &recs, type_filter.as_deref())
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
                out.replace_range(at..at + 1, "1");
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

fn bond_of<'a>(recs: &'a [LinkRecord], member: &str) -> Option<&'a LinkRecord> {
    recs.iter().find(|r| {
        matches!(&r.kind, LinkKind::Bond { members, .. } if members.iter().any(|m| m == member))
    })
}

fn keep(recs: &[LinkRecord], name: &str, filter: Option<&str>) -> bool {
    match filter {
        None => true,
        Some(t) => recs
            .iter()
            .any(|r| r.name == name && r.kind.type_name() == t),
    }
}

/// Insert a flag into `<A,B,…>` keeping the kernel's order (before UP / LOWER_UP / end).
fn add_flag(line: &str, flag: &str) -> String {
    let (Some(open), Some(close)) = (line.find('<'), line.find('>')) else {
        return line.to_string();
    };
    let inner = &line[open + 1..close];
    let mut flags: Vec<&str> = inner.split(',').filter(|f| !f.is_empty()).collect();
    if flags.contains(&flag) {
        return line.to_string();
    }
    let after = ["SLAVE", "UP", "LOWER_UP", "DORMANT", "ECHO", "M-DOWN"];
    let start = after
        .iter()
        .position(|a| *a == flag)
        .map(|p| p + 1)
        .unwrap_or(0);
    let pos = flags
        .iter()
        .position(|f| after[start..].contains(f))
        .unwrap_or(flags.len());
    flags.insert(pos, flag);
    format!(
        "{}<{}>{}",
        &line[..open],
        flags.join(","),
        &line[close + 1..]
    )
}

fn rewrite_text(text: &str, recs: &[LinkRecord], filter: Option<&str>) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut current: Option<&LinkRecord> = None;
    let mut keep_block = true;
    for line in text.split_inclusive('\n') {
        if let Some((idx, name)) = header(line) {
            keep_block = keep(recs, name, filter);
            current = recs.iter().find(|r| r.name == name);
            let mut l = line.to_string();
            if let Some(r) = current {
                l = format!(
                    "{idx}: {}:{}",
                    display_name(r),
                    &line[idx.len() + 2 + name.len() + 1..]
                );
                if matches!(r.kind, LinkKind::Bond { .. }) {
                    l = add_flag(&l, "MASTER");
                }
                if lower_down(r, &l) {
                    l = l.replacen(" state DOWN ", " state LOWERLAYERDOWN ", 1);
                }
            }
            if let Some(b) = bond_of(recs, name) {
                l = add_flag(&l, "SLAVE");
                if !l.contains(" master ")
                    && let Some(p) = l.find(" state ")
                {
                    l.insert_str(p, &format!(" master {}", b.name));
                }
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
        } else if key == "multi_queue " {
            continue;
        }
    }
    rest
}

fn rewrite_brief(text: &str, recs: &[LinkRecord], filter: Option<&str>) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let name_tok = line.split_whitespace().next().unwrap_or("");
        let name = name_tok.split('@').next().unwrap_or(name_tok);
        if !keep(recs, name, filter) {
            continue;
        }
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
fn rewrite_json(text: &str, recs: &[LinkRecord], filter: Option<&str>) -> String {
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
        if !keep(recs, name, filter) {
            continue;
        }
        let mut obj = raw;
        if let Some(r) = recs.iter().find(|r| r.name == name) {
            if let LinkKind::Vlan { parent, .. } = &r.kind {
                let key = format!("\"ifname\":\"{name}\",");
                obj = obj.replacen(&key, &format!("{key}\"link\":\"{parent}\","), 1);
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
        let r = rewrite_text(t, &[vlan()], None);
        assert!(r.starts_with("5: eth1.10@eth1: <BROADCAST"), "{r}");
        assert!(
            r.contains("    vlan protocol 802.1Q id 10 <REORDER_HDR> addrgenmode eui64"),
            "{r}"
        );
        assert_eq!(rewrite_text(t, &[vlan()], Some("dummy")), "");
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
        let r = rewrite_json(t, &[vlan()], None);
        let v: serde_json::Value = serde_json::from_str(&r).unwrap();
        assert_eq!(v[0]["link"], "eth1");
        assert_eq!(v[0]["linkinfo"]["info_kind"], "vlan");
        assert_eq!(v[0]["linkinfo"]["info_data"]["id"], 10);
        assert_eq!(v[0]["x"], 1);
    }
}
