#!/usr/bin/env python3
"""What the repair task's verification costs per run, from a runs root's result.json files.

    scripts/repair-overhead.py RUNS_ROOT [RUNS_ROOT...]

Per runs root: the verdicts, and the time the repair task adds to a run — the verification
after the agent (fault checks, baseline probes, snapshot diff: `repair.duration_ms`) and the
extra snapshot before the injection (`repair.pre_injection_snapshot_ms`, when it was not taken
while the lab was prepared) — as median, 90th
percentile and maximum, overall and per verdict. The verification replaces the diagnose task's
presence watch, whose time is printed beside it for comparison when diagnose runs are given.
"""
import glob
import json
import statistics
import sys
from collections import defaultdict


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def line(label, xs):
    if not xs:
        return f"  {label:<28} (none)"
    return (f"  {label:<28} n={len(xs):<3} median {statistics.median(xs) / 1000:.2f} s"
            f"  p90 {pct(xs, 0.9) / 1000:.2f} s  max {max(xs) / 1000:.2f} s")


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    for root in sys.argv[1:]:
        verdicts = defaultdict(int)
        total, by_verdict, pre, presence, verification = [], defaultdict(list), [], [], []
        for f in sorted(glob.glob(f"{root}/**/result.json", recursive=True)):
            r = json.load(open(f))
            rep = r.get("repair")
            if r.get("task") != "repair" or not rep:
                p = (r.get("phases") or {}).get("presence")
                if p:
                    presence.append(p.get("duration_ms", 0))
                continue
            v = rep["verdict"]
            verdicts[v] += 1
            # A snapshot taken while the lab was prepared is off the run's path.
            on_path = 0 if rep.get("pre_injection_snapshot_at_prepare") else rep.get("pre_injection_snapshot_ms", 0)
            extra = rep.get("duration_ms", 0) + on_path
            total.append(extra)
            by_verdict[v].append(extra)
            if on_path:
                pre.append(on_path)
            verification.append(rep.get("duration_ms", 0))
        print(f"{root}: " + ", ".join(f"{k} {n}" for k, n in sorted(verdicts.items())))
        print(line("added by the repair task", total))
        for v, xs in sorted(by_verdict.items()):
            print(line(f"  … {v}", xs))
        print(line("  verification after the agent", verification))
        print(line("  pre-injection snapshot on the run's path", pre))
        if presence:
            print(line("diagnose presence watch", presence))
    return 0


if __name__ == "__main__":
    sys.exit(main())
