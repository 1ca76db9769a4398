#!/usr/bin/env python3
"""Medians per topology of a benchmark's run phases, from its result.json files.

    scripts/run-phases.py RUNS_ROOT [RUNS_ROOT...]
    scripts/run-phases.py --pair FRESH REUSED


Prints a Markdown table, one row per topology: the run's wall time, the agent, the snapshots
before and after the agent, the presence watch, the post-injection check, the cleanup, the
harness's own phases (snapshots before and after + cleanup + judge: the median of their sum,
the figure issue 33 sets at <= 1 s on Kath1), the time a run waited for its prestarted lab, and
the lab's bring-up (deploy + baseline check). Seconds.

--pair compares two passes of the same runs, e.g. one on fresh labs and one with --reuse-labs:
per topology, the runs' summed wall time in each and their ratio, and each pass's span (first
start to last end over all its runs, what the pass took).
"""
import glob
import json
import statistics
import sys


def seconds(phase, key="duration_ms"):
    return ((phase or {}).get(key) or 0) / 1000


def pair(fresh: str, reused: str) -> int:
    sums, spans = {}, []
    for k, root in enumerate((fresh, reused)):
        first, last = None, None
        for f in glob.glob(f"{root}/**/result.json", recursive=True):
            with open(f) as fh:
                r = json.load(fh)
            scenario = r.get("scenario")
            topo = scenario.get("topology", "?") if isinstance(scenario, dict) else "?"
            cell = sums.setdefault(topo, [[0, 0.0], [0, 0.0]])[k]
            cell[0] += 1
            cell[1] += r.get("wall_seconds") or 0
            s, e = r.get("started_at"), r.get("finished_at")
            if s and e:
                first = s if first is None or s < first else first
                last = e if last is None or e > last else last
        spans.append((first, last))
    if not sums:
        print("no result.json found", file=sys.stderr)
        return 1
    print("| topology | runs | fresh: sum of runs | reused: sum of runs | fresh / reused |")
    print("|---|---:|---:|---:|---:|")
    tot = [0.0, 0.0]
    for topo in sorted(sums):
        (nf, wf), (nr, wr) = sums[topo]
        tot[0] += wf
        tot[1] += wr
        ratio = f"{wf / wr:.2f}" if wr else "-"
        print(f"| {topo} | {nf} / {nr} | {wf:.0f} s | {wr:.0f} s | {ratio} |")
    print(f"| **all** | | {tot[0]:.0f} s | {tot[1]:.0f} s | {tot[0] / tot[1]:.2f} |")
    for name, (first, last) in zip(("fresh", "reused"), spans):
        print(f"{name}: first run started {first}, last ended {last}")
    return 0


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--pair":
        return pair(sys.argv[2], sys.argv[3])
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
