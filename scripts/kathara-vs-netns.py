#!/usr/bin/env python3
"""The same benchmark on netns and on Kathará, back to back: statuses, scores and wall times.

    scripts/kathara-vs-netns.py [--topology simple_bgp] [--jobs 2] [--keep DIR]

Runs, netns first, then Kathará (separate runs roots):

    faultbench bench --emulator E --topology T --scope all --agents baseline --judge rubric --jobs J

and prints one row per scenario (status and outcome score on each engine, a mark where they
differ), each bench's wall time and load average before/after, the ratio Kathará / netns
(issue 34's target: ≤ 3), and the median of each run phase on both engines. Exit 1 when a
status or score differs or a bench left a Kathará instance. Needs root, the Kathará engine (`./scripts/install-deps.sh
--kathara`) and a build of the CLI (`cargo build -p faultbench-cli`; FAULTBENCH=path overrides
target/debug/faultbench). Labs are torn down by the benches themselves; the script checks that
no Kathará instance is left (`faultbench lab ls --emulator kathara`).
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

PHASES = ["deploy", "baseline", "injection", "post_inject_check", "agent", "presence",
          "judge", "cleanup"]


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def bench(binary, emulator, topology, jobs, root):
    cmd = [binary, "bench", "--emulator", emulator, "--topology", topology, "--scope", "all",
           "--agents", "baseline", "--judge", "rubric", "--jobs", str(jobs),
           "--runs-root", root, "--no-report"]
    before = loadavg()
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, stderr = p.communicate()
    wall = time.monotonic() - t
    # Kept beside the runs (with FAULTBENCH_TIMING=1: each Kathará lab's lstart, startups, lclean).
    with open(f"{root}.stderr", "w") as fh:
        fh.write(stderr)
    after = loadavg()
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{stderr}")
    runs = {}
    for f in glob.glob(f"{root}/**/result.json", recursive=True):
        with open(f) as fh:
            r = json.load(fh)
        runs[r["key"]["scenario_id"]] = r
    # An instance still owned by the bench's (ended) process is a lab it leaked.
    leaked = sorted(name for name, owner in instances(binary).items() if owner == f"pid {p.pid}")
    return {"wall": wall, "load": f"{before} → {after}", "runs": runs, "leaked": leaked}


def instances(binary):
    """The Kathará instances staged now (other users' included): name → owner column."""
    out = subprocess.run([binary, "lab", "ls", "--emulator", "kathara"],
                         capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines()[1:]:
        f = line.split()
        if len(f) >= 4:
            rows[f[0]] = " ".join(f[2:4])
    return rows


def score(run):
    s = (run.get("scores") or {}).get("outcome")
    return "–" if s is None else f"{s:.3f}"


def phase_median(runs, phase):
    xs = [((r["phases"].get(phase) or {}).get("duration_ms") or 0) / 1000 for r in runs.values()]
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topology", default="simple_bgp")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", metavar="DIR", help="keep the two runs roots in DIR")
    args = ap.parse_args()
    binary = os.environ.get("FAULTBENCH", "target/debug/faultbench")
    tmp = args.keep or tempfile.mkdtemp(prefix="fb-kathara-vs-netns-")
    os.makedirs(tmp, exist_ok=True)
    res = {}
    try:
        for emu in ["netns", "kathara"]:
            root = os.path.join(tmp, emu)
            shutil.rmtree(root, ignore_errors=True)
            res[emu] = bench(binary, emu, args.topology, args.jobs, root)
            print(f"{emu}: {len(res[emu]['runs'])} runs in {res[emu]['wall']:.1f} s "
                  f"(load {res[emu]['load']})", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    left = res["kathara"]["leaked"] + res["netns"]["leaked"]
    n, k = res["netns"], res["kathara"]
    ids = sorted(set(n["runs"]) | set(k["runs"]))
    differ = 0
    print(f"\n| scenario | netns | Kathará | |\n|---|---|---|---|")
    for i in ids:
        a, b = n["runs"].get(i), k["runs"].get(i)
        ca = f"{a['status']} {score(a)}" if a else "missing"
        cb = f"{b['status']} {score(b)}" if b else "missing"
        same = ca == cb
        differ += not same
        print(f"| {i} | {ca} | {cb} | {'' if same else 'DIFFERS'} |")
    ratio = k["wall"] / n["wall"]
    print(f"\n{len(ids) - differ}/{len(ids)} scenarios end alike. Wall time (--jobs {args.jobs}): "
          f"netns {n['wall']:.1f} s (load {n['load']}), Kathará {k['wall']:.1f} s "
          f"(load {k['load']}); ratio {ratio:.2f}")
    print("\nmedian per run (s) | " + " | ".join(PHASES))
    for emu in ["netns", "kathara"]:
        print(f"{emu} | " + " | ".join(f"{phase_median(res[emu]['runs'], p):.2f}"
                                        for p in PHASES))
    if left:
        print(f"\nKathará instances left by these benches: {', '.join(left)}")
    return 1 if differ or left else 0


if __name__ == "__main__":
    sys.exit(main())
