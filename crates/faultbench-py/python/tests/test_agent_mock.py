"""Python agents and judges through the Rust pipeline on a mock network (no root): the pytest
pattern a user writes for their own agent."""

from __future__ import annotations

from pathlib import Path

import faultbench as fb
from conftest import MOCK

TOPOLOGIES = [MOCK]


class OspfCheck:
    """Blames the router whose OSPF daemon is not running (async)."""

    name = "ospf-check"

    async def run(self, input: fb.AgentInput, tools: fb.Tools) -> fb.Diagnosis:
        assert "pc1" in input.ticket and input.max_turns == 20
        blamed = []
        for r in ["r1", "r2"]:
            out = await tools.acall("frr_exec", router_name=r, command="show ip ospf neighbor")
            if "is not running" in out:
                blamed.append(r)
        return fb.Diagnosis(
            is_anomaly=bool(blamed),
            faulty_devices=blamed,
            text="ospfd (the OSPF routing daemon) stopped on r1, so r1 no longer advertises "
            "its LAN. Fix: systemctl start frr on r1.",
            usage=fb.Usage(input_tokens=1200, output_tokens=80),
            cost_usd=0.0042,
            model="my-model",
        )


class SyncAgent:
    """The same check with a sync `run` and a text answer carrying an OpenAI-style usage."""

    name = "sync-check"

    def run(self, input, tools):
        out = tools["frr_exec"](router_name="r1", command="show ip ospf neighbor")
        bad = "is not running" in out
        block = fb.Diagnosis(
            is_anomaly=bad, faulty_devices=["r1"] if bad else [], text="ospfd stopped on r1"
        ).render()
        return fb.Answer(
            "I checked r1.\n" + block, usage={"prompt_tokens": 7, "completion_tokens": 3}
        )


def test_async_agent_is_scored_correct(duo_scenario):
    rec = fb.run(duo_scenario, OspfCheck(), judge="rubric", emulator="mock", topologies=TOPOLOGIES)
    assert rec.status == "scored", rec.error
    assert rec.scores.correct and rec.scores.outcome >= 0.7
    assert rec.diagnosis.faulty_devices == ["r1"]
    calls = rec.tool_calls
    assert [c["tool"] for c in calls] == ["frr_exec", "frr_exec"]
    outcome = rec.to_dict()["phases"]["agent"]["outcome"]
    assert outcome["usage"]["input_tokens"] == 1200 and outcome["cost_usd"] == 0.0042
    assert outcome["model"] == "my-model"
    assert rec.agent == "ospf-check"


def test_sync_agent_text_answer_with_provider_usage(duo_scenario):
    rec = fb.run(duo_scenario, SyncAgent(), emulator="mock", topologies=TOPOLOGIES)
    assert rec.status == "scored", rec.error
    assert rec.diagnosis.faulty_devices == ["r1"]
    assert rec.final_text.startswith("I checked r1.")
    usage = rec.to_dict()["phases"]["agent"]["outcome"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (7, 3)


def test_python_judge_and_builtin_judges(duo_scenario):
    seen = []

    def strict_judge(scenario: fb.Scenario, diagnosis: fb.Diagnosis) -> fb.Scores:
        seen.append((scenario.id, diagnosis.faulty_devices))
        base = fb.judge(scenario, diagnosis, "rubric")
        s = fb.Scores(judge="strict")
        for a in base.per_axis:
            if a["kind"] in ("assert", "must", "bonus"):
                s.axis(a["axis"], a["kind"], a["score"], "from the rubric")
        s.axis("names-ospfd", "must", 1.0 if "ospfd" in diagnosis.text else 0.0)
        s.finish()
        return s

    rec = fb.run(duo_scenario, OspfCheck(), judge=strict_judge, emulator="mock", topologies=TOPOLOGIES)
    assert rec.status == "scored", rec.error
    assert seen == [("duo-r1-ospfd-down", ["r1"])]
    assert rec.scores.judge == "strict"
    assert any(a["axis"] == "names-ospfd" and a["score"] == 1.0 for a in rec.scores.per_axis)

    # A float is an outcome; the built-in rubric is callable directly on a text answer.
    rec2 = fb.run(duo_scenario, OspfCheck(), judge=lambda s, d: 0.25, emulator="mock", topologies=TOPOLOGIES)
    assert rec2.scores.outcome == 0.25
    healthy = fb.judge(duo_scenario, "=== DIAGNOSIS ===\nis_anomaly: false\nfaulty_devices: none\ndiagnosis_text:\nfine\n=== END ===")
    assert not healthy.correct


def test_judge_that_raises_is_judge_failed_with_the_diagnosis_kept(duo_scenario):
    def broken(scenario, diagnosis):
        raise ValueError("judge bug")

    rec = fb.run(duo_scenario, OspfCheck(), judge=broken, emulator="mock", topologies=TOPOLOGIES)
    assert rec.status == "judge_failed"
    assert "judge bug" in rec.error and "ValueError" in rec.error
    assert rec.diagnosis.faulty_devices == ["r1"]


def test_run_archives_into_a_runs_root_and_report_reads_it(duo_scenario, tmp_path: Path):
    root = tmp_path / "runs"
    fb.run(duo_scenario, OspfCheck(), emulator="mock", topologies=TOPOLOGIES, runs_root=root)
    assert (root / "MANIFEST.csv").is_file()
    rep = fb.report(root)
    assert rep.html_path.is_file() and rep.html_path.name == "report.html"
    rows = rep.rows
    assert rows and {"table", "row", "agent", "value"} <= set(rows[0])
    assert any(r["agent"] == "ospf-check" and r["value"] is not None for r in rows)
    assert "ospf-check" in rep.markdown
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    assert len(rep.dataframe()) == len(rows)
