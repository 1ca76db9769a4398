#!/usr/bin/env python3
"""An independent recomputation of the report's new statistics from a MANIFEST.csv.

Written from the definitions (docs/reports.md), not from the Rust code, with the standard
library only, so that a test can hold the two against each other:

- pass-to-pass variation: (arm, scenario, agent) cells with >= 2 answered passes whose
  outcome spans >= 0.5 (with a 1e-9 tolerance: 0.7499999999999999 is 0.75), per agent and
  pooled, for E1 (base80 + cex120), E2 (persona arms) and all arms; also the count with the
  release's exact float comparison;
- Table 7c: reasoning by ticket style, per pass the mean over answered runs, then the mean
  over passes ("All" pools the agents inside each pass);
- Table 8b: tool calls, input tokens, output tokens, USD per answered run by category and
  ticket style, pooled over passes;
- weight sensitivity: outcomes re-weighted from every decomposition of the recorded value
  into required/bonus pass fractions (<= 6 required, <= 4 bonus axes), as a lo-hi range;
- two bootstrap intervals with Python's own generator (families = a core scenario with its
  persona rewrites, drawn within their category; percentile 2.5/97.5).

Usage: independent-stats.py MANIFEST.csv [RESAMPLES] > out.json
"""

import csv
import json
import random
import sys
from collections import defaultdict

PERSONAS = ["novice", "novice_confident", "naive", "naive_unsure", "naive_no_detail"]
STYLES = ["standard"] + PERSONAS
CATS = ["Correct-Fault", "False-Premise", "Wrong-Device", "Wrong-Cause"]


def category(r):
    if r["arm"] == "base80":
        return "Correct-Fault"
    if r["arm"] in PERSONAS:
        return "False-Premise"
    sid = r["scenario_id"].lower()
    if "false-premise" in sid:
        return "False-Premise"
    if sid.endswith("-misdirected"):
        return "Wrong-Device"
    if sid.endswith("-misdescribed"):
        return "Wrong-Cause"
    return "Correct-Fault"


def core(r):
    return r["arm"] in ("base80", "cex120")


def style(r):
    if r["arm"] in PERSONAS:
        return r["arm"]
    if r["arm"] == "cex120" and category(r) == "False-Premise":
        return "standard"
    return None


def answered(r):
    return r["status"] == "scored"


def num(s):
    return float(s) if s.strip() != "" else None


def mean_of_pass_means(rows, value):
    per = defaultdict(list)
    for r in rows:
        if answered(r):
            v = value(r)
            if v is not None:
                per[r["pass"]].append(v)
    means = [sum(v) / len(v) for v in per.values() if v]
    return sum(means) / len(means) if means else None


def pooled(rows, value):
    vals = [value(r) for r in rows if answered(r)]
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


def family(r):
    sid = r["scenario_id"]
    if r["arm"] in PERSONAS:
        suffix = "-" + r["arm"].replace("_", "-")
        if sid.endswith(suffix):
            sid = sid[: -len(suffix)]
    return r["topology"] + "/" + sid


def variation(rows, agents, pick, tol):
    cells = defaultdict(list)
    for r in rows:
        if pick(r) and answered(r) and r["outcome_score"].strip():
            cells[(r["arm"], r["topology"], r["scenario_id"], r["agent"])].append(float(r["outcome_score"]))
    out = {}
    for a in agents + ["All"]:
        elig = [v for k, v in cells.items() if len(v) >= 2 and (a == "All" or k[3] == a)]
        flips = sum(1 for v in elig if max(v) - min(v) >= 0.5 - tol)
        out[a] = [flips, len(elig)]
    return out


def decompose(x):
    """Every (mp, mt, bp, bt) with 0.7/0.3 outcome x."""
    found = []
    for mt in range(0, 7):
        for bt in range(0, 5):
            if mt + bt == 0:
                continue
            for mp in range(mt + 1):
                for bp in range(bt + 1):
                    if abs(weighted(mp, mt, bp, bt, 0.7, False) - x) < 1e-9:
                        found.append((mp, mt, bp, bt))
    return found


def weighted(mp, mt, bp, bt, w, strict):
    num_, den = 0.0, 0.0
    if mt:
        f = (1.0 if mp == mt else 0.0) if strict else mp / mt
        num_ += w * f
        den += w
    if bt:
        num_ += (1 - w) * bp / bt
        den += 1 - w
    return min(1.0, num_ / den) if den else 0.0


def bootstrap(rows, stat, strata_of, resamples, seed):
    fams = defaultdict(list)
    strata = defaultdict(set)
    for r in rows:
        f = family(r)
        fams[f].append(r)
        strata[strata_of(r)].add(f)
    strata = {k: sorted(v) for k, v in strata.items()}
    rng = random.Random(seed)
    vals = []
    for _ in range(resamples):
        sample = []
        for fs in strata.values():
            for _ in range(len(fs)):
                sample.extend(fams[fs[rng.randrange(len(fs))]])
        v = stat(sample)
        if v is not None:
            vals.append(v)
    vals.sort()
    n = len(vals)
    return [vals[int(0.025 * n)], vals[min(n - 1, int(0.975 * n))]]


def main():
    path = sys.argv[1]
    resamples = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    agents = sorted({r["agent"] for r in rows})
    cols = agents + ["All"]
    sel = lambda a: (lambda r: a == "All" or r["agent"] == a)
    out = {"runs": len(rows)}
    groups = [("E1 core (base80 + cex120)", core), ("E2 personas", lambda r: not core(r)), ("All arms", lambda r: True)]
    out["variation"] = {label: variation(rows, agents, pick, 1e-9) for label, pick in groups}
    out["variation_exact_float"] = {label: variation(rows, agents, pick, 0.0) for label, pick in groups}
    out["reasoning_by_style"] = {
        s: {a: mean_of_pass_means([r for r in rows if style(r) == s and sel(a)(r)], lambda r: num(r["reasoning_score"])) for a in cols}
        for s in STYLES
    }
    group_defs = [(c, (lambda c: lambda r: core(r) and category(r) == c)(c)) for c in CATS]
    group_defs += [(p, (lambda p: lambda r: r["arm"] == p)(p)) for p in PERSONAS]
    metrics = {
        "tool_calls": lambda r: float(r["tool_calls"] or 0),
        "input_tokens": lambda r: float(r["in_tokens"] or 0) + float(r["cache_read_tokens"] or 0) + float(r["cache_write_tokens"] or 0),
        "output_tokens": lambda r: float(r["out_tokens"] or 0),
        "usd": lambda r: float(r["cost_usd"] or 0),
    }
    out["effort_by_group"] = {
        m: {label: {a: pooled([r for r in rows if g(r) and sel(a)(r)], f) for a in cols} for label, g in group_defs}
        for m, f in metrics.items()
    }
    cache = {}
    rules = {"0.6/0.4": (0.6, False), "0.7/0.3": (0.7, False), "0.8/0.2": (0.8, False), "strict 0.7/0.3": (0.7, True)}
    sens = {}
    for name, (w, strict) in rules.items():
        def lo_hi(r, pick):
            x = num(r["outcome_score"])
            if x is None:
                return None
            if x not in cache:
                cache[x] = decompose(x)
            v = [weighted(*d, w, strict) for d in cache[x]]
            return (min(v) if pick == "lo" else max(v)) if v else None
        sens[name] = {
            c: {
                a: [
                    mean_of_pass_means([r for r in rows if core(r) and category(r) == c and sel(a)(r)], lambda r: lo_hi(r, "lo")),
                    mean_of_pass_means([r for r in rows if core(r) and category(r) == c and sel(a)(r)], lambda r: lo_hi(r, "hi")),
                ]
                for a in cols
            }
            for c in CATS
        }
    out["sensitivity"] = sens
    cf = [r for r in rows if core(r) and category(r) == "Correct-Fault"]
    fp_sade = [r for r in rows if style(r) == "standard" and r["agent"] == "sade"]

    def overdiag(sample):
        a = [r for r in sample if answered(r)]
        return sum(1 for r in a if r["is_anomaly"] == "True") / len(a) if a else None

    out["bootstrap"] = {
        "resamples": resamples,
        "cf_all_outcome": bootstrap(cf, lambda s: mean_of_pass_means(s, lambda r: num(r["outcome_score"])), category, resamples, 0),
        "standard_sade_over_diagnosis": bootstrap(fp_sade, overdiag, category, resamples, 0),
    }
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
