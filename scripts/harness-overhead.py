#!/usr/bin/env python3
"""Harness overhead per run from a runs root's result.json files.

    scripts/harness-overhead.py RUNS_ROOT [RUNS_ROOT...]

Overhead = a run's wall time plus the time it waited for its lab, minus its agent phase (what
the agent itself spends thinking and probing), split into runs on a fresh lab (deployed for the
run, possibly prestarted while the job's previous run worked) and on a reused lab
(`--reuse-labs`: the previous run's reverted lab; older records say `warm`). Also prints the
median of every phase, and the part of the overhead that is the network settling (the
post-injection check waiting for the fault to show, the revert waiting for the baseline to hold
again) rather than harness machinery.
"""
import glob
import json
import statistics
import sys


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    runs = []
    for root in sys.argv[1:]:
        for f in glob.glob(f"{root}/**/result.json", recursive=True):
            runs.append(json.load(open(f)))
    if not runs:
        print("no result.json found", file=sys.stderr)
        return 1
    groups = {"fresh": [], "reused": []}
    phases = ["deploy", "baseline", "injection", "post_inject_check", "snapshots", "agent",
              "presence", "judge", "cleanup"]
    for r in runs:
        p = r["phases"]
        dep = p.get("deploy") or {}
        ms = {k: (p.get(k) or {}).get("duration_ms", 0) for k in phases}
        snaps = p.get("snapshots") or {}
        ms["snapshots"] = snaps.get("before_ms", 0) + snaps.get("after_ms", 0)
        ms["waited"] = dep.get("waited_ms", 0)
        wall = r["wall_seconds"] + ms["waited"] / 1000
        over = wall - ms["agent"] / 1000
        settle = (ms["post_inject_check"] + ms["cleanup"]) / 1000
        reused = dep.get("lab") == "reused" or dep.get("warm")
        groups["reused" if reused else "fresh"].append(
            (over, settle, ms, wall, r["status"], dep.get("prestarted", False)))
    print(f"{len(runs)} runs")
    for name, g in groups.items():
        if not g:
            continue
        print(f"\n{name}: {len(g)} runs")
        print(f"  overhead (wall - agent): median {med([x[0] for x in g]):.2f} s, "
              f"min {min(x[0] for x in g):.2f}, max {max(x[0] for x in g):.2f}")
        print(f"  of which network settling (post-inject check + revert/cleanup): median "
              f"{med([x[1] for x in g]):.2f} s")
        print(f"  machinery only (overhead - settling): median "
              f"{med([x[0] - x[1] for x in g]):.2f} s")
        print(f"  prestarted labs: {sum(1 for x in g if x[5])}")
        for k in ["waited"] + phases:
            print(f"  {k:18} median {med([x[2][k] for x in g]) / 1000:.3f} s")
        print(f"  wall median {med([x[3] for x in g]):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
