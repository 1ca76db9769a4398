//! The `tc` wrapper: `netem` on a kernel without it.
//!
//! `tc qdisc add|replace|change dev X root netem loss P%` becomes an nftables table
//! `netdev fbnetem_<ifindex>` with a chain on X's **egress** hook (netem only acts on what a
//! device sends) that takes a `numgen random` share of packets away, plus counters. The packets
//! are not `drop`ped: a netfilter drop on egress reports ENOBUFS to a local sender, and `ping`
//! then silently re-sends, hiding the loss. netem drops silently, so the emulation `fwd`s the
//! chosen packets to `lo` instead (a silent "stolen" verdict), where they die as frames for
//! another host (PACKET_OTHERHOST) or as ARP on a NOARP device. `tc qdisc show`
//! prints it as a netem root qdisc (with `-s`: sent and dropped from the counters), and
//! `tc qdisc del dev X root` removes it. What nftables cannot do — delay, jitter, duplicate,
//! corrupt, reorder, rate, slots, Gilbert-Elliott loss, netem below another qdisc — ends with
//! [`faultbench_core::emulator::UNSUPPORTED_EXIT`]. Everything else is the real `tc`.

use super::realbin;
use super::state;
use super::sys;
use super::{shim_caps, unsupported};
use crate::hostcaps::Feature;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::Write;

/// One emulated netem qdisc.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Netem {
    dev: String,
    ifindex: u32,
    /// Handle as printed (`8001:` when none was given).
    handle: String,
    limit: u32,
    /// Loss in percent.
    loss: f64,
}

impl Netem {
    fn table(&self) -> String {
        format!("fbnetem_{}", self.ifindex)
    }
}

fn netem_dir() -> std::path::PathBuf {
    state::dir().join("netem")
}

fn load(dev: &str) -> Option<Netem> {
    let b = std::fs::read(netem_dir().join(dev)).ok()?;
    let n: Netem = serde_json::from_slice(&b).ok()?;
    (sys::ifindex(dev) == Some(n.ifindex)).then_some(n)
}

fn load_all() -> Vec<Netem> {
    let Ok(rd) = std::fs::read_dir(netem_dir()) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| load(&e.file_name().to_string_lossy()))
        .collect()
}

/// Entry point of the `tc` wrapper.
pub fn main(argv0: &OsString, args: &[OsString]) -> i32 {
    if let Some(s) = args
        .iter()
        .map(|a| a.to_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        && let Some(code) = handle(&s)
    {
        return code;
    }
    let e = realbin::exec("tc", argv0, args);
    eprintln!("faultbench-netshim: cannot run the real tc: {e}");
    127
}

/// Global tc options: (flags seen, rest). `None` for options we do not reason about.
fn split_globals(args: &[String]) -> Option<(Vec<String>, &[String])> {
    let mut g = Vec::new();
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        let a = args[i].trim_start_matches('-');
        if ["b", "batch", "n", "netns", "cf", "conf"].contains(&a) {
            return None;
        }
        g.push(a.to_string());
        i += 1;
    }
    Some((g, &args[i..]))
}

fn handle(args: &[String]) -> Option<i32> {
    if shim_caps().has(Feature::Netem) {
        return None;
    }
    let (globals, rest) = split_globals(args)?;
    let obj = rest.first()?;
    if !super::ip::matches(obj, "qdisc") {
        return None;
    }
    let verb = rest.get(1).map(String::as_str).unwrap_or("show");
    let tail = &rest[2.min(rest.len())..];
    match verb {
        "add" | "change" | "replace" | "link" => modify(verb, tail),
        "del" | "delete" => delete(tail),
        v if super::ip::matches(v, "show") || super::ip::matches(v, "list") || v == "ls" => {
            show(&globals, tail)
        }
        _ => None,
    }
}

/// `dev X`, parent/handle and the qdisc kind with its arguments.
struct QdiscArgs {
    dev: Option<String>,
    root: bool,
    parent: Option<String>,
    handle: Option<String>,
    kind: Option<String>,
    kind_args: Vec<String>,
}

fn parse_qdisc(tail: &[String]) -> QdiscArgs {
    let mut q = QdiscArgs {
        dev: None,
        root: false,
        parent: None,
        handle: None,
        kind: None,
        kind_args: Vec::new(),
    };
    let mut i = 0;
    while i < tail.len() {
        match tail[i].as_str() {
            "dev" => {
                q.dev = tail.get(i + 1).cloned();
                i += 1;
            }
            "root" => q.root = true,
            "parent" => {
                q.parent = tail.get(i + 1).cloned();
                i += 1;
            }
            "handle" => {
                q.handle = tail.get(i + 1).cloned();
                i += 1;
            }
            "estimator" | "stab" => {
                i += 2;
            }
            k => {
                q.kind = Some(k.to_string());
                q.kind_args = tail[i + 1..].to_vec();
                break;
            }
        }
        i += 1;
    }
    q
}

/// Parse netem options into (limit, loss%). Unsupported ones end the command.
fn parse_netem(args: &[String]) -> Result<(u32, f64), i32> {
    let mut limit = 1000;
    let mut loss = 0.0;
    let mut i = 0;
    let pct = |s: &str| -> Option<f64> {
        let v: f64 = s.trim_end_matches('%').parse().ok()?;
        (0.0..=100.0).contains(&v).then_some(v)
    };
    while i < args.len() {
        let k = args[i].as_str();
        let v = args.get(i + 1).map(String::as_str).unwrap_or("");
        match k {
            "limit" => {
                limit = v.parse().map_err(|_| {
                    eprintln!("Illegal \"limit\"");
                    1
                })?;
                i += 2;
            }
            "loss" | "drop" => {
                let mut j = i + 1;
                if args.get(j).map(String::as_str) == Some("random") {
                    j += 1;
                }
                let p = args.get(j).map(String::as_str).unwrap_or("");
                if p == "state" || p == "gemodel" {
                    return Err(unsupported(&format!(
                        "netem `loss {p}` (Gilbert-Elliott/state loss models): only independent \
                         random loss is emulated (nftables numgen)"
                    )));
                }
                loss = pct(p).ok_or_else(|| {
                    eprintln!("Illegal \"loss percent\"");
                    1
                })?;
                j += 1;
                // A correlation value may follow; nftables has no correlated randomness.
                if let Some(c) = args.get(j).and_then(|c| pct(c)) {
                    if c > 0.0 {
                        return Err(unsupported(
                            "netem loss correlation: only independent random loss is emulated",
                        ));
                    }
                    j += 1;
                }
                i = j;
            }
            "delay" | "latency" => {
                let zero = |s: &str| {
                    s.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                        .parse::<f64>()
                        .is_ok_and(|x| x == 0.0)
                };
                let jitter = args.get(i + 2).map(String::as_str).unwrap_or("");
                let jitter_given = args
                    .get(i + 2)
                    .is_some_and(|s| s.chars().next().is_some_and(|c| c.is_ascii_digit()));
                if !zero(v) || (jitter_given && !zero(jitter)) {
                    return Err(unsupported(&format!(
                        "netem delay/jitter (`{}`): this kernel lacks the netem qdisc \
                         (CONFIG_NET_SCH_NETEM) and delay cannot be emulated",
                        args[i..].join(" ")
                    )));
                }
                i += if jitter_given { 3 } else { 2 };
            }
            other => {
                return Err(unsupported(&format!(
                    "netem `{other}`: this kernel lacks the netem qdisc (CONFIG_NET_SCH_NETEM); \
                     only `loss` is emulated"
                )));
            }
        }
    }
    Ok((limit, loss))
}

fn modify(verb: &str, tail: &[String]) -> Option<i32> {
    let q = parse_qdisc(tail);
    if q.kind.as_deref() != Some("netem") {
        return None;
    }
    if !shim_caps().can_emulate_loss() {
        return Some(unsupported(
            "netem: this kernel lacks both netem and the nftables netdev egress/numgen support \
             the loss emulation needs",
        ));
    }
    let Some(dev) = q.dev.clone() else {
        eprintln!("Error: Cannot find specified qdisc on specified device.");
        return Some(2);
    };
    if !q.root || q.parent.is_some() {
        return Some(unsupported(
            "netem below another qdisc (`parent …`): only a root netem is emulated",
        ));
    }
    let (limit, loss) = match parse_netem(&q.kind_args) {
        Ok(v) => v,
        Err(code) => return Some(code),
    };
    let Some(ifindex) = sys::ifindex(&dev) else {
        eprintln!("Cannot find device \"{dev}\"");
        return Some(1);
    };
    let existing = load(&dev);
    match (verb, &existing) {
        ("add", Some(_)) => {
            eprintln!("Error: Exclusivity flag on, cannot modify.");
            return Some(2);
        }
        ("change", None) => {
            eprintln!("Error: Qdisc not found. To create specify NLM_F_CREATE flag.");
            return Some(2);
        }
        _ => {}
    }
    if existing.is_none() && has_real_root(&dev) {
        if verb == "replace" {
            let _ = realbin::run_ok("tc", &["qdisc", "del", "dev", &dev, "root"]);
        } else {
            eprintln!("Error: Exclusivity flag on, cannot modify.");
            return Some(2);
        }
    }
    let handle = q
        .handle
        .map(|h| if h.ends_with(':') { h } else { format!("{h}:") })
        .or_else(|| existing.as_ref().map(|e| e.handle.clone()))
        .unwrap_or_else(|| String::from("8001:"));
    let n = Netem {
        dev: dev.clone(),
        ifindex,
        handle,
        limit,
        loss,
    };
    // Keep counters across `change` (the kernel keeps the qdisc's stats too).
    let threshold = (loss * 100.0).round() as u32; // in 1/10000
    let t = n.table();
    let script = if existing.is_some() {
        format!(
            "flush chain netdev {t} lossy\nadd rule netdev {t} lossy numgen random mod 10000 < {threshold} counter fwd to \"lo\"\n"
        )
    } else {
        format!(
            "add table netdev {t}\ndelete table netdev {t}\nadd table netdev {t}\n\
             add chain netdev {t} lossy\n\
             add rule netdev {t} lossy numgen random mod 10000 < {threshold} counter fwd to \"lo\"\n\
             add chain netdev {t} egress {{ type filter hook egress device \"{dev}\" priority -500; }}\n\
             add rule netdev {t} egress jump lossy\n\
             add rule netdev {t} egress counter\n"
        )
    };
    if let Err(e) = realbin::nft_script(&script) {
        eprintln!("faultbench: netem emulation failed: {e}");
        return Some(2);
    }
    let saved = state::create_subdir("netem").and_then(|_| {
        std::fs::write(
            netem_dir().join(&dev),
            serde_json::to_vec(&n).map_err(std::io::Error::other)?,
        )
    });
    if let Err(e) = saved {
        eprintln!("faultbench: cannot record netem state: {e}");
        return Some(2);
    }
    Some(0)
}

/// Whether the device has a real root qdisc that `add` would collide with.
fn has_real_root(dev: &str) -> bool {
    let Ok(c) = realbin::capture("tc", &["qdisc", "show", "dev", dev, "root"]) else {
        return false;
    };
    let text = c.text();
    let first = text.lines().next().unwrap_or("");
    let mut f = first.split_whitespace().skip(1);
    let (kind, handle) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
    !(handle == "0:" || kind.is_empty())
}

fn delete(tail: &[String]) -> Option<i32> {
    let q = parse_qdisc(tail);
    let dev = q.dev?;
    let n = load(&dev)?;
    if q.kind.as_deref().is_some_and(|k| k != "netem") {
        return None;
    }
    let t = n.table();
    let _ = realbin::nft_script(&format!("add table netdev {t}\ndelete table netdev {t}\n"));
    let _ = std::fs::remove_file(netem_dir().join(&dev));
    Some(0)
}

/// (dropped packets, sent packets, sent bytes) from the table's counters.
fn counters(n: &Netem) -> (u64, u64, u64) {
    let Ok(c) = realbin::capture("nft", &["-j", "list", "table", "netdev", &n.table()]) else {
        return (0, 0, 0);
    };
    let v: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap_or_default();
    let mut dropped = 0;
    let mut sent = (0, 0);
    for item in v["nftables"].as_array().into_iter().flatten() {
        let Some(rule) = item.get("rule") else {
            continue;
        };
        let chain = rule["chain"].as_str().unwrap_or("");
        for e in rule["expr"].as_array().into_iter().flatten() {
            if let Some(cn) = e.get("counter") {
                let p = cn["packets"].as_u64().unwrap_or(0);
                let b = cn["bytes"].as_u64().unwrap_or(0);
                if chain == "lossy" {
                    dropped = p;
                } else {
                    sent = (p, b);
                }
            }
        }
    }
    (dropped, sent.0, sent.1)
}

fn fmt_pct(p: f64) -> String {
    let s = format!("{p:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

fn show(globals: &[String], tail: &[String]) -> Option<i32> {
    let all = load_all();
    if all.is_empty()
        || globals
            .iter()
            .any(|g| g.starts_with('j') || g.starts_with('c'))
    {
        return None;
    }
    let stats = globals
        .iter()
        .any(|g| g == "s" || g == "stats" || g == "statistics");
    let q = parse_qdisc(tail);
    let mut args: Vec<String> = globals.iter().map(|g| format!("-{g}")).collect();
    args.push("qdisc".into());
    args.push("show".into());
    args.extend(tail.iter().cloned());
    let Ok(out) = realbin::capture_stdout("tc", &args) else {
        return None;
    };
    let text = out.text();
    let mut res = String::with_capacity(text.len() + 128);
    // Blocks: a `qdisc …` line plus its indented stats lines.
    let mut skip = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("qdisc ") {
            skip = false;
            let dev_here = q.dev.clone().or_else(|| {
                let w: Vec<&str> = line.split_whitespace().collect();
                w.iter()
                    .position(|x| *x == "dev")
                    .and_then(|p| w.get(p + 1))
                    .map(|s| s.to_string())
            });
            let is_root = line.contains(" root ");
            if is_root && let Some(n) = dev_here.and_then(|d| all.iter().find(|n| n.dev == d)) {
                {
                    let dev_part = if q.dev.is_some() {
                        String::new()
                    } else {
                        format!("dev {} ", n.dev)
                    };
                    res.push_str(&format!(
                        "qdisc netem {} {dev_part}root refcnt 2 limit {}",
                        n.handle, n.limit
                    ));
                    if n.loss > 0.0 {
                        res.push_str(&format!(" loss {}", fmt_pct(n.loss)));
                    }
                    res.push('\n');
                    if stats {
                        let (dropped, pkts, bytes) = counters(n);
                        res.push_str(&format!(
                            " Sent {bytes} bytes {pkts} pkt (dropped {dropped}, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n"
                        ));
                    }
                    skip = true;
                    continue;
                }
            }
        } else if skip {
            continue;
        }
        res.push_str(line);
    }
    let mut so = std::io::stdout();
    let _ = so.write_all(res.as_bytes());
    let _ = so.flush();
    Some(out.code())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn netem_options() {
        assert_eq!(parse_netem(&v("loss 30%")).unwrap(), (1000, 30.0));
        assert_eq!(
            parse_netem(&v("limit 50 loss random 0.5")).unwrap(),
            (50, 0.5)
        );
        assert_eq!(parse_netem(&v("delay 0ms loss 5%")).unwrap(), (1000, 5.0));
        assert_eq!(parse_netem(&v("delay 100ms")), Err(95));
        assert_eq!(parse_netem(&v("loss 10% delay 20ms 5ms")), Err(95));
        assert_eq!(parse_netem(&v("duplicate 1%")), Err(95));
        assert_eq!(parse_netem(&v("loss gemodel 1% 10%")), Err(95));
        assert_eq!(parse_netem(&v("loss 10% 25%")), Err(95));
        assert_eq!(parse_netem(&v("loss 130%")), Err(1));
        assert_eq!(fmt_pct(30.0), "30%");
        assert_eq!(fmt_pct(0.5), "0.5%");
    }
}
