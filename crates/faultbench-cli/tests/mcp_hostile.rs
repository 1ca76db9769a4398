//! Issue 19, finding 9: `faultbench mcp` (stdio) under bad input. An unparsable line gets a
//! JSON-RPC parse error (-32700) instead of silence; error messages never echo huge tool names
//! or arguments; `--record` logs capped arguments and outputs. Raw stdin lines for the framing
//! cases, the official Python client (`mcp_hostile.py`) for the rest.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_faultbench");

fn mock() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../faultbench-emu/tests/data/mock/triangle.toml")
}

/// Sends raw lines; returns the server's answer lines (each parsed), waiting for `want` of
/// them at most 20 s.
fn raw_session(lines: &[String], want: usize) -> Vec<Value> {
    let mut child = Command::new(BIN)
        .args(["mcp", "--sample-every", "0", "--mock"])
        .arg(mock())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    for l in lines {
        stdin.write_all(l.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
    }
    stdin.flush().unwrap();
    let mut out = Vec::new();
    while out.len() < want {
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(l) => out.push(serde_json::from_str(&l).expect("every answer line is JSON")),
            Err(_) => break,
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    out
}

fn init_lines() -> Vec<String> {
    vec![
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#.into(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into(),
    ]
}

#[test]
fn unparsable_lines_get_json_rpc_errors() {
    let mut lines = init_lines();
    lines.push("{this is not json".into());
    lines.push(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"not an object"}"#.into());
    lines.push("\u{1}\u{2}binary garbage".into());
    lines.push(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#.into());
    let answers = raw_session(&lines, 5);
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).cloned();
    assert!(
        by_id(0.into()).is_some_and(|a| a["result"].is_object()),
        "{answers:#?}"
    );
    let parse_errors: Vec<&Value> = answers
        .iter()
        .filter(|a| a["id"].is_null() && a["error"]["code"] == -32700)
        .collect();
    assert_eq!(
        parse_errors.len(),
        2,
        "one -32700 per unparsable line: {answers:#?}"
    );
    let seven = by_id(7.into()).expect("a malformed request gets an answer with its id");
    assert!(seven["error"]["code"].as_i64().is_some(), "{seven}");
    assert!(
        by_id(8.into()).is_some_and(|a| a["result"].is_object()),
        "still serving: {answers:#?}"
    );
}

#[test]
fn huge_names_and_arguments_are_not_echoed_and_records_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("calls.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_hostile.py");
    let out = Command::new(faultbench_testkit::mcp_python())
        .arg(script)
        .arg(BIN)
        .args(["--", "--sample-every", "0", "--mock"])
        .arg(mock())
        .arg("--record")
        .arg(&record)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim().lines().last().unwrap()).unwrap();
    for k in [
        "huge_name_error_len",
        "huge_arg_error_len",
        "huge_host_error_len",
    ] {
        let n = seen[k]
            .as_u64()
            .unwrap_or_else(|| panic!("{k} missing: {seen}"));
        assert!(n < 2_000, "{k}: {n} characters echoed back");
    }
    assert_eq!(seen["still_serving"], true);
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(text.lines().count() >= 3, "{}", text.len());
    for line in text.lines() {
        assert!(
            line.len() < 64 * 1024,
            "a record line of {} bytes",
            line.len()
        );
    }
    assert!(text.contains("truncated"), "the cut is marked");
}
