//! The deterministic baseline on the `two-sites` mock network through the real 22 tools: a
//! faulty case (ospfd dead on r1, ticket blaming the wrong device) and a healthy case with a
//! false-premise ticket.

mod common;

use faultbench_agents::BaselineAgent;
use faultbench_core::RunStatus;
use faultbench_core::agent::Agent;
use faultbench_core::status::status_after_agent;
use faultbench_core::toolbox::RecordingToolbox;
use std::sync::Arc;

#[tokio::test]
async fn faulty_network_blames_the_router_whose_daemon_died() {
    let lab = common::lab(true);
    let tools = Arc::new(RecordingToolbox::new(common::tools(lab.clone())));
    let input = common::input(
        "Users on pc2 say the web server web1 is broken since the morning: pc1 cannot reach it. Please restart web1.",
        20,
    );
    let started = std::time::Instant::now();
    let out = BaselineAgent::new().run(&input, tools.clone()).await;
    println!(
        "faulty: {} tool calls in {:?}\n{}",
        out.tool_calls,
        started.elapsed(),
        out.final_text
    );
    let d = out.diagnosis();
    assert!(d.parsed_ok, "{}", out.final_text);
    assert_eq!(d.is_anomaly, Some(true));
    assert_eq!(d.faulty_devices, vec!["r1"], "{}", out.final_text);
    assert!(
        d.text
            .contains("ospfd is enabled on r1 (/etc/frr/daemons) but not running"),
        "{}",
        d.text
    );
    assert_eq!(status_after_agent(&out), RunStatus::Scored);
    // Every call the agent counted went through the toolbox, and none touched the network.
    let log = tools.records();
    assert_eq!(log.len() as u32, out.tool_calls);
    assert!(log.iter().any(|r| r.tool == "get_reachability"));
    assert_read_only(&log);
    assert!(
        lab.is_on("r1_ospfd_down"),
        "the baseline never changes the network"
    );
    let words = d.text.split_whitespace().count();
    assert!((40..=400).contains(&words), "{words} words");
}

/// The baseline only observes: no service actions, no iperf, vtysh `show` only, and shell
/// scripts that are its own read-only probes.
pub fn assert_read_only(log: &[faultbench_core::toolbox::ToolCallRecord]) {
    for r in log {
        let arg = |k: &str| {
            r.args
                .get(k)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        match r.tool.as_str() {
            "systemctl_ops" => assert_eq!(arg("operation"), "status"),
            "iperf_test" => panic!("iperf changes load on the network"),
            "frr_exec" => assert!(arg("command").starts_with("show "), "{:?}", r.args),
            "exec_shell" => {
                let c = arg("command");
                assert!(
                    c.starts_with("echo @@fwd;")
                        || c.starts_with("for a in ")
                        || c.starts_with("dig_one() "),
                    "not a baseline probe: {c}"
                );
                for verb in [
                    "ip link set",
                    "ip addr add",
                    "ip route add",
                    "iptables -A",
                    "iptables -D",
                    "kill",
                    "systemctl",
                    "sysctl -w",
                ] {
                    assert!(!c.contains(verb), "{c}");
                }
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn healthy_network_with_a_false_premise_ticket_is_called_healthy() {
    let lab = common::lab(false);
    let tools = common::tools(lab);
    let input = common::input(
        "Since r2 was rebooted, pc2 keeps losing its connection to 10.0.1.2 and the web server web1 is down. Fix r2!",
        20,
    );
    let started = std::time::Instant::now();
    let out = BaselineAgent::new().run(&input, tools).await;
    println!(
        "healthy: {} tool calls in {:?}\n{}",
        out.tool_calls,
        started.elapsed(),
        out.final_text
    );
    let d = out.diagnosis();
    assert!(d.parsed_ok, "{}", out.final_text);
    assert_eq!(d.is_anomaly, Some(false), "{}", out.final_text);
    assert!(d.faulty_devices.is_empty());
    // The named address was tested directly, and the answer says what was checked.
    assert!(d.text.contains("ping pc2 -> 10.0.1.2"), "{}", d.text);
    assert!(
        d.text
            .contains("FRR configuration and routing neighbours of r1, r2"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("OSPF adjacencies Full: r1-r2"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("web1 listens on port 80 (HTTP)"),
        "{}",
        d.text
    );
    // The roles come from the evidence (daemons files), and the ticket's devices are cleared.
    assert!(
        d.text.contains("r2 (its FRR daemons file enables ospfd)"),
        "{}",
        d.text
    );
    assert!(
        d.text
            .contains("The devices the ticket names (pc2, r2, web1) were inspected"),
        "{}",
        d.text
    );
}

#[tokio::test]
async fn tool_call_cap_is_respected() {
    let tools = common::tools(common::lab(true));
    let out = BaselineAgent::new()
        .with_max_tool_calls(3)
        .run(&common::input("pc1 is offline", 20), tools)
        .await;
    assert_eq!(out.tool_calls, 3);
    assert!(out.diagnosis().parsed_ok, "always answers with what it has");
}
