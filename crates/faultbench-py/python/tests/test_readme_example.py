"""The pytest example of the README and docs/python.md, verbatim but for the paths (the examples' mock network)."""

import faultbench as fb
from conftest import MOCK


class OspfCheck:
    name = "ospf-check"
    async def run(self, input, tools):
        out = await tools.acall("frr_exec", router_name="r1", command="show ip ospf neighbor")
        bad = "is not running" in out
        return fb.Diagnosis(is_anomaly=bad, faulty_devices=["r1"] if bad else [], text="ospfd down on r1")


def test_blames_r1_when_its_ospfd_is_killed():
    scenario = fb.load_scenario(MOCK / "duo-r1-ospfd-down.txt")   # injection: pkill ospfd on r1
    rec = fb.run(scenario, OspfCheck(), emulator="mock", topologies=[MOCK])
    assert rec.status == "scored" and rec.diagnosis.faulty_devices == ["r1"]


def test_tools_on_the_mock_network():
    with fb.Lab.up(MOCK / "Duo", emulator="mock") as lab:
        assert " 0% packet loss" in lab.tools()["ping_pair"](host_a="pc1", host_b="web1")
