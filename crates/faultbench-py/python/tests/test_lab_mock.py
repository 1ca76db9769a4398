"""Labs on the mock emulator (no root): sync and async context, exec, the 22 tools as
callables, the read-only policy, record and replay, teardown when the block raises."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import faultbench as fb
from conftest import MOCK

DUO = MOCK / "Duo"


def test_sync_context_exec_and_tools():
    with fb.Lab.up(DUO, emulator="mock") as lab:
        assert sorted(lab.devices) == ["pc1", "r1", "r2", "web1"]
        ok = lab.exec("r1", ["pgrep", "ospfd"])
        assert ok.ok and ok.stdout.strip() == "231"
        # The scenario's injection, as a shell line inside the device, changes later answers.
        lab.exec("r1", "pkill -9 ospfd")
        assert lab.exec("r1", ["pgrep", "ospfd"]).exit_code == 1
        tools = lab.tools()
        assert len(tools) == 22 and "frr_exec" in tools
        out = tools["frr_exec"](router_name="r1", command="show ip ospf neighbor")
        assert "is not running" in out
        # The same call by name with a dict (a model's parsed arguments).
        assert tools.call("frr_exec", {"router_name": "r1", "command": "show ip ospf neighbor"}) == out
    assert "down" in repr(lab)
    with pytest.raises(fb.LabError, match="not deployed"):
        lab.exec("r1", ["true"])


async def test_async_context_and_awaitable_tools():
    async with fb.Lab.up(DUO, emulator="mock") as lab:
        tools = lab.tools()
        out = await tools["ping_pair"].acall(host_a="pc1", host_b="web1", count=2)
        assert " 0% packet loss" in out
        again = await tools.acall("ping_pair", {"host_a": "pc1", "host_b": "web1", "count": 2})
        assert again == out
    assert "down" in repr(lab)


def test_bad_arguments_and_unknown_tool_raise_tool_error():
    with fb.Lab.up(DUO, emulator="mock") as lab:
        tools = lab.tools()
        with pytest.raises(fb.ToolError, match="unknown field `bogus`"):
            tools.call("ping_pair", {"host_a": "pc1", "bogus": 1})
        with pytest.raises(fb.ToolError, match="unknown tool"):
            tools.call("rm_rf", {})
        with pytest.raises(fb.ToolError, match="dict"):
            tools.call("ping_pair", [1, 2])
        with pytest.raises(KeyError):
            tools["rm_rf"]


def test_read_only_policy_refuses_mutations():
    with fb.Lab.up(DUO, emulator="mock") as lab:
        ro = lab.tools(read_only=True)
        with pytest.raises(fb.ToolError, match="refused"):
            ro["systemctl_ops"](host_name="r1", service_name="frr", operation="stop")
        # Observation still works.
        assert "Neighbor" in ro["frr_exec"](router_name="r1", command="show ip ospf neighbor")


def test_record_then_replay(tmp_path: Path):
    trace = tmp_path / "trace.json"
    with fb.Lab.up(DUO, emulator="mock", record=trace) as lab:
        live = lab.exec("r1", ["pgrep", "ospfd"]).stdout
    data = json.loads(trace.read_text())
    assert data["entries"], data
    with fb.Lab.up(trace, emulator="mock") as replay:
        assert replay.exec("r1", ["pgrep", "ospfd"]).stdout == live


def test_block_that_raises_still_tears_down():
    with pytest.raises(RuntimeError):
        with fb.Lab.up(DUO, emulator="mock") as lab:
            raise RuntimeError("boom")
    assert "down" in repr(lab)


def test_unknown_emulator_and_topology_are_clear_errors():
    with pytest.raises(fb.ConfigError, match="unknown emulator `docker`"):
        fb.Lab.up(DUO, emulator="docker")
    with pytest.raises(fb.LabError, match="NoSuchTopology"):
        fb.Lab.up("NoSuchTopology", emulator="mock")
