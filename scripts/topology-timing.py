#!/usr/bin/env python3
"""Time topologies on the netns backend: nothing -> up, converged and baseline-verified.

Usage (root, from the repository): scripts/topology-timing.py [--runs N] TOPOLOGY...
e.g.  scripts/topology-timing.py simple_bgp dc_clos_bgp ospf_enterprise_static

For each run: `faultbench lab up topologies/<ID>` (returns once startups ran and routing settled),
then `faultbench lab verify` until the baseline passes (at most 5 s), then the lab's memory is
read (PSS of every process in its devices' PID namespaces) and `faultbench lab down`. Prints each
run and the medians. Uses target/debug/faultbench unless $FAULTBENCH points elsewhere.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

FB = os.environ.get("FAULTBENCH", "target/debug/faultbench")


def lab_memory(name):
    """PSS (MiB) and process count of everything running in the lab's devices."""
    state = json.load(open(f"/run/faultbench/labs/{name}/state.json"))
    namespaces = set()
    for d in state["devices"]:
        try:
            namespaces.add(os.readlink(f"/proc/{d['init']['pid']}/ns/pid"))
        except OSError:
            pass
    kib, procs = 0, 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/ns/pid") not in namespaces:
                continue
            for line in open(f"/proc/{pid}/smaps_rollup"):
                if line.startswith("Pss:"):
                    kib += int(line.split()[1])
                    procs += 1
        except OSError:
            pass
    return kib / 1024, procs, len(state["devices"])


def one_run(topology, name):
    t0 = time.monotonic()
    up = subprocess.run([FB, "lab", "up", f"topologies/{topology}", "--name", name], capture_output=True, text=True)
    t1 = time.monotonic()
    if up.returncode:
        sys.exit(f"{topology}: lab up failed:\n{up.stdout}{up.stderr}")
    settled = re.search(r"settled after (\d+) ms", up.stdout + up.stderr)
    for _ in range(50):
        verify = subprocess.run([FB, "lab", "verify", name], capture_output=True, text=True)
        if verify.returncode == 0:
            break
        time.sleep(0.1)
    t2 = time.monotonic()
    memory = lab_memory(name)
    subprocess.run([FB, "lab", "down", name], capture_output=True)
    if verify.returncode:
        sys.exit(f"{topology}: baseline did not pass:\n{verify.stdout}")
    return t1 - t0, t2 - t1, int(settled.group(1)) if settled else None, memory


def main():
    args = sys.argv[1:]
    runs = 5
    if args[:1] == ["--runs"]:
        runs, args = int(args[1]), args[2:]
    if not args:
        sys.exit(__doc__)
    print(f"load average: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} CPUs")
    for topology in args:
        rows = []
        for i in range(runs):
            up, verify, settled, (mib, procs, devices) = one_run(topology, f"timing-{os.getpid()}-{i}")
            rows.append((up, verify, settled, mib))
            print(f"  {topology} #{i + 1}: up {up:.2f} s (routing settled after {settled} ms), "
                  f"verify {verify:.2f} s, total {up + verify:.2f} s, {mib:.0f} MiB in {procs} processes")
        totals = [u + v for u, v, _, _ in rows]
        print(f"{topology}: {devices} devices; median of {runs}: up+converged+verified {statistics.median(totals):.2f} s "
              f"(min {min(totals):.2f}), lab up {statistics.median(r[0] for r in rows):.2f} s, "
              f"routing settled after {statistics.median(r[2] or 0 for r in rows):.0f} ms, "
              f"memory {statistics.median(r[3] for r in rows):.0f} MiB")
    print(f"load average: {os.getloadavg()[0]:.1f} (1 min)")


if __name__ == "__main__":
    main()
