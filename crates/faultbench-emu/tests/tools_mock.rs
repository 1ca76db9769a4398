//! The 22 tools on mock networks: shapes, the improvements over the release, validation,
//! policies, recording and telemetry.

use faultbench_core::toolbox::{Policy, PolicyToolbox, RecordingToolbox};
use faultbench_core::{Command, Lab, ToolError, Toolbox};
use faultbench_emu::mock::{MockLab, MockNetwork};
use faultbench_emu::tools::telemetry::{self, Collector, Point, TelemetryStore};
use faultbench_emu::tools::{NikaTools, Reachability, TOOL_NAMES, ToolOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn triangle() -> Arc<MockLab> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
    Arc::new(MockLab::new(
        "t",
        Arc::new(MockNetwork::load(path).unwrap()),
    ))
}

fn tools(lab: &Arc<MockLab>) -> NikaTools {
    NikaTools::new(lab.clone()).with_config(ToolOptions::fast())
}

async fn call(t: &impl Toolbox, name: &str, args: Value) -> faultbench_core::ToolOutput {
    t.call(name, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{name}({args}) failed: {e}"))
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[tokio::test]
async fn every_tool_answers_on_the_mock() {
    let lab = triangle();
    let store = Arc::new(TelemetryStore::new());
    let mut seen = telemetry::SeenProcesses::new();
    telemetry::sample(lab.as_ref(), &store, &mut seen).await;
    let t = tools(&lab).with_telemetry(store);
    let calls: Vec<(&str, Value, &str)> = vec![
        ("get_reachability", json!({}), "\"summary\""),
        (
            "ping_pair",
            json!({"host_a": "pc1", "host_b": "web1"}),
            "4 packets transmitted, 4 received",
        ),
        (
            "systemctl_ops",
            json!({"host_name": "web1", "service_name": "nginx", "operation": "status"}),
            "active (running)",
        ),
        (
            "get_host_net_config",
            json!({"host_name": "pc1"}),
            "default via 10.0.1.1",
        ),
        (
            "get_tc_statistics",
            json!({"host_name": "r1", "intf_name": "eth1"}),
            "qdisc noqueue",
        ),
        ("netstat", json!({"host_name": "web1"}), "0.0.0.0:80"),
        (
            "ip_addr_statistics",
            json!({"host_name": "r2"}),
            "RX:  bytes",
        ),
        (
            "ethtool",
            json!({"host_name": "r1", "interface": "eth0", "args": ""}),
            "Speed: 10000Mb/s",
        ),
        (
            "curl_web_test",
            json!({"host_name": "pc2", "url": "http://10.0.3.2/", "times": 2}),
            "starttransfer",
        ),
        (
            "iperf_test",
            json!({"client_host_name": "pc1", "server_host_name": "web1", "duration": 3}),
            "Connecting to host 10.0.3.2",
        ),
        (
            "cat_file",
            json!({"host_name": "pc1", "file_path": "/etc/resolv.conf"}),
            "nameserver 10.0.3.53",
        ),
        (
            "exec_shell",
            json!({"host_name": "r1", "command": "pgrep ospfd"}),
            "231",
        ),
        (
            "exec_shell_dual",
            json!({"host1": "r1", "cmd1": "pgrep ospfd", "host2": "r2", "cmd2": "hostname"}),
            "\"host2\":[\"r2\"]",
        ),
        (
            "frr_get_bgp_conf",
            json!({"router_name": "r1"}),
            "not scripted",
        ),
        (
            "frr_show_running_config",
            json!({"router_name": "r1"}),
            "not scripted",
        ),
        (
            "frr_show_ip_route",
            json!({"router_name": "r1"}),
            "O>* 10.0.2.0/24",
        ),
        (
            "frr_get_ospf_conf",
            json!({"router_name": "r2"}),
            "Router ID: r2",
        ),
        (
            "frr_exec",
            json!({"router_name": "r1", "command": "show ip route"}),
            "O>* 10.0.3.0/24",
        ),
        (
            "influx_list_buckets",
            json!({}),
            "\"name\":\"lab_telemetry\"",
        ),
        ("influx_get_measurements", json!({}), "\"interface\""),
        (
            "influx_count_measurements",
            json!({"measurement": "routes"}),
            "\"count\":3",
        ),
        (
            "influx_query_measurement",
            json!({"measurement": "processes", "limit": 2}),
            "\"total\":9",
        ),
    ];
    let names: Vec<&str> = calls.iter().map(|c| c.0).collect();
    assert_eq!(names, TOOL_NAMES, "the test covers every tool");
    for (name, args, want) in calls {
        let out = call(&t, name, args).await;
        assert!(
            out.text.contains(want),
            "{name}: `{want}` not in\n{}",
            out.text
        );
    }
    // The release's vtysh commands, run as argv.
    let cmds: Vec<String> = lab.history().into_iter().map(|r| r.command).collect();
    for c in [
        "vtysh -c 'show ip bgp'",
        "vtysh -c 'show running-config'",
        "vtysh -c 'show ip ospf'",
        "ping -c 4 10.0.3.2",
    ] {
        assert!(cmds.iter().any(|x| x == c), "`{c}` not run: {cmds:?}");
    }
}

#[tokio::test]
async fn structured_outputs_have_the_release_shapes() {
    let lab = triangle();
    let t = tools(&lab);
    let cfg = parse(
        &call(&t, "get_host_net_config", json!({"host_name": "pc1"}))
            .await
            .text,
    );
    assert_eq!(cfg["host_name"], "pc1");
    for k in ["ifconfig", "ip_addr", "ip_route"] {
        assert!(cfg[k].is_string(), "{k}");
    }
    // ifconfig is missing on this image: its field says so with the exit code.
    assert!(
        cfg["ifconfig"]
            .as_str()
            .unwrap()
            .contains("[exit code 127]")
    );

    let dual = parse(
        &call(
            &t,
            "exec_shell_dual",
            json!({"host1": "pc1", "cmd1": "hostname", "host2": "r1", "cmd2": "pgrep ospfd"}),
        )
        .await
        .text,
    );
    assert_eq!(dual, json!({"host1": ["pc1"], "host2": ["231"]}));
}

#[tokio::test]
async fn reachability_is_complete_deterministic_and_follows_faults() {
    let lab = triangle();
    let t = tools(&lab);
    let a = call(&t, "get_reachability", json!({})).await.text;
    let b = call(&t, "get_reachability", json!(null)).await.text;
    assert_eq!(a, b, "same network, same report");
    let v = parse(&a);
    assert_eq!(v["mode"], "all_pairs");
    assert_eq!(
        v["hosts"],
        json!({"pc1": "10.0.1.2", "pc2": "10.0.2.2", "web1": "10.0.3.2"})
    );
    // The JSON object keeps the natural host order.
    assert!(a.find("\"pc1\"").unwrap() < a.find("\"web1\"").unwrap());
    let rows = v["results"].as_array().unwrap();
    let pairs: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["src"].as_str().unwrap().into(),
                r["dst"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("pc1", "pc2"),
        ("pc1", "web1"),
        ("pc2", "pc1"),
        ("pc2", "web1"),
        ("web1", "pc1"),
        ("web1", "pc2"),
    ]
    .iter()
    .map(|(s, d)| (s.to_string(), d.to_string()))
    .collect();
    assert_eq!(pairs, want);
    assert_eq!(rows[0]["status"], "ok");
    assert_eq!(rows[0]["tx"], 2);
    assert_eq!(rows[0]["rtt_avg_ms"], 0.058);

    lab.exec("r1", &Command::shell("pkill ospfd"), Duration::from_secs(1))
        .await
        .unwrap();
    let v = parse(&call(&t, "get_reachability", json!({})).await.text);
    assert_eq!(
        v["summary"],
        json!({"pairs": 6, "ok": 2, "unstable": 0, "down": 4, "timeout": 0, "unknown": 0})
    );
    let down: Vec<&Value> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "down")
        .collect();
    assert!(down.iter().all(|r| r["src"] == "pc1" || r["dst"] == "pc1"));
    assert_eq!(down[0]["loss_percent"], 100.0);
}

const EDGE: &str = r#"
[[device]]
name = "pc1"
interface = [{ name = "eth0", addr = "10.0.0.1/24" }]
[[device]]
name = "pc2"
interface = [{ name = "eth0", addr = "10.0.0.2/24" }]
[[device]]
name = "pc3"
interface = [{ name = "eth0", addr = "10.0.0.3/24" }]
[[device]]
name = "client9"
[[device]]
name = "r1"

[[rule]]
device = "*"
command = 'ping .* 10\.0\.0\.2$'
match = "regex"
timeout = true
[[rule]]
device = "*"
command = 'ping .* 10\.0\.0\.3$'
match = "regex"
exit_code = 2
stderr = "ping: sendmsg: Operation not permitted"
[[rule]]
device = "*"
command = 'ping .* 10\.0\.0\.1$'
match = "regex"
stdout = "4 packets transmitted, 3 received, 25% packet loss, time 3004ms\nrtt min/avg/max/mdev = 1/2/3/0.5 ms"
[[rule]]
device = "r1"
command = "vtysh -c 'show running-config'"
stdout = "{big}"
[[rule]]
device = "r1"
command = "sleep 30"
timeout = true
[[rule]]
device = "r1"
command = "false"
exit_code = 1
stdout = "some output"
stderr = "it went wrong"
"#;

fn edge_lab() -> Arc<MockLab> {
    let big = "x".repeat(10_000);
    let net = MockNetwork::parse(&EDGE.replace("{big}", &big)).unwrap();
    Arc::new(MockLab::new("edge", Arc::new(net)))
}

#[tokio::test]
async fn reachability_reports_timeouts_errors_and_unaddressed_hosts_explicitly() {
    let lab = edge_lab();
    let t = tools(&lab);
    let out = call(&t, "get_reachability", json!({})).await;
    assert!(out.timed_out, "a timed-out ping sets the flag");
    let v = parse(&out.text);
    assert_eq!(v["hosts_without_address"], json!(["client9"]));
    let row = |s: &str, d: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["src"] == s && r["dst"] == d)
            .cloned()
            .unwrap()
    };
    let to = row("pc1", "pc2");
    assert_eq!(to["status"], "timeout");
    assert!(
        to.get("tx").is_none() && to.get("loss_percent").is_none(),
        "no nulls: {to}"
    );
    let unk = row("pc1", "pc3");
    assert_eq!(unk["status"], "unknown");
    assert_eq!(unk["error"], "ping: sendmsg: Operation not permitted");
    assert_eq!(row("pc2", "pc1")["status"], "unstable");
    assert_eq!(v["summary"]["pairs"], 6);

    // A seeded sample: the same seed gives the same pairs.
    let cfg = |seed| ToolOptions {
        reachability: Reachability::Sample {
            destinations: 1,
            seed,
        },
        ..ToolOptions::fast()
    };
    let s1 = call(
        &tools(&lab).with_config(cfg(7)),
        "get_reachability",
        json!({}),
    )
    .await
    .text;
    let s2 = call(
        &tools(&lab).with_config(cfg(7)),
        "get_reachability",
        json!({}),
    )
    .await
    .text;
    assert_eq!(s1, s2);
    let v = parse(&s1);
    assert_eq!(v["mode"], "sample");
    assert_eq!(v["seed"], 7);
    let dsts: std::collections::BTreeSet<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["dst"].as_str().unwrap())
        .collect();
    assert_eq!(dsts.len(), 1);
    assert_eq!(v["summary"]["pairs"], 2);

    // A configured host list replaces the naming rule.
    let only = ToolOptions {
        hosts: Some(vec!["pc2".into(), "pc1".into()]),
        ..ToolOptions::fast()
    };
    let v = parse(
        &call(
            &tools(&lab).with_config(only),
            "get_reachability",
            json!({}),
        )
        .await
        .text,
    );
    assert_eq!(v["hosts"], json!({"pc1": "10.0.0.1", "pc2": "10.0.0.2"}));
}

#[tokio::test]
async fn reachability_fits_the_cap_and_says_what_it_left_out() {
    // 12 hosts → 132 pairs, far over a 2000-char cap.
    let mut text = String::new();
    for i in 1..=12 {
        text.push_str(&format!(
            "[[device]]\nname = \"pc{i}\"\ninterface = [{{ name = \"eth0\", addr = \"10.0.0.{i}/24\" }}]\n"
        ));
    }
    text.push_str(
        "[[rule]]\ndevice = \"*\"\ncommand = '^ping.*'\nmatch = \"regex\"\nstdout = \"2 packets transmitted, 2 received, 0% packet loss, time 1ms\"\n\
         [[rule]]\ndevice = \"pc3\"\ncommand = '^ping.*'\nmatch = \"regex\"\nexit_code = 1\nstdout = \"2 packets transmitted, 0 received, 100% packet loss, time 1ms\"\n",
    );
    let lab = Arc::new(MockLab::new(
        "big",
        Arc::new(MockNetwork::parse(&text).unwrap()),
    ));
    let cfg = ToolOptions {
        reachability_cap: 2000,
        ..ToolOptions::fast()
    };
    let out = call(&tools(&lab).with_config(cfg), "get_reachability", json!({})).await;
    assert!(out.truncated);
    assert!(out.text.chars().count() <= 2000, "{}", out.text.len());
    let v = parse(&out.text);
    assert_eq!(v["summary"]["pairs"], 132);
    assert_eq!(v["summary"]["down"], 11);
    // Only the problem rows are listed, and the marker says how many ok rows were left out.
    assert!(
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] == "down")
    );
    assert_eq!(
        v["truncated"],
        "121 ok rows of 132 not listed (see summary)"
    );
}

#[tokio::test]
async fn caps_failures_and_timeouts_are_explicit() {
    let lab = edge_lab();
    let t = tools(&lab);
    let big = call(&t, "frr_show_running_config", json!({"router_name": "r1"})).await;
    assert!(big.truncated && !big.is_error);
    assert!(
        big.text
            .ends_with("\n...[truncated: 6000 of 10000 chars not shown]"),
        "{}",
        &big.text[3990..]
    );

    let fail = call(
        &t,
        "exec_shell",
        json!({"host_name": "r1", "command": "false"}),
    )
    .await;
    assert!(fail.is_error);
    assert_eq!(fail.exit_code, Some(1));
    assert_eq!(
        fail.text,
        "some output\n[stderr]\nit went wrong\n[exit code 1]"
    );

    let slow = call(
        &t,
        "exec_shell",
        json!({"host_name": "r1", "command": "sleep 30"}),
    )
    .await;
    assert!(slow.timed_out && slow.exit_code.is_none());
    assert_eq!(slow.text, "[timed out after 10s: output may be partial]");

    // An unresolvable destination host is a readable failure, not a crash.
    let p = call(&t, "ping_pair", json!({"host_a": "pc1", "host_b": "r1"})).await;
    assert!(p.is_error);
    assert_eq!(p.text, "Cannot get IP address of host r1.");
}

#[tokio::test]
async fn bad_arguments_are_rejected_before_anything_runs() {
    let lab = triangle();
    let t = tools(&lab);
    let bad: Vec<(&str, Value, &str)> = vec![
        (
            "ping_pair",
            json!({"host_a": "pc9", "host_b": "pc2"}),
            "no device `pc9`",
        ),
        (
            "ping_pair",
            json!({"host_a": "pc1"}),
            "missing field `host_b`",
        ),
        (
            "ping_pair",
            json!({"host_a": "pc1", "host_b": "10.0.0.1; touch /tmp/x"}),
            "neither a device",
        ),
        (
            "ping_pair",
            json!({"host_a": "pc1", "host_b": "pc2", "args": "-c1 $(id)"}),
            "not allowed",
        ),
        (
            "ping_pair",
            json!({"host_a": "pc1", "host_b": "pc2", "count": 0}),
            "between 1 and 100",
        ),
        (
            "ping_pair",
            json!({"host_a": "pc1", "host_b": "pc2", "count": "4"}),
            "invalid type",
        ),
        (
            "ping_pair",
            json!({"host_a": "pc1", "host_b": "pc2", "colour": 1}),
            "unknown field `colour`",
        ),
        ("ping_pair", json!([1, 2]), "must be a JSON object"),
        (
            "systemctl_ops",
            json!({"host_name": "r1", "service_name": "frr", "operation": "mask"}),
            "must be one of",
        ),
        (
            "systemctl_ops",
            json!({"host_name": "r1", "service_name": "frr;reboot", "operation": "status"}),
            "not a service name",
        ),
        (
            "get_tc_statistics",
            json!({"host_name": "r1", "intf_name": "eth0 root"}),
            "not an interface name",
        ),
        (
            "netstat",
            json!({"host_name": "r1", "args": "-tuln | sh"}),
            "not allowed",
        ),
        (
            "ethtool",
            json!({"host_name": "r1", "interface": "eth0", "args": "-s eth0 speed 10"}),
            "one query option",
        ),
        (
            "ethtool",
            json!({"host_name": "r1", "interface": "eth0"}),
            "missing field `args`",
        ),
        (
            "curl_web_test",
            json!({"host_name": "pc1", "url": "http://x/`reboot`"}),
            "not an http(s) URL",
        ),
        (
            "curl_web_test",
            json!({"host_name": "pc1", "url": "http://x/", "times": 99}),
            "between 1 and 20",
        ),
        (
            "iperf_test",
            json!({"client_host_name": "pc1", "server_host_name": "web1", "duration": 600}),
            "between 1 and 60",
        ),
        (
            "iperf_test",
            json!({"client_host_name": "pc1", "server_host_name": "web1", "client_args": "&& id"}),
            "not allowed",
        ),
        (
            "cat_file",
            json!({"host_name": "pc1", "file_path": "/etc/passwd; rm -rf /"}),
            "not a plain file path",
        ),
        (
            "exec_shell",
            json!({"host_name": "pc1", "command": "  "}),
            "empty",
        ),
        (
            "exec_shell_dual",
            json!({"host1": "pc1", "cmd1": "id", "host2": "zz", "cmd2": "id"}),
            "no device `zz`",
        ),
        (
            "frr_exec",
            json!({"router_name": "r1", "command": "show run\nconf t"}),
            "one vtysh command",
        ),
        (
            "frr_show_ip_route",
            json!({}),
            "missing field `router_name`",
        ),
        (
            "get_reachability",
            json!({"hosts": ["pc1"]}),
            "unknown field",
        ),
        (
            "influx_count_measurements",
            json!({"measurement": "a b"}),
            "measurement name",
        ),
        (
            "influx_query_measurement",
            json!({"measurement": "x", "limit": 0}),
            "between 1 and 1000",
        ),
    ];
    for (name, args, want) in bad {
        match t.call(name, args.clone()).await {
            Err(e @ ToolError::InvalidArguments { .. }) => {
                assert!(
                    e.to_string().contains(want),
                    "{name}({args}): `{e}` lacks `{want}`"
                );
            }
            other => panic!("{name}({args}) should be invalid, got {other:?}"),
        }
    }
    assert!(lab.history().is_empty(), "nothing ran: {:?}", lab.history());
    assert!(matches!(
        t.call("rm_rf", json!({})).await,
        Err(ToolError::UnknownTool(_))
    ));
}

#[tokio::test]
async fn arguments_reach_devices_as_argv_words_and_shell_only_inside_the_device() {
    let lab = triangle();
    let t = tools(&lab);
    call(
        &t,
        "frr_exec",
        json!({"router_name": "r1", "command": "show ip route; echo pwned"}),
    )
    .await;
    call(
        &t,
        "exec_shell",
        json!({"host_name": "pc1", "command": "echo $HOME && id"}),
    )
    .await;
    let h = lab.history();
    // The vtysh line stays one argument (quoted as a whole), never split by a shell.
    assert_eq!(h[0].command, "vtysh -c 'show ip route; echo pwned'");
    assert_eq!(h[0].device, "r1");
    // exec_shell hands its script to the device as a script, on the named device only.
    assert_eq!(
        (h[1].device.as_str(), h[1].command.as_str()),
        ("pc1", "echo $HOME && id")
    );
}

#[tokio::test]
async fn read_only_policy_refuses_mutations_per_call() {
    let lab = triangle();
    let ro = RecordingToolbox::new(PolicyToolbox::new(tools(&lab), Policy::ReadOnly));
    let refused: Vec<(&str, Value)> = vec![
        (
            "systemctl_ops",
            json!({"host_name": "r1", "service_name": "frr", "operation": "restart"}),
        ),
        (
            "exec_shell",
            json!({"host_name": "r1", "command": "pkill ospfd"}),
        ),
        (
            "exec_shell_dual",
            json!({"host1": "r1", "cmd1": "id", "host2": "r2", "cmd2": "id"}),
        ),
        (
            "frr_exec",
            json!({"router_name": "r1", "command": "configure terminal"}),
        ),
        (
            "iperf_test",
            json!({"client_host_name": "pc1", "server_host_name": "web1"}),
        ),
    ];
    for (name, args) in refused {
        let e = ro.call(name, args).await.unwrap_err();
        assert!(matches!(e, ToolError::Refused { .. }), "{name}: {e}");
        assert!(e.to_string().contains("read-only"), "{e}");
    }
    assert!(lab.history().is_empty(), "refused calls ran nothing");
    assert!(!lab.is_on("r1_ospfd_down"));
    // Observation is allowed, including the read-only forms of mutating tools.
    call(
        &ro,
        "systemctl_ops",
        json!({"host_name": "r1", "service_name": "frr", "operation": "status"}),
    )
    .await;
    call(
        &ro,
        "frr_exec",
        json!({"router_name": "r1", "command": "sh ip route"}),
    )
    .await;
    call(&ro, "get_reachability", json!({})).await;
    let recs = ro.records();
    assert_eq!(recs.len(), 8);
    assert!(recs[..5].iter().all(|r| r.refused && r.error.is_some()));
    assert!(recs[5..].iter().all(|r| !r.refused && r.output_chars > 0));
    let specs = ro.specs();
    assert_eq!(specs.len(), 22);
    let sc = specs.iter().find(|s| s.name == "systemctl_ops").unwrap();
    assert!(sc.description.contains("read-only policy"));

    // The full policy lets the same call through, and it takes effect.
    let full = PolicyToolbox::new(tools(&lab), Policy::Full);
    call(
        &full,
        "exec_shell",
        json!({"host_name": "r1", "command": "pkill ospfd"}),
    )
    .await;
    assert!(lab.is_on("r1_ospfd_down"));
    assert_eq!("read-only".parse::<Policy>().unwrap(), Policy::ReadOnly);
    assert!("sometimes".parse::<Policy>().is_err());
}

#[tokio::test]
async fn telemetry_shows_what_happened_before_the_ticket() {
    let lab = triangle();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("telemetry.jsonl");
    let store = Arc::new(TelemetryStore::new().write_jsonl(&file).unwrap());
    let collector = Collector::start(lab.clone(), store.clone(), Duration::from_millis(50));
    // Wait (bounded) for a few samples of the healthy network, inject, then wait for a few
    // samples of the broken one.
    let samples = |s: &TelemetryStore| s.count(s.default_bucket(), "device").unwrap_or(0) / 6;
    let wait_for = |n: usize| {
        let store = store.clone();
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while samples(&store) < n && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            samples(&store)
        }
    };
    let before = wait_for(2).await;
    lab.exec(
        "r1",
        &Command::shell("pkill -9 ospfd"),
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    assert!(wait_for(before + 2).await >= before + 2);
    collector.stop();

    // The run's own store, and a second process's view of the same file, agree.
    let follower = Arc::new(TelemetryStore::follow_jsonl(&file));
    for s in [store, follower] {
        let t = tools(&lab).with_telemetry(s);
        let m = parse(&call(&t, "influx_get_measurements", json!({})).await.text);
        assert_eq!(m, json!(["device", "interface", "processes", "routes"]));
        let b = parse(&call(&t, "influx_list_buckets", json!({})).await.text);
        assert_eq!(b[0]["name"], "lab_telemetry");
        assert!(b[0]["points"].as_u64().unwrap() > 20);
        let n = parse(
            &call(
                &t,
                "influx_count_measurements",
                json!({"measurement": "processes"}),
            )
            .await
            .text,
        );
        let total = n[0]["count"].as_u64().unwrap();
        let rows = all_rows(&t, "processes").await;
        assert_eq!(rows.len() as u64, total);
        let ospfd_r1: Vec<bool> = rows
            .iter()
            .filter(|r| r["device"] == "r1" && r["process"] == "ospfd")
            .map(|r| r["running"].as_bool().unwrap())
            .collect();
        assert_eq!(ospfd_r1.first(), Some(&true), "ran at first");
        assert_eq!(ospfd_r1.last(), Some(&false), "then died: {ospfd_r1:?}");
        let routes = all_rows(&t, "routes").await;
        let r1_last = routes.iter().rev().find(|r| r["device"] == "r1").unwrap();
        assert_eq!(r1_last["total"], 1);
        assert!(r1_last["time"].as_str().unwrap().ends_with('Z'));
        // Paging.
        let page = parse(
            &call(
                &t,
                "influx_query_measurement",
                json!({"measurement": "device", "limit": 2, "offset": 1}),
            )
            .await
            .text,
        );
        assert_eq!(page["rows"].as_array().unwrap().len(), 2);
        assert_eq!(page["offset"], 1);
        let missing = call(
            &t,
            "influx_count_measurements",
            json!({"measurement": "cpu"}),
        )
        .await;
        assert!(missing.is_error && missing.text.contains("No measurement `cpu`"));
    }

    // Without a store the tools still exist and say so.
    let none = call(&tools(&lab), "influx_list_buckets", json!({})).await;
    assert!(none.is_error && none.text.contains("No telemetry"));
}

/// `--telemetry off`: the factory starts no collector, and the four tools answer as the
/// release's labs without a collector machine did (plain text), still checking arguments.
#[tokio::test]
async fn telemetry_off_answers_as_the_release_did() {
    use faultbench_core::pipeline::{ToolboxFactory, ToolboxOptions};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
    let lab = Arc::new(MockLab::new(
        "triangle-1a2b",
        Arc::new(MockNetwork::load(path).unwrap()),
    ));
    let off = faultbench_emu::tools::NikaToolsFactory::new()
        .toolbox_with(lab.clone(), &ToolboxOptions { telemetry: false });
    for (tool, args) in [
        ("influx_list_buckets", json!({})),
        ("influx_get_measurements", json!({})),
        (
            "influx_count_measurements",
            json!({"measurement": "processes"}),
        ),
        (
            "influx_query_measurement",
            json!({"measurement": "processes"}),
        ),
    ] {
        let out = call(&off, tool, args).await;
        assert_eq!(
            out.text,
            "Machine collector not found in lab triangle-1a2b."
        );
        assert!(
            !out.is_error,
            "the release returned it as the tool's output"
        );
    }
    assert!(
        off.call("influx_query_measurement", json!({"measurement": "a;b"}))
            .await
            .is_err()
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !lab.history()
            .iter()
            .any(|r| r.command.contains("ip -j -s link")),
        "no collector sampled the lab"
    );
    // On (the default), a collector samples the lab from the start.
    let on = faultbench_emu::tools::NikaToolsFactory::new()
        .with_telemetry_interval(Some(Duration::from_millis(100)))
        .toolbox_with(lab.clone(), &ToolboxOptions { telemetry: true });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let m = call(&on, "influx_get_measurements", json!({})).await;
    assert!(m.text.contains("device"), "{}", m.text);
    assert!(
        lab.history()
            .iter()
            .any(|r| r.command.contains("ip -j -s link")),
        "the collector sampled the lab"
    );
}

/// Pages through a measurement with `next_offset`, as an agent would.
async fn all_rows(t: &NikaTools, m: &str) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut offset = 0;
    loop {
        let out = call(
            t,
            "influx_query_measurement",
            json!({"measurement": m, "limit": 1000, "offset": offset}),
        )
        .await;
        assert!(out.text.chars().count() <= 4000);
        let v = parse(&out.text);
        rows.extend(v["rows"].as_array().unwrap().iter().cloned());
        match v.get("next_offset") {
            Some(n) => {
                assert!(
                    out.truncated
                        && v["truncated"]
                            .as_str()
                            .unwrap()
                            .contains("requested rows not shown")
                );
                offset = n.as_u64().unwrap();
            }
            None => return rows,
        }
    }
}

#[tokio::test]
async fn store_limits_and_manual_points() {
    let s = TelemetryStore::new().with_max_points(3);
    for i in 0..5 {
        s.insert(Point::new("m", i * 1000).field("v", i as i64));
    }
    let (total, rows) = s.query(s.default_bucket(), "m", 10, 0).unwrap();
    assert_eq!(total, 3);
    assert_eq!(rows[0].time_ms, 2000, "oldest dropped first");
    assert_eq!(s.buckets()[0].dropped, 2);
    assert_eq!(
        s.buckets()[0].first.as_deref(),
        Some("1970-01-01T00:00:02.000Z")
    );
    assert!(s.query("nope", "m", 1, 0).is_none());
}

#[tokio::test]
async fn reachability_uses_one_batched_command_per_source_when_the_device_runs_it() {
    let net = MockNetwork::parse(
        r#"
        [[device]]
        name = "pc1"
        interface = [{ name = "eth0", addr = "10.0.0.1/24" }]
        [[device]]
        name = "pc2"
        interface = [{ name = "eth0", addr = "10.0.0.2/24" }]
        [[device]]
        name = "web"
        interface = [{ name = "eth0", addr = "10.0.0.3/24" }]
        [[rule]]
        device = "*"
        command = "for ip in "
        match = "prefix"
        stdout = "@@10.0.0.3\n2 packets transmitted, 0 received, 100% packet loss, time 1001ms\n@@10.0.0.2\n2 packets transmitted, 2 received, 0% packet loss, time 201ms\n@@10.0.0.1\n2 packets transmitted, 1 received, 50% packet loss, time 201ms\n"
        "#,
    )
    .unwrap();
    let lab = Arc::new(MockLab::new("b", Arc::new(net)));
    let v = parse(&call(&tools(&lab), "get_reachability", json!({})).await.text);
    let status = |s: &str, d: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["src"] == s && r["dst"] == d)
            .map(|r| r["status"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(status("pc1", "web"), "down");
    assert_eq!(status("pc1", "pc2"), "ok");
    assert_eq!(status("web", "pc1"), "unstable");
    // Three sources: three batched commands (after the three address lookups), no single pings.
    let h = lab.history();
    assert_eq!(
        h.iter()
            .filter(|r| r.command.starts_with("for ip in "))
            .count(),
        3
    );
    assert!(!h.iter().any(|r| r.command.starts_with("ping ")));
    let pc1 = h
        .iter()
        .find(|r| r.device == "pc1" && r.command.starts_with("for ip in "))
        .unwrap();
    assert!(
        pc1.command.starts_with("for ip in 10.0.0.2 10.0.0.3; do"),
        "{}",
        pc1.command
    );
}
