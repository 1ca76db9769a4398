"""Drive `faultbench mcp` with the official MCP Python client (PyPI package `mcp`).

Usage: mcp_client.py FAULTBENCH_BIN MARKER_FILE HOST_A HOST_B ROUTER -- SERVER_ARGS...

Starts `FAULTBENCH_BIN mcp SERVER_ARGS...` over stdio, then checks:
  - exactly the 22 tools are listed, each with an object input schema;
  - ping_pair HOST_A -> HOST_B succeeds, get_host_net_config HOST_A returns its four fields,
    frr_show_ip_route ROUTER returns a routing table;
  - bad arguments come back as tool errors and an unknown tool as an MCP protocol error,
    and the server keeps serving afterwards;
  - shell-injection strings in arguments are refused (or, for frr_exec, reach vtysh as one
    harmless argument), and MARKER_FILE is never created on the host.
Prints one JSON line with what it saw; exits non-zero with a message on any failure.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

try:  # the error class was renamed between SDK versions
    from mcp import MCPError as ProtocolError
except ImportError:  # pragma: no cover
    from mcp.shared.exceptions import McpError as ProtocolError

EXPECTED = [
    "get_reachability", "ping_pair", "systemctl_ops", "get_host_net_config",
    "get_tc_statistics", "netstat", "ip_addr_statistics", "ethtool", "curl_web_test",
    "iperf_test", "cat_file", "exec_shell", "exec_shell_dual", "frr_get_bgp_conf",
    "frr_show_running_config", "frr_show_ip_route", "frr_get_ospf_conf", "frr_exec",
    "influx_list_buckets", "influx_get_measurements", "influx_count_measurements",
    "influx_query_measurement",
]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


# Field names changed from camelCase to snake_case between SDK major versions.
def schema_of(tool):
    return getattr(tool, "input_schema", None) or getattr(tool, "inputSchema")


def is_error(result):
    v = getattr(result, "is_error", None)
    return bool(v if v is not None else getattr(result, "isError", False))


async def main():
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") != 5:
        fail("usage: mcp_client.py BIN MARKER HOST_A HOST_B ROUTER -- SERVER_ARGS...")
    binary, marker, host_a, host_b, router = argv[:5]
    server_args = argv[6:]
    if os.path.exists(marker):
        fail(f"marker {marker} exists before the test")
    params = StdioServerParameters(command=binary, args=["mcp", *server_args])
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            if names != EXPECTED:
                fail(f"tools listed: {names}")
            for t in tools:
                schema = schema_of(t)
                if schema.get("type") != "object" or "$schema" in schema:
                    fail(f"{t.name}: schema {schema}")
            seen["tools"] = len(names)

            async def call(name, args):
                return await session.call_tool(name, args)

            r = await call("ping_pair", {"host_a": host_a, "host_b": host_b, "count": 2})
            t = text_of(r)
            if is_error(r) or "2 packets transmitted, 2 received" not in t:
                fail(f"ping_pair: isError={is_error(r)} {t!r}")
            seen["ping_pair"] = t.strip().splitlines()[-1]

            r = await call("get_host_net_config", {"host_name": host_a})
            cfg = json.loads(text_of(r))
            if set(cfg) != {"host_name", "ifconfig", "ip_addr", "ip_route"} or "eth0" not in cfg["ip_addr"]:
                fail(f"get_host_net_config: {cfg}")
            seen["get_host_net_config"] = sorted(cfg)

            r = await call("frr_show_ip_route", {"router_name": router})
            t = text_of(r)
            if is_error(r) or "Codes:" not in t:
                fail(f"frr_show_ip_route: {t!r}")
            seen["frr_show_ip_route_lines"] = len(t.splitlines())

            # Bad arguments: tool errors the model can read.
            bad = [
                ("ping_pair", {"host_a": host_a}),
                ("ping_pair", {"host_a": host_a, "host_b": host_b, "count": "many"}),
                ("ping_pair", {"host_a": "no_such_device", "host_b": host_b}),
                ("systemctl_ops", {"host_name": router, "service_name": "frr", "operation": "explode"}),
                ("get_tc_statistics", {"host_name": host_a, "intf_name": 7}),
            ]
            for name, args in bad:
                r = await call(name, args)
                if not is_error(r) or "invalid arguments" not in text_of(r):
                    fail(f"{name}({args}) should be refused as invalid: {text_of(r)!r}")
            seen["bad_arguments_refused"] = len(bad)

            try:
                await call("no_such_tool", {})
                fail("an unknown tool did not raise an MCP error")
            except ProtocolError as e:
                seen["unknown_tool_error"] = str(e)

            # Shell injection in arguments: refused before anything runs.
            inj = f"; touch {marker}"
            injections = [
                ("cat_file", {"host_name": host_a, "file_path": f"/etc/hostname{inj}"}),
                ("cat_file", {"host_name": host_a, "file_path": f"$(touch {marker})"}),
                ("ping_pair", {"host_a": host_a, "host_b": f"127.0.0.1{inj}"}),
                ("ping_pair", {"host_a": host_a, "host_b": host_b, "args": f"-c1 `touch {marker}`"}),
                ("netstat", {"host_name": host_a, "args": f"-tuln && touch {marker}"}),
                ("get_tc_statistics", {"host_name": host_a, "intf_name": f"eth0{inj}"}),
                ("curl_web_test", {"host_name": host_a, "url": f"http://x/{inj}"}),
                ("systemctl_ops", {"host_name": router, "service_name": f"frr{inj}", "operation": "status"}),
            ]
            for name, args in injections:
                r = await call(name, args)
                if not is_error(r):
                    fail(f"injection accepted by {name}: {args}")
            # frr_exec passes its line to vtysh as ONE argv word: vtysh rejects it, no shell runs.
            r = await call("frr_exec", {"router_name": router, "command": f"show version{inj}"})
            seen["frr_exec_injection"] = text_of(r).strip().splitlines()[-1] if text_of(r).strip() else ""
            if os.path.exists(marker):
                fail(f"marker {marker} was created: an argument reached a host shell")
            seen["injections_refused"] = len(injections)

            # Still serving after all of that.
            r = await call("ip_addr_statistics", {"host_name": host_b})
            if is_error(r):
                fail(f"server unhealthy after bad calls: {text_of(r)!r}")
    print(json.dumps(seen))


asyncio.run(main())
