//! The 22 tool descriptions and their JSON Schemas.
//!
//! Names, parameters and defaults are the release's (NIKA's first-generation tool servers);
//! descriptions are ours. Every schema is a plain draft 2020-12 object schema without a
//! `$schema` key, with `additionalProperties: false`, so the same value works as an MCP
//! `inputSchema`, an OpenAI `function.parameters` and an Anthropic `input_schema`.

use faultbench_core::ToolSpec;
use serde_json::{Value, json};

/// Tool names in the release's order: 13 base, 5 FRR, 4 telemetry.
pub const TOOL_NAMES: [&str; 22] = [
    "get_reachability",
    "ping_pair",
    "systemctl_ops",
    "get_host_net_config",
    "get_tc_statistics",
    "netstat",
    "ip_addr_statistics",
    "ethtool",
    "curl_web_test",
    "iperf_test",
    "cat_file",
    "exec_shell",
    "exec_shell_dual",
    "frr_get_bgp_conf",
    "frr_show_running_config",
    "frr_show_ip_route",
    "frr_get_ospf_conf",
    "frr_exec",
    "influx_list_buckets",
    "influx_get_measurements",
    "influx_count_measurements",
    "influx_query_measurement",
];

fn string(desc: &str) -> Value {
    json!({"type": "string", "description": desc})
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

const HOST: &str = "Device name, as listed in the topology.";
const ROUTER: &str = "Name of a router running FRR.";

/// The 22 specs, in [`TOOL_NAMES`] order.
pub fn all_specs() -> Vec<ToolSpec> {
    let base = |name: &str, desc: &str, schema: Value| ToolSpec::new(name, desc, schema);
    let frr =
        |name: &str, desc: &str, schema: Value| ToolSpec::new(name, desc, schema).in_group("frr");
    let tele = |name: &str, desc: &str, schema: Value| {
        ToolSpec::new(name, desc, schema).in_group("telemetry")
    };
    let router_only = object(json!({"router_name": string(ROUTER)}), &["router_name"]);
    vec![
        base(
            "get_reachability",
            "Ping between the lab's end hosts (devices named pc/host/client and the servers) and report, \
             per source/destination pair, packets sent and received, loss, RTTs and a status: ok \
             (no loss), unstable (some loss), down (no reply), timeout (the ping did not finish) or \
             unknown. Covers every ordered pair by default, in a fixed order.",
            object(json!({}), &[]),
        ),
        base(
            "ping_pair",
            "Ping from one device to another device (its first address on eth0) or to an IPv4 \
             address. Returns ping's own output.",
            object(
                json!({
                    "host_a": string("Device to ping from."),
                    "host_b": string("Destination: a device name or an IPv4 address."),
                    "count": {"type": "integer", "minimum": 1, "maximum": 100, "default": 4,
                              "description": "Echo requests to send."},
                    "args": {"type": "string", "default": "",
                             "description": "Extra ping options, e.g. \"-s 1400 -M do\" or \"-W 1\"."},
                }),
                &["host_a", "host_b"],
            ),
        ),
        base(
            "systemctl_ops",
            "Run a systemctl operation on a service of a device: status, or start/stop/restart/reload \
             (these change the network).",
            object(
                json!({
                    "host_name": string(HOST),
                    "service_name": string("Service, e.g. frr, nginx, dnsmasq, isc-dhcp-server."),
                    "operation": {"type": "string",
                                  "enum": ["status", "start", "stop", "restart", "reload"],
                                  "description": "What to do."},
                }),
                &["host_name", "service_name", "operation"],
            ),
        )
        .mutating(),
        base(
            "get_host_net_config",
            "A device's network configuration: `ifconfig -a`, `ip addr` and `ip route`, as a JSON \
             object with the fields host_name, ifconfig, ip_addr and ip_route.",
            object(json!({"host_name": string(HOST)}), &["host_name"]),
        ),
        base(
            "get_tc_statistics",
            "Queueing disciplines of one interface with their counters (`tc -s qdisc show dev IF`).",
            object(
                json!({"host_name": string(HOST), "intf_name": string("Interface, e.g. eth0.")}),
                &["host_name", "intf_name"],
            ),
        ),
        base(
            "netstat",
            "Sockets of a device (`netstat ARGS`), by default listening TCP/UDP ports without name \
             resolution.",
            object(
                json!({
                    "host_name": string(HOST),
                    "args": {"type": "string", "default": "-tuln", "description": "netstat options."},
                }),
                &["host_name"],
            ),
        ),
        base(
            "ip_addr_statistics",
            "Addresses and per-interface packet, error and drop counters (`ip -s addr`).",
            object(json!({"host_name": string(HOST)}), &["host_name"]),
        ),
        base(
            "ethtool",
            "Query an interface with ethtool: link settings by default, or one query option \
             (-i driver, -S statistics, -k features, -g rings, -a pause, -c coalescing, -l channels, \
             -T timestamping, -P permanent address, --phy-statistics).",
            object(
                json!({
                    "host_name": string(HOST),
                    "interface": string("Interface, e.g. eth0."),
                    "args": {"type": "string", "default": "",
                             "description": "Empty, or one query option such as \"-S\"."},
                }),
                &["host_name", "interface", "args"],
            ),
        ),
        base(
            "curl_web_test",
            "Fetch a URL from a device several times and report, per attempt, the HTTP status and \
             the timings of name lookup, connect, TLS, first byte and total (seconds). Each attempt \
             has a 5 s connect and 10 s total limit.",
            object(
                json!({
                    "host_name": string(HOST),
                    "url": string("http:// or https:// URL."),
                    "times": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5,
                              "description": "Number of attempts."},
                }),
                &["host_name", "url"],
            ),
        ),
        base(
            "iperf_test",
            "Measure throughput with iperf3: start a one-shot server on one device, run the client \
             on another against the server's eth0 address, then stop the server. Returns the \
             client's report.",
            object(
                json!({
                    "client_host_name": string("Device running the iperf3 client."),
                    "server_host_name": string("Device running the iperf3 server."),
                    "duration": {"type": "integer", "minimum": 1, "maximum": 60, "default": 10,
                                 "description": "Test length in seconds."},
                    "client_args": {"type": "string", "default": "",
                                    "description": "Extra client options, e.g. \"-u -b 10M\" or \"-R\"."},
                    "server_args": {"type": "string", "default": "",
                                    "description": "Extra server options."},
                }),
                &["client_host_name", "server_host_name"],
            ),
        )
        .mutating(),
        base(
            "cat_file",
            "Print a file of a device, e.g. /etc/resolv.conf or /etc/frr/frr.conf.",
            object(
                json!({"host_name": string(HOST), "file_path": string("Path of the file on the device.")}),
                &["host_name", "file_path"],
            ),
        ),
        base(
            "exec_shell",
            "Run a shell command on a device (with `sh -c` inside the device) and return its \
             output. Can change the network.",
            object(
                json!({"host_name": string(HOST), "command": string("Shell command line.")}),
                &["host_name", "command"],
            ),
        )
        .mutating(),
        base(
            "exec_shell_dual",
            "Run two shell commands on two devices at the same time (e.g. a capture on one and \
             traffic on the other). Returns {\"host1\": [output1], \"host2\": [output2]}.",
            object(
                json!({
                    "host1": string("First device."),
                    "cmd1": string("Command for the first device."),
                    "host2": string("Second device."),
                    "cmd2": string("Command for the second device."),
                }),
                &["host1", "cmd1", "host2", "cmd2"],
            ),
        )
        .mutating(),
        frr(
            "frr_get_bgp_conf",
            "The router's BGP table (`show ip bgp`): prefixes, next hops, paths, best path.",
            router_only.clone(),
        ),
        frr(
            "frr_show_running_config",
            "The router's running FRR configuration (`show running-config`).",
            router_only.clone(),
        ),
        frr(
            "frr_show_ip_route",
            "The router's IPv4 routing table as FRR sees it (`show ip route`), with route sources.",
            router_only.clone(),
        ),
        frr(
            "frr_get_ospf_conf",
            "The router's OSPF process state (`show ip ospf`): router id, areas, timers, SPF runs.",
            router_only,
        ),
        frr(
            "frr_exec",
            "Run one vtysh command on a router, e.g. `show ip ospf neighbor` or `show ip bgp summary`. \
             Commands other than `show …` can change the network.",
            object(
                json!({"router_name": string(ROUTER), "command": string("One vtysh command.")}),
                &["router_name", "command"],
            ),
        )
        .mutating(),
        tele(
            "influx_list_buckets",
            "List the telemetry buckets recorded for this lab since it was deployed (sampled every \
             few seconds from every device), with their measurement and point counts and time span.",
            object(json!({}), &[]),
        ),
        tele(
            "influx_get_measurements",
            "List the measurements of the telemetry bucket (e.g. interface counters and states, \
             route counts, routing daemons and services).",
            object(json!({}), &[]),
        ),
        tele(
            "influx_count_measurements",
            "Count the points recorded for one measurement.",
            object(
                json!({"measurement": string("Measurement name, from influx_get_measurements.")}),
                &["measurement"],
            ),
        ),
        tele(
            "influx_query_measurement",
            "Rows of one measurement, oldest first: time, tags (device, interface, …) and fields.",
            object(
                json!({
                    "measurement": string("Measurement name, from influx_get_measurements."),
                    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10,
                              "description": "Rows to return."},
                    "offset": {"type": "integer", "minimum": 0, "default": 0,
                               "description": "Rows to skip."},
                }),
                &["measurement"],
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_two_specs_with_plain_object_schemas() {
        let specs = all_specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, TOOL_NAMES);
        for s in &specs {
            let schema = s.input_schema.as_object().unwrap();
            assert_eq!(schema["type"], "object", "{}", s.name);
            assert_eq!(schema["additionalProperties"], false, "{}", s.name);
            assert!(!schema.contains_key("$schema"));
            let props = schema["properties"].as_object().unwrap();
            for r in schema["required"].as_array().unwrap() {
                assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", s.name);
            }
        }
        let groups = |g: &str| specs.iter().filter(|s| s.group == g).count();
        assert_eq!(
            (groups("base"), groups("frr"), groups("telemetry")),
            (13, 5, 4)
        );
        let mutating: Vec<&str> = specs
            .iter()
            .filter(|s| s.mutating)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(
            mutating,
            [
                "systemctl_ops",
                "iperf_test",
                "exec_shell",
                "exec_shell_dual",
                "frr_exec"
            ]
        );
    }
}
