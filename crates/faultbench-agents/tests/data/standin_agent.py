#!/usr/bin/env python3
"""A stand-in for an MCP-capable CLI agent (used by the external-agent tests).

It behaves like `claude -p --output-format json`: reads the MCP config file faultbench wrote,
connects to the server with the official Python MCP client, lists the tools, runs
get_reachability, looks closer at a router when pairs fail, and prints a JSON result object
with a DIAGNOSIS block, token usage and a cost.

Modes (env STANDIN_MODE): normal (default), max_turns (gives up like a CLI out of turns),
hang (never answers), crash (exits 3 with a message on stderr), cwd (report files in cwd).
"""
import argparse
import asyncio
import json
import os
import sys
import time

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def investigate(url):
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            reach = json.loads(text_of(await session.call_tool("get_reachability", {})))
            failing = [r for r in reach.get("results", []) if r.get("status") != "ok"]
            bad = await session.call_tool("ping_pair", {"host_a": "pc1", "host_b": "pc2; reboot"})
            # `is_error` in mcp 2.x, `isError` in 1.x.
            if not getattr(bad, "is_error", getattr(bad, "isError", False)):
                raise SystemExit("an injected argument was not refused")
            if not failing:
                return tools, False, "none", "All host pairs answer; nothing is wrong."
            ospf = text_of(await session.call_tool(
                "frr_exec", {"router_name": "r1", "command": "show ip ospf neighbor"}))
            if "not running" in ospf:
                return tools, True, "r1", "ospfd on r1 is not running: " + ospf.strip()
            return tools, True, "none", "Some pairs fail."


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcp-config", required=True)
    ap.add_argument("--max-turns", type=int, required=True)
    ap.add_argument("prompt")
    a = ap.parse_args()
    mode = os.environ.get("STANDIN_MODE", "normal")
    if mode == "hang":
        time.sleep(600)
    if mode == "crash":
        print("standin: simulated crash", file=sys.stderr)
        sys.exit(3)
    if mode == "cwd":
        print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                          "result": "files: " + ",".join(sorted(os.listdir("."))) + " cwd: " + os.getcwd()}))
        return
    if "# Symptom (user report)" not in a.prompt:
        raise SystemExit("the prompt is not the paper's user message")
    with open(a.mcp_config) as f:
        url = json.load(f)["mcpServers"]["faultbench"]["url"]
    tools, anomaly, devices, why = asyncio.run(investigate(url))
    usage = {"input_tokens": 12, "cache_creation_input_tokens": 2048,
             "cache_read_input_tokens": 30000, "output_tokens": 700}
    if mode == "max_turns":
        print(json.dumps({"type": "result", "subtype": "error_max_turns", "is_error": True,
                          "num_turns": a.max_turns, "total_cost_usd": 0.05, "usage": usage}))
        return
    block = (f"=== DIAGNOSIS ===\nis_anomaly: {str(anomaly).lower()}\nfaulty_devices: {devices}\n"
             f"diagnosis_text:\n{why} (saw {len(tools)} tools)\n=== END ===")
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "num_turns": 4,
                      "result": block, "total_cost_usd": 0.1234, "usage": usage,
                      "modelUsage": {"claude-sonnet-4-6": {}}}))


if __name__ == "__main__":
    main()
