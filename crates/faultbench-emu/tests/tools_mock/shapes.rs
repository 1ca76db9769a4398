//! Every tool answers on a mock network, in the release's output shapes.

use super::*;

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
