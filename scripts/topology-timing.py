#!/usr/bin/env python3
"""Time topologies on the netns backend: nothing -> up, converged and baseline-verified.

Usage (root, from the repository): scripts/topology-timing.py [--runs N] [--compare OLD NEW] TOPOLOGY...
e.g.  scripts/topology-timing.py simple_bgp dc_clos_bgp ospf_enterprise_static
      scripts/topology-timing.py --compare /tmp/faultbench-old target/release/faultbench Kath5

With --compare, runs of the two binaries alternate (OLD, NEW, OLD, …) so both see the same
machine load, and both medians are printed.

For each run: `faultbench lab up topologies/<ID>`, then `faultbench lab verify` until the
baseline passes (at most 5 s), then the lab's memory is read (PSS of every process in its
devices' PID namespaces) and `faultbench lab down`. A `lab up` that itself waits for the baseline
probes (it says "baseline probes held") is up, converged and verified when it returns: the
verify after it is only a check, timed apart and not added. An older `lab up` (it says "routing
settled") returns before the baseline is checked: its verify time is added. Prints each run and
the medians. Uses target/debug/faultbench unless $FAULTBENCH points elsewhere.
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


def one_run(topology, name, fb=FB):
    t0 = time.monotonic()
    up = subprocess.run([fb, "lab", "up", f"topologies/{topology}", "--name", name], capture_output=True, text=True)
    t1 = time.monotonic()
    if up.returncode:
        subprocess.run([fb, "lab", "down", name], capture_output=True)
        print(f"{topology}: lab up failed:\n{up.stdout}{up.stderr}", flush=True)
        return None
    said = up.stdout + up.stderr
    settled = re.search(r"(?:settled|converged) after (\d+) ms", said)
    verified_by_up = "baseline probes held" in said
    for _ in range(50):
        verify = subprocess.run([fb, "lab", "verify", name], capture_output=True, text=True)
        if verify.returncode == 0:
            break
        time.sleep(0.1)
    t2 = time.monotonic()
    memory = lab_memory(name)
    subprocess.run([fb, "lab", "down", name], capture_output=True)
    if verify.returncode:
        failed = [l for l in verify.stdout.splitlines() if l.startswith("FAIL")]
        print(f"{topology}: baseline did not pass within 5 s after lab up:\n" + "\n".join(failed), flush=True)
        return None
    total = (t1 - t0) if verified_by_up else (t2 - t0)
    return total, t1 - t0, t2 - t1, int(settled.group(1)) if settled else None, memory


def main():
    args = sys.argv[1:]
    runs = 5
    binaries = [FB]
    while args[:1] in (["--runs"], ["--compare"]):
        if args[0] == "--runs":
            runs, args = int(args[1]), args[2:]
        else:
            binaries, args = args[1:3], args[3:]
    if not args:
        sys.exit(__doc__)
    print(f"load average: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} CPUs")
    for topology in args:
        rows = {fb: [] for fb in binaries}
        failures = {fb: 0 for fb in binaries}
        devices = 0
        for i in range(runs):
            for fb in binaries:
                run = one_run(topology, f"timing-{os.getpid()}-{i}", fb)
                if run is None:
                    failures[fb] += 1
                    print(f"  {topology} #{i + 1} [{fb}]: FAILED", flush=True)
                    continue
                total, up, verify, settled, (mib, procs, devices) = run
                rows[fb].append((total, up, settled, mib))
                print(f"  {topology} #{i + 1} [{fb}]: up {up:.2f} s (routing settled after {settled} ms), "
                      f"verify {verify:.2f} s, up+converged+verified {total:.2f} s, {mib:.0f} MiB in {procs} processes, "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
        for fb in binaries:
            r = rows[fb]
            if not r:
                print(f"{topology} [{fb}]: every run failed", flush=True)
                continue
            totals = [x[0] for x in r]
            print(f"{topology} [{fb}]: {devices} devices; median of {runs}: up+converged+verified "
                  f"{statistics.median(totals):.2f} s (min {min(totals):.2f}, max {max(totals):.2f}), "
                  f"lab up {statistics.median(x[1] for x in r):.2f} s, "
                  f"routing settled after {statistics.median(x[2] or 0 for x in r):.0f} ms, "
                  f"memory {statistics.median(x[3] for x in r):.0f} MiB, {failures[fb]} failed runs", flush=True)
    print(f"load average: {os.getloadavg()[0]:.1f} (1 min)")


if __name__ == "__main__":
    main()
