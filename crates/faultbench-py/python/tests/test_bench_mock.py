"""`bench` on mock networks (no root): result files, resume, progress, and `jobs=2` running two
Python agents' tool calls at the same time (the interpreter is released while Rust waits)."""

from __future__ import annotations

import csv
import threading
import time
from pathlib import Path

import faultbench as fb
from conftest import MOCK


class SlowProber:
    """Three 300 ms tool calls per run, each timed."""

    name = "slow-prober"

    def __init__(self):
        self.calls = []  # (start, end, thread)
        self.lock = threading.Lock()

    async def run(self, input, tools):
        for device in ["pc1", "r1", "r2"]:
            t0 = time.monotonic()
            out = await tools.acall("exec_shell", host_name=device, command="slow-probe")
            t1 = time.monotonic()
            assert out.startswith("probed")
            with self.lock:
                self.calls.append((t0, t1, threading.get_ident()))
        return fb.Diagnosis(is_anomaly=False, faulty_devices=[], text="all probes answered")


def manifest(root: Path):
    with open(root / "MANIFEST.csv") as f:
        return list(csv.DictReader(f))


def test_jobs_2_overlaps_tool_calls(slow_duo: Path, tmp_path: Path, duo_dataset: Path):
    # Four runs: four passes of one scenario.
    agent = SlowProber()
    events = []
    t = time.monotonic()
    res = fb.bench(
        {"prober": agent},
        dataset=duo_dataset,
        scope="all",
        passes=4,
        jobs=2,
        emulator="mock",
        topologies=slow_duo,
        runs_root=tmp_path / "runs",
        progress=events.append,
        report=False,
    )
    wall = time.monotonic() - t
    assert (res.planned, res.finished) == (4, 4), res
    assert sum(res.statuses.values()) == 4
    # Calls of different runs (different agent threads) overlap in time.
    overlaps = [
        (a, b)
        for a in agent.calls
        for b in agent.calls
        if a[2] != b[2] and a[0] < b[1] and b[0] < a[1]
    ]
    assert overlaps, agent.calls
    # 12 calls of 300 ms: serial would be >= 3.6 s of calls alone.
    print(f"jobs=2: 4 runs x 3 calls x 300 ms in {wall:.2f} s; {len(overlaps) // 2} overlapping call pairs")
    kinds = [e["event"] for e in events]
    assert kinds.count("run_started") == 4 and kinds.count("run_finished") == 4
    finished = [e for e in events if e["event"] == "run_finished"]
    assert finished[-1]["done"] == 4 and finished[-1]["total"] == 4
    assert all(e["status"] == "scored" for e in finished)
    assert kinds[-1] == "finished" and events[-1]["interrupted"] is False


def test_resume_skips_finished_runs(tmp_path: Path, duo_dataset: Path, duo_scenario):
    root = tmp_path / "runs"
    calls = []

    class Counting:
        name = "counting"

        def run(self, input, tools):
            calls.append(1)
            return fb.Diagnosis(is_anomaly=True, faulty_devices=["r1"], text="ospfd down on r1")

    kw = dict(scenarios=[duo_scenario], dataset=duo_dataset, emulator="mock", topologies=MOCK,
              runs_root=root, report=False)
    first = fb.bench({"c": Counting()}, passes=2, **kw)
    assert first.finished == 2 and len(calls) == 2
    before = sorted(p.read_text() for p in root.rglob("result.json"))
    assert len(before) == 2
    again = fb.bench({"c": Counting()}, passes=3, **kw)
    assert (again.planned, again.skipped, again.finished) == (3, 2, 1)
    assert len(calls) == 3
    rows = manifest(root)
    assert len(rows) == 3
    after = sorted(p.read_text() for p in root.rglob("result.json"))
    assert len(after) == 3 and all(b in after for b in before)  # finished runs untouched
    assert (root / "identity.json").is_file()
    try:
        fb.bench({"c": Counting()}, passes=3, resume=False, **kw)
    except fb.ConfigError as e:
        assert "resume" in str(e), str(e)
    else:
        raise AssertionError("a second bench into a used root without resume was accepted")


def test_bench_from_the_dataset_by_scope_and_topology(tmp_path: Path, duo_dataset: Path):
    class Healthy:
        name = "healthy"

        def run(self, input, tools):
            return fb.Diagnosis(is_anomaly=False, faulty_devices=[], text="fine")

    res = fb.bench(
        {"healthy": Healthy(), "baseline": "baseline"},
        dataset=duo_dataset,
        scope="all",
        topology="Duo",
        emulator="mock",
        topologies=MOCK,
        runs_root=tmp_path / "runs",
    )
    assert (res.planned, res.finished) == (2, 2), res
    assert res.report_html is not None and res.report_html.is_file()
    agents = sorted(r["agent"] for r in manifest(tmp_path / "runs"))
    assert agents == ["baseline", "healthy"]
