//! Caps, failures and timeouts are explicit; bad arguments never run; arguments reach devices as argv words.

use super::*;

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
