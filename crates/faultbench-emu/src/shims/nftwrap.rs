//! The `nft` wrapper: keeps the emulations' own nftables tables out of sight and out of reach
//! of whole-ruleset operations.
//!
//! The VLAN, bond and netem emulations live in `netdev` tables named `fbshim_*` and
//! `fbnetem_*`. On a real kernel none of that would exist, so an agent reading
//! `nft list ruleset` must not see them (a `vlan id 10 drop` rule would look like a fault), and
//! a lab's `flush ruleset` must not tear them down (a VLAN device does not vanish with the
//! firewall). `list ruleset` / `list tables` are filtered; `flush ruleset`, also inside a file
//! given with `-f`, deletes every table except ours. Everything else is the real `nft`.

use super::realbin;
use std::ffi::OsString;
use std::io::{Read, Write};

/// Whether a table belongs to the emulations.
pub fn is_ours(name: &str) -> bool {
    name.starts_with("fbshim_") || name.starts_with("fbnetem_")
}

/// Entry point of the `nft` wrapper.
pub fn main(argv0: &OsString, args: &[OsString]) -> i32 {
    if let Some(s) = args
        .iter()
        .map(|a| a.to_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        && let Some(code) = handle(&s)
    {
        return code;
    }
    let e = realbin::exec("nft", argv0, args);
    eprintln!("faultbench-netshim: cannot run the real nft: {e}");
    127
}

fn handle(args: &[String]) -> Option<i32> {
    let mut opts = Vec::new();
    let mut file = None;
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        match args[i].as_str() {
            "-f" | "--file" => {
                file = Some(args.get(i + 1)?.clone());
                i += 1;
            }
            "-I" | "--includepath" | "-o" | "--optimize" => {
                opts.push(args[i].clone());
                opts.push(args.get(i + 1)?.clone());
                i += 1;
            }
            _ => opts.push(args[i].clone()),
        }
        i += 1;
    }
    let words: Vec<&str> = args[i..]
        .iter()
        .flat_map(|a| a.split_whitespace())
        .collect();
    if let Some(f) = file {
        return run_file(&opts, &f);
    }
    match words.as_slice() {
        ["list", "ruleset" | "tables", ..] => Some(list(&opts, args)),
        ["flush", "ruleset", fam @ ..] => Some(flush(&opts, fam.first().copied())),
        _ => None,
    }
}

/// `nft list ruleset|tables …` without our tables.
fn list(opts: &[String], args: &[String]) -> i32 {
    let out = match realbin::capture_stdout("nft", args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("faultbench-netshim: cannot run the real nft: {e}");
            return 127;
        }
    };
    let json = opts.iter().any(|o| o == "-j" || o == "--json");
    let text = out.text();
    let filtered = if json {
        filter_json(&text)
    } else {
        filter_text(&text)
    };
    let mut so = std::io::stdout();
    let _ = so.write_all(filtered.as_bytes());
    let _ = so.flush();
    out.code()
}

/// Drop `table <family> fbshim_… { … }` blocks (and `list tables` lines) from text output.
pub fn filter_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        if skipping {
            if line.starts_with('}') {
                skipping = false;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("table ") {
            let name = rest.split_whitespace().nth(1).unwrap_or("");
            if is_ours(name) {
                skipping = line.trim_end().ends_with('{');
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

/// Drop objects of our tables from `nft -j` output, keeping the rest byte for byte.
fn filter_json(text: &str) -> String {
    let Some(open) = text.find('[') else {
        return text.to_string();
    };
    let mut kept = Vec::new();
    let mut dropped = false;
    let mut i = open + 1;
    let mut end = open + 1;
    while let Some(off) = text[i..].find(['{', ']']) {
        let start = i + off;
        if text.as_bytes()[start] == b']' {
            end = start;
            break;
        }
        let Some(len) = super::iprender::balanced_len(&text[start..]) else {
            return text.to_string();
        };
        let raw = &text[start..start + len];
        if mentions_ours(raw) {
            dropped = true;
        } else {
            kept.push(raw);
        }
        i = start + len;
        end = i;
    }
    if !dropped {
        return text.to_string();
    }
    let sep = if text.contains("}, {") { ", " } else { "," };
    format!("{}{}{}", &text[..=open], kept.join(sep), &text[end..])
}

fn mentions_ours(raw: &str) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(raw) else {
        return false;
    };
    v.as_object().is_some_and(|o| {
        o.iter().any(|(k, body)| {
            let name = match k.as_str() {
                "table" => body.get("name"),
                _ => body.get("table"),
            };
            name.and_then(|n| n.as_str()).is_some_and(is_ours)
        })
    })
}

/// The tables to delete instead of `flush ruleset [family]`.
fn deletes(family: Option<&str>) -> String {
    let Ok(c) = realbin::capture("nft", &["list", "tables"]) else {
        return String::new();
    };
    let mut script = String::new();
    for line in c.text().lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if let ["table", fam, name] = w.as_slice()
            && !is_ours(name)
            && family.is_none_or(|f| f == *fam)
        {
            script.push_str(&format!("delete table {fam} {name}\n"));
        }
    }
    script
}

fn flush(opts: &[String], family: Option<&str>) -> i32 {
    let script = deletes(family);
    if script.is_empty() {
        return 0;
    }
    run_script(opts, &script)
}

fn run_script(opts: &[String], script: &str) -> i32 {
    let nft = match realbin::find("nft") {
        Ok(p) => p,
        Err(e) => {
            eprintln!("faultbench-netshim: {e}");
            return 127;
        }
    };
    let child = std::process::Command::new(nft)
        .args(opts)
        .args(["-f", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("faultbench-netshim: cannot run the real nft: {e}");
            return 127;
        }
    };
    if let Some(mut sin) = child.stdin.take() {
        let _ = sin.write_all(script.as_bytes());
    }
    child.wait().map(|s| s.code().unwrap_or(1)).unwrap_or(1)
}

/// `nft -f FILE`: a `flush ruleset` inside becomes deletes of every table but ours.
fn run_file(opts: &[String], file: &str) -> Option<i32> {
    let mut text = String::new();
    if file == "-" {
        std::io::stdin().read_to_string(&mut text).ok()?;
    } else {
        text = std::fs::read_to_string(file).ok()?;
    }
    let flushes = text
        .lines()
        .any(|l| l.trim_start().starts_with("flush ruleset"));
    if !flushes {
        if file == "-" {
            return Some(run_script(opts, &text));
        }
        return None;
    }
    let mut script = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("flush ruleset") {
            let fam = rest
                .split_whitespace()
                .next()
                .filter(|w| !w.starts_with('#'));
            script.push_str(&deletes(fam.map(|f| f.trim_end_matches(';'))));
        } else {
            script.push_str(line);
            script.push('\n');
        }
    }
    Some(run_script(opts, &script))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_tables_are_hidden_from_text_listings() {
        let t = "table inet filter {\n\tchain c {\n\t}\n}\ntable netdev fbshim_9 {\n\tchain in0 {\n\t\tvlan id 10 drop\n\t}\n}\ntable netdev fbnetem_2 {\n}\n";
        assert_eq!(filter_text(t), "table inet filter {\n\tchain c {\n\t}\n}\n");
        assert_eq!(
            filter_text("table inet filter\ntable netdev fbshim_3\n"),
            "table inet filter\n"
        );
    }

    #[test]
    fn our_objects_are_hidden_from_json_listings() {
        let j = r#"{"nftables":[{"metainfo":{"version":"1.0.6"}},{"table":{"family":"netdev","name":"fbshim_9","handle":1}},{"chain":{"family":"netdev","table":"fbshim_9","name":"in0"}},{"table":{"family":"inet","name":"f","handle":2}}]}"#;
        let v: serde_json::Value = serde_json::from_str(&filter_json(j)).unwrap();
        let items = v["nftables"].as_array().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1]["table"]["name"], "f");
    }
}
