"""Hostile calls to `faultbench mcp` with the official MCP Python client (PyPI `mcp`).

Usage: mcp_hostile.py FAULTBENCH_BIN -- SERVER_ARGS...

Calls a 100 KB tool name and a tool with a 1 MB argument, then a normal call, and prints one
JSON line: the length of each error text the server sent back and whether it kept serving.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

try:  # the error class was renamed between SDK versions
    from mcp import MCPError as ProtocolError
except ImportError:  # pragma: no cover
    from mcp.shared.exceptions import McpError as ProtocolError


def text_of(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def main():
    argv = sys.argv[1:]
    binary, server_args = argv[0], argv[2:]
    params = StdioServerParameters(command=binary, args=["mcp", *server_args])
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            try:
                await session.call_tool("x" * 100_000, {})
                seen["huge_name"] = "no error"
            except ProtocolError as e:
                seen["huge_name_error_len"] = len(str(e))
            r = await session.call_tool(
                "cat_file", {"host_name": "pc1", "file_path": "/" + "a" * 1_000_000}
            )
            seen["huge_arg_error_len"] = len(text_of(r))
            r = await session.call_tool(
                "ping_pair", {"host_a": "pc1" + "q" * 1_000_000, "host_b": "pc2"}
            )
            seen["huge_host_error_len"] = len(text_of(r))
            r = await session.call_tool("ping_pair", {"host_a": "pc1", "host_b": "pc2"})
            seen["still_serving"] = "transmitted" in text_of(r)
    print(json.dumps(seen))


asyncio.run(main())
