#!/usr/bin/env python3
"""Where verification time goes: per phase and per family, from generate's journals.

usage: gen-phase-times.py OUT_DIR [OUT_DIR ...]
Reads every <out>/*/gen/.journal-*.jsonl (the `phases` field each variant's entry carries) and
prints markdown tables: median/p95 per variant, mean seconds per phase, and per family.
"""
import glob
import json
import os
import statistics
import sys

PHASES = ["deploy", "fresh_baseline", "inject", "checks", "observe", "fix", "restored",
          "pristine", "teardown"]


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return 0.0
    k = max(0, min(len(xs) - 1, int(round(q * (len(xs) - 1)))))
    return xs[k]


def main():
    entries = []
    for out in sys.argv[1:]:
        for path in glob.glob(os.path.join(out, "*", "gen", ".journal-*.jsonl")):
            with open(path) as f:
                for line in f:
                    try:
                        e = json.loads(line)
                    except ValueError:
                        continue
                    if e.get("phases"):
                        entries.append(e)
    if not entries:
        sys.exit("no journal entries with phases")
    secs = [e["seconds"] for e in entries]
    ok = sum(e["verdict"] == "verified" for e in entries)
    print(f"{ok}/{len(entries)} verified; median {statistics.median(secs):.1f} s, "
          f"p95 {pct(secs, 0.95):.1f} s, mean {statistics.mean(secs):.1f} s\n")
    print("| phase | mean s | share | median s | p95 s |")
    print("|---|---:|---:|---:|---:|")
    total = sum(sum(e["phases"][p] for p in PHASES) for e in entries)
    for p in PHASES:
        xs = [e["phases"][p] for e in entries]
        print(f"| {p} | {statistics.mean(xs):.2f} | {100 * sum(xs) / total:.0f}% | "
              f"{statistics.median(xs):.2f} | {pct(xs, 0.95):.2f} |")
    print()
    fams = sorted({e["family"] for e in entries})
    print("| family | n | median s | " + " | ".join(PHASES) + " |")
    print("|---|---:|---:|" + "---:|" * len(PHASES))
    for f in fams:
        es = [e for e in entries if e["family"] == f]
        row = [f"{statistics.mean([e['phases'][p] for e in es]):.1f}" for p in PHASES]
        print(f"| `{f}` | {len(es)} | {statistics.median([e['seconds'] for e in es]):.1f} | "
              + " | ".join(row) + " |")


main()
