#!/usr/bin/env python3
"""Wall time of a benchmark with fresh labs + prestart against warm lab reuse (`--reuse-labs`).

    scripts/fresh-lab-throughput.py [--rounds 2] [--jobs 2] [--delay TOPOLOGY=SECS ...]
                                    [--keep DIR] [TOPOLOGY ...]

For each topology (default: simple_bgp ospf_enterprise_static Kath2) it runs

    faultbench bench --agents baseline --judge rubric --scope all --topology T --jobs J [--reuse-labs]

alternately with reused and with fresh labs (reuse, fresh, reuse, fresh, …; other work on the
machine changes over time, so the two are interleaved) and prints, per topology, every wall time,
the medians, the ratio fresh / reuse, and the load average around each bench. `--delay T=S`
makes every agent wait S seconds before it starts (`FAULTBENCH_AGENT_DELAY_SECS`, bench-only):
an agent at least as slow as the topology's bring-up, so that a prestarted lab is ready in time.
The fresh benches' median bring-up (deploy + baseline) is printed beside the agents' median
time so that this can be checked. `--keep DIR` keeps every runs root there (for
`scripts/harness-overhead.py`). Needs root (netns labs) and a release build
(`cargo build --release -p faultbench-cli`; FAULTBENCH=path overrides the binary).
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def bench(binary, topology, jobs, reuse, delay, root):
    cmd = [binary, "bench", "--agents", "baseline", "--judge", "rubric", "--scope", "all",
           "--topology", topology, "--jobs", str(jobs), "--runs-root", root, "--no-report"]
    if reuse:
        cmd.append("--reuse-labs")
    env = dict(os.environ)
    if delay:
        env["FAULTBENCH_AGENT_DELAY_SECS"] = str(delay)
    before = loadavg()
    t = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t
    after = loadavg()
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    runs = [json.load(open(f)) for f in glob.glob(f"{root}/**/result.json", recursive=True)]
    statuses = {}
    for r in runs:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    bringup = [((r["phases"].get("deploy") or {}).get("duration_ms", 0)
                + (r["phases"].get("baseline") or {}).get("duration_ms", 0)) / 1000
               for r in runs if (r["phases"].get("deploy") or {}).get("lab") == "fresh"]
    agent = [(r["phases"].get("agent") or {}).get("duration_ms", 0) / 1000 for r in runs]
    waited = [(r["phases"].get("deploy") or {}).get("waited_ms", 0) / 1000 for r in runs]
    return {"wall": wall, "load": f"{before} → {after}", "statuses": statuses,
            "bringup": bringup, "agent": agent, "waited": waited, "runs": len(runs)}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("topologies", nargs="*",
                    default=["simple_bgp", "ospf_enterprise_static", "Kath2"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--delay", action="append", default=[], metavar="TOPOLOGY=SECS")
    ap.add_argument("--keep", metavar="DIR", help="keep the runs roots in DIR")
    args = ap.parse_args()
    binary = os.environ.get("FAULTBENCH", "target/release/faultbench")
    delays = dict(d.split("=", 1) for d in args.delay)
    tmp = args.keep or tempfile.mkdtemp(prefix="fb-throughput-")
    os.makedirs(tmp, exist_ok=True)
    try:
        for topo in args.topologies:
            delay = float(delays.get(topo, 0) or 0)
            res = {"reuse": [], "fresh": []}
            for rnd in range(args.rounds):
                for mode in ["reuse", "fresh"]:
                    root = os.path.join(tmp, f"{topo}-d{delay:g}-{mode}-{rnd}")
                    shutil.rmtree(root, ignore_errors=True)
                    r = bench(binary, topo, args.jobs, mode == "reuse", delay, root)
                    if not args.keep:
                        shutil.rmtree(root, ignore_errors=True)
                    res[mode].append(r)
                    print(f"{topo} {mode:5} round {rnd + 1}: {r['wall']:.1f} s, {r['runs']} runs "
                          f"{r['statuses']}, load {r['load']}", flush=True)
            mr = med([r["wall"] for r in res["reuse"]])
            mf = med([r["wall"] for r in res["fresh"]])
            fresh_bringup = med([x for r in res["fresh"] for x in r["bringup"]])
            agent = med([x for r in res["fresh"] for x in r["agent"]])
            waited = med([x for r in res["fresh"] for x in r["waited"]])
            print(f"== {topo} (agent delay {delay:g} s, --jobs {args.jobs}): reuse median "
                  f"{mr:.1f} s, fresh + prestart median {mf:.1f} s, ratio {mf / mr:.3f}; "
                  f"fresh bring-up median {fresh_bringup:.2f} s, agent median {agent:.2f} s, "
                  f"run waited for its lab median {waited:.2f} s", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
