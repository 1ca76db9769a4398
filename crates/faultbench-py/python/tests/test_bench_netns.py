"""A Python agent and a Python judge through `bench` on a live netns topology (real FRR in
network namespaces; needs root, as in CI — like every live-lab test, it fails rather than skips
without it): kill -9 mid-benchmark, resume, every planned run
archived exactly once, finished runs not redone, no lab of the killed process left; and Ctrl-C
tearing the running lab down."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import textwrap
import time
from pathlib import Path

from conftest import HANG_PRELUDE, NETNS_DATASET, NETNS_LABS, start_python

BENCH_SCRIPT = textwrap.dedent(
    """
    import sys, faultbench as fb

    class LinkCheck:
        name = "link-check"

        async def run(self, input, tools):
            out = await tools.acall("ping_pair", host_a="pc1", host_b="pc3", count=2)
            if " 0% packet loss" in out:
                return fb.Diagnosis(is_anomaly=False, faulty_devices=[],
                                    text="pc1 reaches pc3; DNS and routing are healthy.",
                                    usage=fb.Usage(input_tokens=100, output_tokens=10), cost_usd=0.001)
            link = await tools.acall("exec_shell", host_name="r2", command="ip -br link show eth1")
            down = "DOWN" in link
            return fb.Diagnosis(
                is_anomaly=True, faulty_devices=["r2"] if down else [],
                text="interface eth1 of r2 is down, so the eBGP link to r3 and its session dropped. "
                     "Fix: ip link set eth1 up on r2." if down else "unreachable; cause unknown",
                usage=fb.Usage(input_tokens=100, output_tokens=10), cost_usd=0.001)

    def py_judge(scenario, diagnosis):
        scores = fb.judge(scenario, diagnosis, "rubric")
        out = fb.Scores(judge="py-judge")
        for a in scores.per_axis:
            if a["kind"] in ("assert", "must", "bonus"):
                out.axis(a["axis"], a["kind"], a["score"], "rubric")
        out.finish()
        return out

    res = fb.bench({"py": LinkCheck()}, dataset=sys.argv[1], scope="all", passes=2, jobs=1,
                   judge=py_judge, emulator="netns", topologies=sys.argv[2],
                   runs_root=sys.argv[3], report=False,
                   progress=lambda e: print(json.dumps(e), flush=True))
    print("RESULT", res.planned, res.skipped, res.finished, flush=True)
    """
).replace("import sys,", "import sys, json,")


def bench(runs: Path) -> subprocess.Popen:
    return start_python(BENCH_SCRIPT, NETNS_DATASET, NETNS_LABS, runs)


def manifest(runs: Path):
    try:
        with open(runs / "MANIFEST.csv") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        return []


def labs_owned_by(pid: int):
    root = Path("/run/faultbench/labs")
    if not root.is_dir():
        return []
    out = []
    for d in root.iterdir():
        try:
            state = json.loads((d / "state.json").read_text())
        except (OSError, ValueError):
            continue
        if (state.get("owner") or {}).get("pid") == pid:
            out.append(d.name)
    return out


def results(runs: Path):
    return {p: json.loads(p.read_text()) for p in runs.rglob("result.json")}


def test_python_agent_and_judge_bench_kill_and_resume(tmp_path: Path):
    runs = tmp_path / "runs"
    proc = bench(runs)
    deadline = time.monotonic() + 300
    while not manifest(runs):
        assert time.monotonic() < deadline, "no run finished in 300 s"
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    first = results(runs)
    in_flight = labs_owned_by(proc.pid)
    proc.kill()
    proc.wait()
    assert first, "a finished run is archived"
    assert in_flight or len(first) < 4, "nothing was in flight at the kill"

    resumed = bench(runs)
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    planned, skipped, finished = map(int, out.split("RESULT")[1].split())
    assert planned == 4 and skipped >= len(first) and skipped + finished == 4, out

    rows = manifest(runs)
    keys = {(r["scenario_id"], r["pass"]) for r in rows} if rows and "pass" in rows[0] else None
    assert len(rows) == 4, rows
    if keys is not None:
        assert len(keys) == 4
    after = results(runs)
    assert len(after) == 4
    # The finished runs were not redone: their records are byte-for-byte the same.
    for path, rec in first.items():
        assert after[path] == rec, f"{path} was rerun"
    for rec in after.values():
        assert rec["status"] == "scored", (rec["status"], rec.get("error"))
        assert rec["scores"]["judge"] == "py-judge"
        assert rec["phases"]["agent"]["outcome"]["cost_usd"] == 0.001
    outcomes = sorted(rec["scores"]["outcome"] for rec in after.values())
    assert outcomes[0] >= 0.7, outcomes  # the agent is right on both scenarios
    assert labs_owned_by(proc.pid) == [], "the killed bench left labs"
    assert labs_owned_by(resumed.pid) == []


CTRL_C_SCRIPT = HANG_PRELUDE + textwrap.dedent(
    """
    try:
        fb.bench({"hang": Hang()}, dataset=sys.argv[1], scope="all", emulator="netns",
                 topologies=sys.argv[2], runs_root=sys.argv[3], report=False)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    """
)


def test_ctrl_c_tears_the_live_lab_down(tmp_path: Path):
    proc = start_python(CTRL_C_SCRIPT, NETNS_DATASET, NETNS_LABS, tmp_path / "runs")
    assert proc.stdout.readline().strip() == "agent started", proc.stderr.read()
    assert labs_owned_by(proc.pid), "a live lab runs under the agent"
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in out, (out, err)
    assert labs_owned_by(proc.pid) == [], "Ctrl-C left the lab running"
    assert manifest(tmp_path / "runs") == [], "the interrupted run was archived"
