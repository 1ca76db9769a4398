#!/usr/bin/env python3
"""Writes the registries behind the report's resource targets (issue 30, item 4).

    scripts/report-bounds.py agents DIR   # DIR/MANIFEST.csv: 300 agents x 40 runs (12,000 rows)
    scripts/report-bounds.py rows DIR     # DIR/MANIFEST.csv: 1,000,000 rows (about 77 MB)
    scripts/report-bounds.py long DIR     # DIR/MANIFEST.csv: 3 runs of an agent with a 2 MiB name

The rows have the release's shape: core tickets (base80 Correct-Fault, cex120 false premise,
misdirected, misdescribed) and persona rewrites of the false-premise tickets, about 9 %
timeouts, seeded pseudo-random scores and effort, so every table and interval has work to do.
`scripts/report-bounds.sh` runs `faultbench report` on them under `/usr/bin/time -v`.
"""

import os
import random
import sys

HEADER = (
    "arm,pass,topology,scenario_id,agent,model,status,submitted,is_anomaly,outcome_score,"
    "fix_score,reasoning_score,tool_calls,in_tokens,cache_read_tokens,cache_write_tokens,"
    "out_tokens,cost_usd,wall_seconds"
)
PERSONAS = ["novice", "novice-confident", "naive", "naive-unsure", "naive-no-detail"]
PERSONA_ARMS = ["novice", "novice_confident", "naive", "naive_unsure", "naive_no_detail"]


def tickets(topologies, per_topology):
    """(arm, topology, scenario id) of core tickets and, for each false premise, one persona."""
    out = []
    for t in range(topologies):
        topo = f"T{t}"
        for s in range(per_topology):
            kind = s % 5
            if kind in (0, 1):
                out.append(("base80", topo, f"t{t}-fault-{s}"))
            elif kind == 2:
                base = f"t{t}-false-premise-{s}"
                out.append(("cex120", topo, base))
                p = (s // 5) % len(PERSONAS)
                out.append((PERSONA_ARMS[p], topo, f"{base}-{PERSONAS[p]}"))
            elif kind == 3:
                out.append(("cex120", topo, f"t{t}-x{s}-misdirected"))
            else:
                out.append(("cex120", topo, f"t{t}-x{s}-misdescribed"))
    return out


def row(rng, arm, pas, topo, sid, agent):
    timeout = rng.random() < 0.09
    status = "no_submission" if timeout else "scored"
    outcome = "" if timeout else rng.choice(["0.0", "0.3", "0.7", "1.0", "1.0"])
    fix = "" if timeout else rng.choice(["", "0.5", "1.0"])
    reasoning = "" if timeout else f"{rng.randrange(10) / 10}"
    anomaly = rng.choice(["True", "False"])
    return (
        f"{arm},p{pas},{topo},{sid},{agent},m,{status},{not timeout},{anomaly},{outcome},{fix},"
        f"{reasoning},{rng.randrange(40)},{rng.randrange(900)},{rng.randrange(9000)},"
        f"{rng.randrange(90)},{rng.randrange(900)},{rng.randrange(100) / 100},"
        f"{rng.randrange(900)}\n"
    )


def write(path, lines):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "MANIFEST.csv"), "w") as f:
        f.write(HEADER + "\n")
        for line in lines:
            f.write(line)


def agents(rng):
    # 300 agents, each with 40 runs: 20 tickets (4 topologies x 5) in 2 passes.
    ts = tickets(4, 4)
    for a in range(300):
        for pas in (1, 2):
            for arm, topo, sid in ts:
                yield row(rng, arm, pas, topo, sid, f"agent-{a:03}")


def rows(rng):
    # 1,000,000 runs: 50 agents x 500 tickets x 40 passes.
    ts = tickets(20, 21)[:500]
    for pas in range(1, 41):
        for arm, topo, sid in ts:
            for a in range(50):
                yield row(rng, arm, pas, topo, sid, f"agent-{a:02}")


def long_name(rng):
    name = "x" * (2 << 20)
    for arm, topo, sid in tickets(1, 3):
        yield row(rng, arm, 1, topo, sid, name)
        yield row(rng, arm, 1, topo, sid, "short")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("agents", "rows", "long"):
        sys.exit(__doc__)
    rng = random.Random(30)
    gen = {"agents": agents, "rows": rows, "long": long_name}[sys.argv[1]]
    write(sys.argv[2], gen(rng))


if __name__ == "__main__":
    main()
