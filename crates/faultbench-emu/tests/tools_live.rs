//! The 22 tools on a live netns lab (needs root, FRR, iproute2; CI runs it as root).
//!
//! Lab: `tests/labs/h6_tools` — r1 and r2 (OSPF), pc1 behind r1, pc2 and web1 (HTTP) behind r2.

use faultbench_core::toolbox::RecordingToolbox;
use faultbench_core::toolbox::{Policy, PolicyToolbox};
use faultbench_core::{Command, Emulator, Lab, LabRequest, ToolError, Toolbox};
use faultbench_emu::netns::NetnsEmulator;
use faultbench_emu::tools::telemetry::{Collector, TelemetryStore};
use faultbench_emu::tools::{NikaTools, TOOL_NAMES, ToolOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Tears the lab down when the test ends, whatever happens.
struct Up(Arc<dyn Lab>);
impl Drop for Up {
    fn drop(&mut self) {
        let lab = self.0.clone();
        // The test's runtime may be shutting down: tear down on a fresh one.
        let _ = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Runtime::new() {
                let _ = rt.block_on(lab.teardown());
            }
        })
        .join();
    }
}

async fn deploy(tag: &str) -> Up {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/labs/h6_tools");
    let name = format!("h6{tag}-{}", std::process::id() % 100_000);
    let lab = NetnsEmulator::new()
        .deploy(&LabRequest::new(dir).named(name))
        .await
        .expect("the h6_tools lab deploys (run as root with FRR installed)");
    Up(lab)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_on_a_live_lab_then_a_fault() {
    let up = deploy("t").await;
    let lab = up.0.clone();
    let store = Arc::new(TelemetryStore::new());
    let collector = Collector::start(lab.clone(), store.clone(), Duration::from_millis(300));
    let tools = NikaTools::new(lab.clone())
        .with_config(ToolOptions::fast())
        .with_telemetry(store.clone());

    let calls: Vec<(&str, Value, &str)> = vec![
        ("get_reachability", json!({}), "\"ok\":6"),
        (
            "ping_pair",
            json!({"host_a": "pc1", "host_b": "pc2", "count": 2}),
            "2 packets transmitted, 2 received, 0% packet loss",
        ),
        (
            "systemctl_ops",
            json!({"host_name": "r1", "service_name": "frr", "operation": "status"}),
            "ospfd",
        ),
        (
            "get_host_net_config",
            json!({"host_name": "pc1"}),
            "10.61.1.10",
        ),
        (
            "get_tc_statistics",
            json!({"host_name": "r1", "intf_name": "eth0"}),
            "qdisc",
        ),
        ("netstat", json!({"host_name": "web1"}), ":80"),
        ("ip_addr_statistics", json!({"host_name": "pc2"}), "RX:"),
        (
            "ethtool",
            json!({"host_name": "r1", "interface": "eth1", "args": "-i"}),
            "driver: veth",
        ),
        (
            "curl_web_test",
            json!({"host_name": "pc1", "url": "http://10.61.2.80/", "times": 2}),
            "http_code:200",
        ),
        (
            "iperf_test",
            json!({"client_host_name": "pc1", "server_host_name": "web1", "duration": 1}),
            "receiver",
        ),
        (
            "cat_file",
            json!({"host_name": "r1", "file_path": "/etc/frr/frr.conf"}),
            "router ospf",
        ),
        (
            "exec_shell",
            json!({"host_name": "pc2", "command": "hostname && ip route show default"}),
            "pc2\ndefault via 10.61.2.1",
        ),
        (
            "exec_shell_dual",
            json!({"host1": "pc1", "cmd1": "hostname", "host2": "web1", "cmd2": "hostname"}),
            "{\"host1\":[\"pc1\"],\"host2\":[\"web1\"]}",
        ),
        (
            "frr_get_bgp_conf",
            json!({"router_name": "r1"}),
            "bgpd is not running",
        ),
        (
            "frr_show_running_config",
            json!({"router_name": "r2"}),
            "ospf router-id 10.61.0.2",
        ),
        (
            "frr_show_ip_route",
            json!({"router_name": "r1"}),
            "O>* 10.61.2.0/24",
        ),
        (
            "frr_get_ospf_conf",
            json!({"router_name": "r1"}),
            "Router ID: 10.61.0.1",
        ),
        (
            "frr_exec",
            json!({"router_name": "r1", "command": "show ip ospf neighbor"}),
            "Full",
        ),
        ("influx_list_buckets", json!({}), "lab_telemetry"),
        ("influx_get_measurements", json!({}), "\"processes\""),
        (
            "influx_count_measurements",
            json!({"measurement": "interface"}),
            "\"count\"",
        ),
        (
            "influx_query_measurement",
            json!({"measurement": "routes", "limit": 5}),
            "\"device\"",
        ),
    ];
    assert_eq!(calls.iter().map(|c| c.0).collect::<Vec<_>>(), TOOL_NAMES);
    for (name, args, want) in calls {
        let started = Instant::now();
        let out = tools
            .call(name, args.clone())
            .await
            .unwrap_or_else(|e| panic!("{name}({args}): {e}"));
        assert!(
            out.text.contains(want),
            "{name}({args}) in {:?}: `{want}` not in\n{}",
            started.elapsed(),
            out.text
        );
    }
    // iperf stopped its server: no iperf3 left on web1.
    let left = lab
        .exec(
            "web1",
            &Command::argv(["pgrep", "-x", "iperf3"]),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(
        left.exit_code,
        Some(1),
        "iperf3 server left running: {left:?}"
    );

    // A failed command shows its exit code and stderr.
    let out = tools
        .call(
            "cat_file",
            json!({"host_name": "pc1", "file_path": "/nonexistent/file"}),
        )
        .await
        .unwrap();
    assert!(out.is_error && out.exit_code == Some(1));
    assert!(out.text.contains("No such file or directory") && out.text.ends_with("[exit code 1]"));
    // A timeout is a flag and a footer.
    let quick = NikaTools::new(lab.clone()).with_config(ToolOptions {
        exec_timeout: Duration::from_secs(1),
        ..ToolOptions::fast()
    });
    let out = quick
        .call(
            "exec_shell",
            json!({"host_name": "pc1", "command": "echo started; sleep 5"}),
        )
        .await
        .unwrap();
    assert!(out.timed_out, "{out:?}");
    assert!(
        out.text
            .ends_with("[timed out after 1s: output may be partial]"),
        "{}",
        out.text
    );

    // The fault: ospfd dies on r1. Reachability, routes and telemetry all show it.
    let kill = lab
        .exec(
            "r1",
            &Command::shell("pkill -9 ospfd"),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert!(kill.success(), "{kill:?}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let v = loop {
        let v = json_of(
            &tools
                .call("get_reachability", json!({}))
                .await
                .unwrap()
                .text,
        );
        if v["summary"]["down"] == 4 || Instant::now() > deadline {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(v["summary"]["down"], 4, "pc1 cut off: {v}");
    assert_eq!(v["summary"]["ok"], 2);
    let route = tools
        .call("frr_get_ospf_conf", json!({"router_name": "r1"}))
        .await
        .unwrap();
    assert!(route.is_error, "ospfd is gone: {}", route.text);
    tokio::time::sleep(Duration::from_millis(700)).await;
    collector.stop();
    let (_, rows) = store
        .query(store.default_bucket(), "processes", 100_000, 0)
        .unwrap();
    let r1_ospfd: Vec<bool> = rows
        .iter()
        .filter(|p| p.tags["device"] == "r1" && p.tags["process"] == "ospfd")
        .map(|p| p.fields["running"] == true.into())
        .collect();
    assert_eq!(r1_ospfd.first(), Some(&true), "{r1_ospfd:?}");
    assert_eq!(r1_ospfd.last(), Some(&false), "{r1_ospfd:?}");
    drop(up);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_policy_on_a_live_lab() {
    let up = deploy("p").await;
    let lab = up.0.clone();
    let tools = RecordingToolbox::new(PolicyToolbox::new(
        NikaTools::new(lab.clone()).with_config(ToolOptions::fast()),
        Policy::ReadOnly,
    ));
    let stop = json!({"host_name": "r1", "service_name": "frr", "operation": "stop"});
    assert!(matches!(
        tools.call("systemctl_ops", stop).await,
        Err(ToolError::Refused { .. })
    ));
    let shell = json!({"host_name": "r1", "command": "pkill ospfd"});
    assert!(matches!(
        tools.call("exec_shell", shell).await,
        Err(ToolError::Refused { .. })
    ));
    // Nothing changed: ospfd still runs, and read-only calls still work.
    let pg = lab
        .exec(
            "r1",
            &Command::argv(["pgrep", "-x", "ospfd"]),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert!(pg.success(), "{pg:?}");
    let out = tools
        .call(
            "frr_exec",
            json!({"router_name": "r1", "command": "show ip ospf neighbor"}),
        )
        .await
        .unwrap();
    assert!(out.text.contains("Full"), "{}", out.text);
    let recs = tools.records();
    assert_eq!(recs.iter().filter(|r| r.refused).count(), 2);
    assert_eq!(recs.len(), 3);
    drop(up);
}
