#!/usr/bin/env python3
"""Time topologies on the netns backend: nothing -> up, converged and baseline-verified.

Usage (root, from the repository):
      scripts/topology-timing.py [--runs N] [--compare OLD NEW] [--engines E1,E2] TOPOLOGY...
e.g.  scripts/topology-timing.py simple_bgp dc_clos_bgp ospf_enterprise_static
      scripts/topology-timing.py --compare /tmp/faultbench-old target/release/faultbench Kath5
      scripts/topology-timing.py --runs 3 --engines netns,kathara simple_bgp Kath2

With --compare, runs of the two binaries alternate (OLD, NEW, OLD, …) so both see the same
machine load, and both medians are printed. With --engines, runs of the emulators alternate the
same way (`lab up --emulator E`; Kathará needs the engine of `scripts/install-deps.sh --kathara`
and reads $FAULTBENCH_KATHARA_CONFIG); a lab an engine cannot run on this kernel is reported as
`unsupported_on_host` once and not retried. Each run also reports the CPU time (user + system)
of the faultbench processes it ran (not of dockerd, Kathará's containers or the lab's daemons).

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
import resource
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


class Unsupported(Exception):
    """The engine refused the lab before deploying it (this kernel lacks what it needs)."""


def cpu_of_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def one_run(topology, name, fb=FB, engine="netns"):
    emu = ["--emulator", engine]
    c0 = cpu_of_children()
    t0 = time.monotonic()
    up = subprocess.run([fb, "lab", "up", *emu, f"topologies/{topology}", "--name", name], capture_output=True, text=True)
    t1 = time.monotonic()
    if up.returncode:
        subprocess.run([fb, "lab", "down", *emu, name], capture_output=True)
        said = up.stdout + up.stderr
        if "unsupported" in said.lower():
            line = next((l for l in said.splitlines() if "unsupported" in l.lower()), "unsupported_on_host")
            raise Unsupported(line.strip()[:300])
        print(f"{topology}: lab up failed:\n{said}", flush=True)
        return None
    said = up.stdout + up.stderr
    settled = re.search(r"(?:settled|converged) after (\d+) ms", said)
    verified_by_up = "baseline probes held" in said
    for _ in range(50):
        verify = subprocess.run([fb, "lab", "verify", *emu, name], capture_output=True, text=True)
        if verify.returncode == 0:
            break
        time.sleep(0.1)
    t2 = time.monotonic()
    memory = lab_memory(name) if engine == "netns" else (0.0, 0, 0)
    cpu = cpu_of_children() - c0
    subprocess.run([fb, "lab", "down", *emu, name], capture_output=True)
    if verify.returncode:
        failed = [l for l in verify.stdout.splitlines() if l.startswith("FAIL")]
        print(f"{topology}: baseline did not pass within 5 s after lab up:\n" + "\n".join(failed), flush=True)
        return None
    total = (t1 - t0) if verified_by_up else (t2 - t0)
    return total, t1 - t0, t2 - t1, int(settled.group(1)) if settled else None, memory, cpu


def main():
    args = sys.argv[1:]
    runs = 5
    binaries = [FB]
    engines = ["netns"]
    while args[:1] in (["--runs"], ["--compare"], ["--engines"]):
        if args[0] == "--runs":
            runs, args = int(args[1]), args[2:]
        elif args[0] == "--engines":
            engines, args = args[1].split(","), args[2:]
        else:
            binaries, args = args[1:3], args[3:]
    if not args:
        sys.exit(__doc__)
    sides = [(fb, e) for fb in binaries for e in engines]
    label = (lambda fb, e: e) if len(binaries) == 1 else (lambda fb, e: f"{fb} {e}")
    print(f"load average: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} CPUs")
    for topology in args:
        rows = {s: [] for s in sides}
        failures = {s: 0 for s in sides}
        unsupported = {}
        devices = 0
        for i in range(runs):
            for side in sides:
                fb, engine = side
                if side in unsupported:
                    continue
                try:
                    run = one_run(topology, f"timing-{os.getpid()}-{i}", fb, engine)
                except Unsupported as e:
                    unsupported[side] = str(e)
                    print(f"  {topology} [{label(*side)}]: unsupported_on_host: {e}", flush=True)
                    continue
                if run is None:
                    failures[side] += 1
                    print(f"  {topology} #{i + 1} [{label(*side)}]: FAILED", flush=True)
                    continue
                total, up, verify, settled, (mib, procs, n), cpu = run
                devices = n or devices
                rows[side].append((total, up, settled, mib, cpu))
                mem = f"{mib:.0f} MiB in {procs} processes, " if engine == "netns" else ""
                print(f"  {topology} #{i + 1} [{label(*side)}]: up {up:.2f} s (routing settled after {settled} ms), "
                      f"verify {verify:.2f} s, up+converged+verified {total:.2f} s, {mem}"
                      f"faultbench CPU {cpu:.2f} s, load {os.getloadavg()[0]:.1f}", flush=True)
        for side in sides:
            r = rows[side]
            if side in unsupported:
                print(f"{topology} [{label(*side)}]: unsupported_on_host", flush=True)
                continue
            if not r:
                print(f"{topology} [{label(*side)}]: every run failed", flush=True)
                continue
            totals = [x[0] for x in r]
            print(f"{topology} [{label(*side)}]: {devices} devices; median of {len(r)}: up+converged+verified "
                  f"{statistics.median(totals):.2f} s (min {min(totals):.2f}, max {max(totals):.2f}), "
                  f"lab up {statistics.median(x[1] for x in r):.2f} s, "
                  f"routing settled after {statistics.median(x[2] or 0 for x in r):.0f} ms, "
                  f"memory {statistics.median(x[3] for x in r):.0f} MiB, "
                  f"faultbench CPU {statistics.median(x[4] for x in r):.2f} s, {failures[side]} failed runs", flush=True)
    print(f"load average: {os.getloadavg()[0]:.1f} (1 min)")


if __name__ == "__main__":
    main()
