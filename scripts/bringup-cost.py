#!/usr/bin/env python3
"""What one netns bring-up costs: CPU seconds by process kind and by deploy phase, process
spawns by kind, and wall time with the load average beside it.

Usage (root, from the repository):
    scripts/bringup-cost.py [--runs N] [--beside TOPOLOGY] [--json FILE] TOPOLOGY...
e.g.  scripts/bringup-cost.py --runs 3 Kath1 Kath3 Kath2
      scripts/bringup-cost.py --beside Kath1 Kath3      (Kath3 measured while Kath1 comes up)

Each run is `FAULTBENCH_TIMING=1 faultbench lab up topologies/<ID>` under a system-wide
`perf record -k CLOCK_MONOTONIC` of three scheduler tracepoints (process fork, exec, and
sched_stat_runtime: the CPU every task ran). Only the tasks descended from that `lab up`
process count: its own threads, every command it ran (startup scripts, `ip`, health checks) and
everything those started — the devices' FRR daemons included, since they are started from the
startup scripts. With --beside, a second `lab up` of another topology starts at the same time
(not measured; its tree is not ours). Both labs are torn down after each run.

Printed per run: wall, load average (1 min) at the start, the CPU of the tree split into
  harness  the faultbench process itself (its threads: procfs reads, vty queries, setns/fork),
  ours     commands the harness runs around the lab's files: `ip -b` (links), health checks
           (`ip -j addr`), the startup wrapper's chown/find of /etc/frr (told apart by name
           only: its mkdir, chmod and rm count under startup, as the lab's own do),
  startup  the lab's startup files and what they run (ip, bridge, sysctl, the FRR init script),
  daemons  FRR / keepalived daemons (what the lab's protocols cost, timers as the lab sets them),
and the same CPU cut by deploy phase (the phases `FAULTBENCH_TIMING` prints), plus spawns by
executable. CPU seconds and spawn counts are the reliable numbers when other work shares the
machine; wall is given with the load average. Uses target/debug/faultbench unless $FAULTBENCH
points elsewhere.
"""
import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

FB = os.environ.get("FAULTBENCH", "target/debug/faultbench")
TRACEPOINTS = "sched:sched_process_fork,sched:sched_process_exec,sched:sched_stat_runtime"
DAEMONS = {
    "zebra", "ospfd", "ospf6d", "bgpd", "ripd", "ripngd", "isisd", "eigrpd", "staticd",
    "mgmtd", "watchfrr", "babeld", "pimd", "ldpd", "bfdd", "pathd", "fabricd", "vrrpd",
    "keepalived", "nhrpd", "sharpd", "pbrd", "pim6d",
}
# Commands the harness itself runs (not the lab's files): the link batch, the startup
# wrapper's permission fix-up, the duplicate-address check.
OURS = {"chown", "find"}
PHASE_RE = re.compile(r"\[faultbench timing\] (.+?): (\d+) ms \(cpu self (\d+) ms, children (\d+) ms; at ([\d.]+)\)")
EVENT_RE = re.compile(r"^\s*(.+?)\s+(\d+)/(\d+)\s+(?:\[\d+\]\s+)?([\d.]+):\s+sched:(\w+):\s+(.*)$")


def parse_perf(path, root):
    """The trace's events of the tasks descended from `root` (threads included), followed in
    time order so that a PID another process reuses later is not counted as ours: (parent,
    execs, runtimes, tree) with parent child->parent tid, execs tid->[(t, file)], runtimes
    [(t, tid, comm, ns)], tree every tid that was ours at some point."""
    out = subprocess.run(
        ["perf", "script", "-i", path, "-F", "comm,pid,tid,time,event,trace"],
        capture_output=True, text=True, errors="replace",
    ).stdout
    events = []
    for line in out.splitlines():
        m = EVENT_RE.match(line)
        if m:
            comm, _pid, tid, t, event, rest = m.groups()
            events.append((float(t), int(tid), comm, event, rest))
    events.sort(key=lambda e: e[0])
    ours, tree = {root}, {root}
    parent, execs, runtimes = {}, collections.defaultdict(list), []
    for t, tid, comm, event, rest in events:
        f = dict(kv.split("=", 1) for kv in re.findall(r"(\w+=\S+)", rest))
        if event == "sched_process_fork":
            child = int(f["child_pid"])
            if tid in ours:
                ours.add(child)
                tree.add(child)
                parent[child] = tid
            elif child != root:  # the root's own fork, by this script, comes first
                ours.discard(child)
        elif event == "sched_process_exec" and tid in ours:
            execs[tid].append((t, f.get("filename", "?")))
        elif event == "sched_stat_runtime" and int(f["pid"]) in ours:
            runtimes.append((t, int(f["pid"]), f.get("comm", comm), int(f["runtime"])))
    return parent, execs, runtimes, tree


def classify(tid, comm, root, parent, execs, tree_kind):
    """harness / ours / startup / daemons for one task."""
    if tid in tree_kind:
        return tree_kind[tid]
    kind = None
    if comm in DAEMONS:
        kind = "daemons"
    elif tid == root or (not execs.get(tid) and parent.get(tid) == root):
        kind = "harness"
    else:
        names = [os.path.basename(f) for _, f in execs.get(tid, [])]
        if any(n in OURS for n in names):
            kind = "ours"
        elif names and names[-1] == "ip" and parent.get(tid) is not None and (
            classify(parent[tid], "", root, parent, execs, tree_kind) == "harness"
        ):
            kind = "ours"  # `ip -b` and the health check's `ip -j`, run by the harness itself
        elif not names:
            # A forked, not exec'd task: its parent's kind (the faultbench fork before exec
            # stays the harness's; a bash subshell the startup's).
            p = parent.get(tid)
            kind = classify(p, "", root, parent, execs, tree_kind) if p is not None else "harness"
        else:
            kind = "startup"
    tree_kind[tid] = kind
    return kind


def one_run(topology, name, beside=None):
    trace = tempfile.NamedTemporaryFile(prefix="bringup-cost-", suffix=".data", delete=False).name
    perf_log = tempfile.TemporaryFile(mode="w+")
    perf = subprocess.Popen(
        ["perf", "record", "-a", "-k", "CLOCK_MONOTONIC", "-e", TRACEPOINTS, "-o", trace],
        stdout=subprocess.DEVNULL, stderr=perf_log,
    )
    time.sleep(1.0)  # perf is recording once its buffers are mapped
    load = os.getloadavg()[0]
    env = dict(os.environ, FAULTBENCH_TIMING="1")
    other = None
    if beside:
        other = subprocess.Popen(
            [FB, "lab", "up", f"topologies/{beside}", "--name", name + "-beside"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ),
        )
    t0 = time.monotonic()
    up = subprocess.Popen(
        [FB, "lab", "up", f"topologies/{topology}", "--name", name],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    root = up.pid
    stdout, stderr = up.communicate()
    wall = time.monotonic() - t0
    # communicate() reaped it; its CPU (self + reaped children) is in the process's own
    # rusage of children, taken as the difference around the run.
    if other:
        other.wait()
    time.sleep(0.5)
    perf.send_signal(signal.SIGINT)
    perf.wait()
    perf_log.seek(0)
    # perf says "Processed N events and lost M chunks!" when its buffers overflowed: the
    # trace then misses tasks, and the counts are low.
    lost = sum(int(n) for n in re.findall(r"lost (\d+) chunks", perf_log.read()))
    for n in [name] + ([name + "-beside"] if beside else []):
        subprocess.run([FB, "lab", "down", n], capture_output=True)
    if up.returncode:
        print(f"{topology}: lab up failed:\n{stderr[-3000:]}", flush=True)
    phases = [
        (m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), float(m.group(5)))
        for m in PHASE_RE.finditer(stderr)
    ]
    parent, execs, runtimes, tree = parse_perf(trace, root)
    os.unlink(trace)
    kinds = {}
    cpu = collections.Counter()
    by_comm = collections.Counter()
    by_phase = collections.defaultdict(collections.Counter)
    for t, tid, comm, ns in runtimes:
        k = classify(tid, comm, root, parent, execs, kinds)
        cpu[k] += ns
        by_comm[comm] += ns
        phase = next((p[0] for p in phases if t <= p[4]), "after deploy")
        by_phase[phase][k] += ns
    spawns = collections.Counter()
    spawned_by = collections.Counter()

    def program(tid):
        """The last program `tid` (or the task it was forked from) exec'd."""
        while tid is not None:
            if execs.get(tid):
                return os.path.basename(execs[tid][-1][1])
            tid = parent.get(tid)
        return "?"

    for tid in tree:
        for _, f in execs.get(tid, []):
            spawns[os.path.basename(f)] += 1
            spawned_by[f"{program(parent.get(tid))}>{os.path.basename(f)}"] += 1
    forks = len([t for t in tree if t != root])
    return {
        "topology": topology,
        "beside": beside,
        "ok": up.returncode == 0,
        "wall_s": round(wall, 2),
        "load1": round(load, 2),
        "cpu_s": {k: round(v / 1e9, 3) for k, v in sorted(cpu.items())},
        "cpu_total_s": round(sum(cpu.values()) / 1e9, 3),
        "cpu_by_comm_s": {k: round(v / 1e9, 3) for k, v in by_comm.most_common(15)},
        "phases": [
            {"phase": p[0], "wall_ms": p[1], "harness_self_ms": p[2], "reaped_children_ms": p[3],
             "cpu_s": {k: round(v / 1e9, 3) for k, v in sorted(by_phase[p[0]].items())}}
            for p in phases
        ],
        "spawns": dict(spawns.most_common()),
        "spawns_total": sum(spawns.values()),
        "perf_lost_chunks": lost,
        "spawned_by": dict(spawned_by.most_common(25)),
        "tasks": forks,
        "polls": next((l.split(" ms ", 1)[1] for l in stderr.splitlines() if " polls of " in l), ""),
        "summary": (stderr.strip().splitlines() or [""])[-1][:300],
    }


def show(r):
    cpu = ", ".join(f"{k} {v:.2f}" for k, v in r["cpu_s"].items())
    print(f"{r['topology']}{' beside ' + r['beside'] if r['beside'] else ''}: "
          f"wall {r['wall_s']:.1f} s (load {r['load1']}), CPU {r['cpu_total_s']:.2f} s ({cpu}), "
          f"{r['spawns_total']} execs, {r['tasks']} tasks", flush=True)
    if r["perf_lost_chunks"]:
        print(f"    perf lost {r['perf_lost_chunks']} chunks of events: this run's counts are low")
    if r["polls"]:
        print(f"    readiness: {r['polls']}")
    for p in r["phases"]:
        c = ", ".join(f"{k} {v:.2f}" for k, v in p["cpu_s"].items())
        print(f"    {p['phase']:<26} {p['wall_ms']:>6} ms  cpu: {c}")
    print("    execs: " + ", ".join(f"{k} {v}" for k, v in r["spawns"].items()))
    print("    top CPU by command: " + ", ".join(f"{k} {v:.2f}" for k, v in r["cpu_by_comm_s"].items()))


def table(files):
    """One Markdown row per run recorded in `files` (JSON lines written by --json)."""
    print("| run | topology | beside | CPU s | harness | ours | startup | daemons | execs | wall s (load) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for f in files:
        for line in open(f):
            r = json.loads(line)
            c = r["cpu_s"]
            print(f"| {os.path.basename(f)} | {r['topology']} | {r['beside'] or ''} | {r['cpu_total_s']:.2f} | "
                  f"{c.get('harness', 0):.2f} | {c.get('ours', 0):.2f} | {c.get('startup', 0):.2f} | "
                  f"{c.get('daemons', 0):.2f} | {r['spawns_total']} | {r['wall_s']:.1f} ({r['load1']:.0f}) |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("topologies", nargs="+")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--beside", help="a topology brought up at the same time (not measured)")
    ap.add_argument("--json", help="append every run as one JSON line to this file")
    ap.add_argument("--table", action="store_true",
                    help="print the runs of the JSON files given (instead of topologies) as a Markdown table")
    a = ap.parse_args()
    if a.table:
        table(a.topologies)
        return
    if os.geteuid() != 0:
        sys.exit("run as root (the netns backend and perf need it)")
    for i in range(a.runs):
        for topo in a.topologies:
            name = f"cost-{topo.lower()[:12]}-{os.getpid() % 10000}-{i}"
            r = one_run(topo, name, a.beside)
            show(r)
            if a.json:
                with open(a.json, "a") as f:
                    f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
