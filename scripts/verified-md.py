#!/usr/bin/env python3
"""Renders dataset/VERIFIED.md from the JSON of `faultbench scenario check --json`.

    scripts/verified-md.py CHECK.json --command "..." --wall "52 min" > dataset/VERIFIED.md

Scenario ids are mapped to their files under dataset/ (ids are unique there), so the layer of
each scenario comes from its folder.
"""
import argparse
import collections
import datetime
import json
import pathlib
import subprocess
import sys

LAYERS = ["base", "cex", "novice", "naive", "novice_confident", "naive_unsure", "naive_no_detail"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--dataset", default="dataset")
    ap.add_argument("--command", required=True)
    ap.add_argument("--wall", required=True, help="wall time of the whole check, as text")
    ap.add_argument("--commit", help="the commit the checking binary was built from (default HEAD)")
    a = ap.parse_args()

    reports = json.load(open(a.report))
    files = {p.stem: p for p in pathlib.Path(a.dataset).rglob("*.txt")}
    commit = a.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
    counts = collections.Counter(r["outcome"] for r in reports)
    out = []
    w = out.append
    w("# Dataset verification on netns")
    w("")
    w(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
    w(f"- faultbench built from commit {commit}; dataset/ and topologies/ as committed with this file")
    w(f"- command: `{a.command}`")
    w(f"- wall time: {a.wall} on a 2-core VM")
    w(f"- result: **{counts['passed']} passed, {counts['failed']} failed, "
      f"{counts['unsupported_on_host']} unsupported on this host** of {len(reports)} scenarios")
    w("")
    w("What a pass means: the topology came up and its healthy baseline (`baseline.toml`) held; for")
    w("a scenario with a fault, `[INJECTION]` ran and every `[POST-INJECT-CHECK]` held, then the")
    w("`[FIX]` commands ran and the baseline held again; for a scenario without injection (false")
    w("premise and persona rewrites), the baseline held. Scenarios without injection shared one")
    w("pristine lab per job (`--share-labs`: nothing had been injected into it, its baseline was")
    w("re-checked for each); every injecting scenario ran on a freshly deployed lab.")
    w("")
    by_topo = collections.defaultdict(list)
    for r in reports:
        by_topo[r["topology"]].append(r)
    for topo in sorted(by_topo):
        rs = by_topo[topo]
        ok = sum(r["outcome"] == "passed" for r in rs)
        w(f"## {topo} — {ok}/{len(rs)} passed")
        w("")
        w("| layer | scenario | result | lab | what held |")
        w("|---|---|---|---|---|")
        def key(r):
            p = files.get(r["scenario"])
            layer = p.parent.name if p else "?"
            return (LAYERS.index(layer) if layer in LAYERS else 99, r["scenario"])
        for r in sorted(rs, key=key):
            p = files.get(r["scenario"])
            layer = p.parent.name if p else "?"
            lab = "shared" if r.get("reused_lab") else "fresh"
            reason = r["reason"].replace("|", "\\|")
            w(f"| {layer} | `{r['scenario']}` | {r['outcome']} | {lab} | {reason} |")
        w("")
    sys.stdout.write("\n".join(out) + "\n")
    return 0 if counts["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
