#!/usr/bin/env python3
"""Medians per topology of a benchmark's run phases, from its result.json files.

    scripts/run-phases.py RUNS_ROOT [RUNS_ROOT...]

Prints a Markdown table, one row per topology: the run's wall time, the agent, the snapshots
before and after the agent, the presence watch, the post-injection check, the cleanup, the
harness's own phases (snapshots before and after + cleanup + judge: the median of their sum,
the figure issue 33 sets at <= 1 s on Kath1), the time a run waited for its prestarted lab, and
the lab's bring-up (deploy + baseline check). Seconds.
"""
import glob
import json
import statistics
import sys


def seconds(phase, key="duration_ms"):
    return ((phase or {}).get(key) or 0) / 1000


def main() -> int:
    rows = {}
    for root in sys.argv[1:]:
        for f in glob.glob(f"{root}/**/result.json", recursive=True):
            with open(f) as fh:
                r = json.load(fh)
            p = r.get("phases") or {}
            scenario = r.get("scenario")
            topo = scenario.get("topology", "?") if isinstance(scenario, dict) else "?"
            snap = p.get("snapshots") or {}
            before, after = seconds(snap, "before_ms"), seconds(snap, "after_ms")
            cleanup, judge = seconds(p.get("cleanup")), seconds(p.get("judge"))
            deploy = p.get("deploy") or {}
            rows.setdefault(topo, []).append(
                {
                    "run": r.get("wall_seconds") or 0,
                    "agent": seconds(p.get("agent")),
                    "before": before,
                    "after": after,
                    "presence": seconds(p.get("presence")),
                    "check": seconds(p.get("post_inject_check")),
                    "cleanup": cleanup,
                    "own": before + after + cleanup + judge,
                    "waited": seconds(deploy, "waited_ms"),
                    "bring_up": seconds(deploy) + seconds(p.get("baseline")),
                }
            )
    if not rows:
        print("no result.json found", file=sys.stderr)
        return 1
    cols = ["run", "agent", "before", "after", "presence", "check", "cleanup", "own", "waited", "bring_up"]
    heads = ["run", "agent", "snapshot before", "snapshot after", "presence", "post-inject check",
             "cleanup", "own phases", "waited", "bring-up"]
    print("| topology | runs | " + " | ".join(heads) + " |")
    print("|---|---:|" + "---:|" * len(heads))
    for topo in sorted(rows):
        rs = rows[topo]
        cells = [f"{statistics.median(x[c] for x in rs):.2f} s" for c in cols]
        print(f"| {topo} | {len(rs)} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
