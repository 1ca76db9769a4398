"""What the Python boundary adds to a tool call, and jobs=2 concurrency of a Python agent.

    python crates/faultbench-py/python/bench/tool_overhead.py [N]

1. Per tool call: the same `frr_exec` call on the examples' mock network (answers from memory,
   so the call itself is cheap and the boundary dominates), N times from Rust (no Python in the
   loop), from Python sync (`tools.call`), through a callable (`tools["frr_exec"](**kw)`), and
   awaited (`await tools.acall`). The difference to Rust is the boundary's cost per call.
2. Concurrency: a Python agent making three 300 ms tool calls per run, 4 runs, `bench` with
   jobs=1 then jobs=2; wall times, and how many call pairs of different runs overlapped.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import faultbench as fb
from faultbench import _native

REPO = Path(__file__).resolve().parents[4]
MOCK = REPO / "examples" / "mock"
ARGS = {"router_name": "r1", "command": "show ip ospf neighbor"}


def per_call(n: int) -> None:
    with fb.Lab.up(MOCK / "Duo", emulator="mock") as lab:
        tools = lab.tools()
        tool = tools["frr_exec"]
        for _ in range(200):  # warm up
            tools.call("frr_exec", ARGS)

        def best_of(f, reps=5):
            return min(f() for _ in range(reps)) / n * 1e6

        def py_sync():
            t = time.perf_counter()
            for _ in range(n):
                tools.call("frr_exec", ARGS)
            return time.perf_counter() - t

        def py_callable():
            t = time.perf_counter()
            for _ in range(n):
                tool(**ARGS)
            return time.perf_counter() - t

        def py_async():
            async def loop():
                t = time.perf_counter()
                for _ in range(n):
                    await tools.acall("frr_exec", ARGS)
                return time.perf_counter() - t

            return asyncio.run(loop())

        rust = best_of(lambda: _native._time_rust_calls(tools, "frr_exec", ARGS, n))
        rows = [
            ("Rust (same toolbox, no Python)", rust),
            ("Python tools.call(name, args)", best_of(py_sync)),
            ("Python tools[name](**kwargs)", best_of(py_callable)),
            ("Python await tools.acall(...)", best_of(py_async)),
        ]
        print(f"per tool call, frr_exec on the mock Duo network, best of 5 x {n} calls:")
        for name, us in rows:
            extra = "" if name.startswith("Rust") else f"   (+{us - rust:.1f} µs over Rust)"
            print(f"  {name:<34} {us:8.1f} µs{extra}")


class SlowProber:
    name = "slow-prober"

    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()

    async def run(self, input, tools):
        for device in ["pc1", "r1", "r2"]:
            t0 = time.monotonic()
            await tools.acall("exec_shell", host_name=device, command="slow-probe")
            with self.lock:
                self.calls.append((t0, time.monotonic(), threading.get_ident()))
        return fb.Diagnosis(is_anomaly=False, faulty_devices=[], text="ok")


def concurrency() -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        topo = tmp / "topologies"
        shutil.copytree(MOCK / "Duo", topo / "Duo")
        with open(topo / "Duo" / "mock.toml", "a") as f:
            f.write('\n[[rule]]\ndevice = "*"\ncommand = "slow-probe"\ndelay_ms = 300\nstdout = "probed\\n"\n')
        ds = tmp / "dataset" / "duo_Q" / "base"
        ds.mkdir(parents=True)
        shutil.copy(MOCK / "duo-r1-ospfd-down.txt", ds)
        print("bench, 4 runs x 3 tool calls of 300 ms (mock), Python async agent:")
        for jobs in (1, 2):
            agent = SlowProber()
            t = time.monotonic()
            fb.bench({"prober": agent}, dataset=tmp / "dataset", scope="all", passes=4, jobs=jobs,
                     emulator="mock", topologies=topo, runs_root=tmp / f"runs{jobs}", report=False)
            wall = time.monotonic() - t
            overlaps = sum(
                1 for i, a in enumerate(agent.calls) for b in agent.calls[i + 1:]
                if a[2] != b[2] and a[0] < b[1] and b[0] < a[1]
            )
            busy = statistics.fmean(c[1] - c[0] for c in agent.calls)
            print(f"  jobs={jobs}: {wall:5.2f} s wall, {len(agent.calls)} calls "
                  f"(mean {busy * 1000:.0f} ms), {overlaps} overlapping call pairs of different runs")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    per_call(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
    concurrency()
