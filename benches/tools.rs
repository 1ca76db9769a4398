//! Bench of the 22 network tools (issue 5's targets).
//!
//! 1. Tool overhead over the underlying command, on a mock network (the tool layer alone) and
//!    on a live netns lab (target: ≤ 10 ms per call): median of interleaved runs of the raw
//!    `Lab::exec` and of the tool that wraps the same command.
//! 2. `get_reachability` over all host pairs of a 20-host live lab (target: ≤ 2 s).
//!
//! The live parts need root, FRR and iproute2 (the netns backend). Run:
//!
//! ```text
//! cargo bench --bench tools            # all parts
//! cargo bench --bench tools -- mock    # only the mock part (no root needed)
//! ```
//!
//! Exits non-zero when a target is missed.

use faultbench::core::{Command, Emulator, Lab, LabRequest, Toolbox};
use faultbench::emu::mock::MockEmulator;
use faultbench::emu::netns::NetnsEmulator;
use faultbench::emu::tools::{NikaTools, ToolOptions};
use serde_json::{Value, json};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(10);

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// (tool, arguments, device, the command the tool runs)
fn cases() -> Vec<(&'static str, Value, &'static str, Command)> {
    vec![
        (
            "ip_addr_statistics",
            json!({"host_name": "pc1"}),
            "pc1",
            Command::argv(["ip", "-s", "addr"]),
        ),
        (
            "get_tc_statistics",
            json!({"host_name": "r1", "intf_name": "eth0"}),
            "r1",
            Command::argv(["tc", "-s", "qdisc", "show", "dev", "eth0"]),
        ),
        (
            "frr_show_ip_route",
            json!({"router_name": "r1"}),
            "r1",
            Command::argv(["vtysh", "-c", "show ip route"]),
        ),
        (
            "cat_file",
            json!({"host_name": "r1", "file_path": "/etc/frr/frr.conf"}),
            "r1",
            Command::argv(["cat", "--", "/etc/frr/frr.conf"]),
        ),
    ]
}

/// Interleaves raw execs and tool calls; returns (tool, raw median ms, tool median ms).
async fn overhead(lab: Arc<dyn Lab>, runs: usize) -> Vec<(&'static str, f64, f64)> {
    let tools = NikaTools::new(lab.clone()).with_config(ToolOptions::fast());
    let mut out = Vec::new();
    for (name, args, dev, cmd) in cases() {
        let (mut raw, mut tool) = (Vec::new(), Vec::new());
        for i in 0..runs + 3 {
            let t0 = Instant::now();
            let r = lab.exec(dev, &cmd, T).await.expect("raw exec");
            let raw_ms = t0.elapsed().as_secs_f64() * 1e3;
            let t0 = Instant::now();
            let o = tools.call(name, args.clone()).await.expect("tool call");
            let tool_ms = t0.elapsed().as_secs_f64() * 1e3;
            assert!(r.success() && !o.is_error, "{name}: {}", o.text);
            if i >= 3 {
                raw.push(raw_ms);
                tool.push(tool_ms);
            }
        }
        out.push((name, median(&mut raw), median(&mut tool)));
    }
    out
}

fn report_overhead(title: &str, rows: &[(&str, f64, f64)], limit_ms: f64) -> bool {
    println!("\n{title}");
    println!("| tool | raw command (median ms) | tool call (median ms) | overhead (ms) |");
    println!("|---|---|---|---|");
    let mut ok = true;
    for (name, raw, tool) in rows {
        let over = tool - raw;
        ok &= over <= limit_ms;
        println!("| {name} | {raw:.3} | {tool:.3} | {over:.3} |");
    }
    println!(
        "target: overhead ≤ {limit_ms} ms → {}",
        if ok { "met" } else { "MISSED" }
    );
    ok
}

async fn mock_part() -> bool {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/faultbench-emu/tests/data/mock/triangle.toml"
    );
    let lab = MockEmulator::new()
        .deploy(&LabRequest::new(file))
        .await
        .expect("mock lab");
    // On the mock the "command" costs nothing, so this is the tool layer alone
    // (validation, argv building, rendering, capping).
    let rows: Vec<(&str, f64, f64)> = {
        let tools = NikaTools::new(lab.clone()).with_config(ToolOptions::fast());
        let mut rows = Vec::new();
        for (name, args) in [
            ("ip_addr_statistics", json!({"host_name": "pc1"})),
            ("frr_show_ip_route", json!({"router_name": "r1"})),
            ("get_reachability", json!({})),
        ] {
            let mut v = Vec::new();
            for _ in 0..200 {
                let t0 = Instant::now();
                tools.call(name, args.clone()).await.expect("tool");
                v.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            rows.push((name, 0.0, median(&mut v)));
        }
        rows
    };
    report_overhead(
        "Mock network (tool layer alone, 200 calls each)",
        &rows,
        10.0,
    )
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write lab file");
}

/// A lab of `n` hosts on one LAN (`pc1`…`pcN`, 10.62.0.1…).
fn many_hosts(dir: &Path, n: usize) {
    let mut conf = String::from("# Generated by the tools bench: N hosts on one LAN.\n");
    for i in 1..=n {
        conf.push_str(&format!("pc{i}[0]=lan\n"));
        write(
            dir,
            &format!("pc{i}.startup"),
            &format!("ip addr add 10.62.0.{i}/24 dev eth0\nip link set eth0 up\n"),
        );
    }
    write(dir, "lab.conf", &conf);
}

async fn live_part() -> bool {
    let emu = NetnsEmulator::new();
    let pid = std::process::id();
    let small =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/faultbench-emu/tests/labs/h6_tools");
    let lab = match emu
        .deploy(&LabRequest::new(&small).named(format!("h6b-{pid}")))
        .await
    {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "cannot deploy {}: {e} (the live part needs root and FRR)",
                small.display()
            );
            return false;
        }
    };
    let rows = overhead(lab.clone(), 40).await;
    let _ = lab.teardown().await;
    let ok1 = report_overhead(
        "Live netns lab h6_tools (40 interleaved runs each)",
        &rows,
        10.0,
    );

    let dir = tempfile_dir();
    many_hosts(&dir, 20);
    let lab = match emu
        .deploy(&LabRequest::new(&dir).named(format!("h6r-{pid}")))
        .await
    {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cannot deploy the 20-host lab: {e}");
            let _ = std::fs::remove_dir_all(&dir);
            return false;
        }
    };
    let tools = NikaTools::new(lab.clone()).with_config(ToolOptions::fast());
    let mut times = Vec::new();
    let mut pairs_ok = 0;
    for _ in 0..5 {
        let t0 = Instant::now();
        let out = tools
            .call("get_reachability", json!({}))
            .await
            .expect("reachability");
        times.push(t0.elapsed().as_secs_f64());
        let v: Value = serde_json::from_str(&out.text).expect("json");
        pairs_ok = v["summary"]["ok"].as_u64().unwrap_or(0);
        assert_eq!(v["summary"]["pairs"], 380, "{}", v["summary"]);
    }
    let _ = lab.teardown().await;
    let _ = std::fs::remove_dir_all(&dir);
    let worst = times.iter().copied().fold(0.0, f64::max);
    let med = median(&mut times);
    let ok2 = worst <= 2.0 && pairs_ok == 380;
    println!("\nget_reachability, 20 hosts on one LAN, all 380 ordered pairs (5 runs)");
    println!("median {med:.3} s, worst {worst:.3} s, pairs ok {pairs_ok}/380");
    println!("target: ≤ 2 s → {}", if ok2 { "met" } else { "MISSED" });
    ok1 && ok2
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("faultbench-tools-bench-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn main() -> ExitCode {
    // `cargo test --all-targets` also runs bench binaries (without `--bench`): measure only
    // under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        println!("tools bench: run with `cargo bench --bench tools`");
        return ExitCode::SUCCESS;
    }
    let only_mock = std::env::args().any(|a| a == "mock");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let ok = rt.block_on(async {
        let mut ok = mock_part().await;
        if !only_mock {
            ok &= live_part().await;
        }
        ok
    });
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
