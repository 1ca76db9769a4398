#!/usr/bin/env python3
"""Bring Kathará labs up on the netns backend and check reachability: a compatibility census.

Usage (root, from the repository):
  scripts/lab-census.py [--git REPO] [--fast-timers] [--ready-timeout S] LAB...

Each LAB is a lab directory, or with --git a path inside the git repository REPO (it is
materialised with `git archive` into a temporary directory, never into this repository). For
each lab: `faultbench lab up` (timed; its verdict on routing convergence and the items it
reports), then a reachability check: every device pings every IPv4 address of every other
device (its eth*/lo addresses, from `ip -4 -o addr`), and the unreachable pairs are listed.
Then `faultbench lab down`. One JSON line per lab goes to stdout as well.
Uses target/debug/faultbench unless $FAULTBENCH points elsewhere.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

FB = os.environ.get("FAULTBENCH", "target/debug/faultbench")


def fb(*args, timeout=600):
    return subprocess.run([FB, *args], capture_output=True, text=True, timeout=timeout)


def addresses(name, devices):
    """device -> [IPv4 addresses] (lo's 127/8 excluded)."""
    out = {}
    for d in devices:
        r = fb("lab", "exec", name, d, "--timeout", "10", "--", "ip", "-4", "-o", "addr", "show")
        addrs = []
        for line in r.stdout.splitlines():
            m = re.search(r"inet (\d+\.\d+\.\d+\.\d+)/", line)
            if m and not m.group(1).startswith("127."):
                addrs.append(m.group(1))
        out[d] = addrs
    return out


def reachability(name, addrs):
    """(pairs tried, [(from, to-address)] that failed): all pings of a device run at once."""
    failed, tried = [], 0
    for d in addrs:
        targets = [a for other, l in addrs.items() if other != d for a in l if a not in addrs[d]]
        if not targets:
            continue
        tried += len(targets)
        script = "for a in " + " ".join(targets) + "; do (ping -c2 -i0.2 -W1 $a >/dev/null 2>&1 || echo $a) & done; wait"
        r = fb("lab", "exec", name, d, "--timeout", "30", "--", "sh", "-c", script)
        failed += [(d, a) for a in r.stdout.split()]
    return tried, failed


def census(lab, label, extra):
    name = "census-" + re.sub(r"[^a-z0-9]", "", label.lower())[-18:] + f"-{os.getpid() % 1000}"
    t0 = time.monotonic()
    up = fb("lab", "up", lab, "--name", name, *extra)
    took = time.monotonic() - t0
    said = up.stderr
    row = {"lab": label, "exit": up.returncode, "lab_up_s": round(took, 2)}
    m = re.search(r"routing converged after (\d+) ms", said)
    row["converged_after_ms"] = int(m.group(1)) if m else None
    row["not_converged"] = [
        l.strip() for l in said.splitlines()
        if l.startswith("  ") and "cannot come up" not in l and "left running" not in l
    ][:12] if up.returncode else []
    row["cannot_come_up"] = [l.split(": ", 1)[1] for l in said.splitlines() if "cannot come up" in l]
    row["warnings"] = [l for l in said.splitlines() if l.startswith("warning:")][:5]
    if up.returncode not in (0, 1):
        row["error"] = (said.strip().splitlines() or ["?"])[-1]
        print(f"{label}: lab up failed: {row['error']}", file=sys.stderr)
        print(json.dumps(row), flush=True)
        return
    state = json.loads(fb("lab", "ls", "--json").stdout or "[]")
    devices = next((s["devices"] for s in state if s["name"] == name), [])
    addrs = addresses(name, [d["name"] for d in devices])
    tried, failed = reachability(name, addrs)
    row["devices"] = len(devices)
    row["pairs"] = tried
    row["unreachable"] = len(failed)
    row["unreachable_sample"] = [f"{d}->{a}" for d, a in failed[:8]]
    by_source = {}
    for d, _ in failed:
        by_source[d] = by_source.get(d, 0) + 1
    # Which devices the failures start from: a device without an IPv4 route back (e.g. a
    # BGP-unnumbered fabric switch) shows up as one source failing towards everything.
    row["unreachable_from"] = by_source
    row["addressless"] = [d for d, l in addrs.items() if not l]
    fb("lab", "down", name)
    print(f"{label}: exit {up.returncode}, lab up {took:.2f} s, converged after {row['converged_after_ms']} ms, "
          f"{len(devices)} devices, {tried - len(failed)}/{tried} address pairs reachable", file=sys.stderr)
    print(said.rstrip(), file=sys.stderr)
    print(json.dumps(row), flush=True)


def main():
    args = sys.argv[1:]
    repo, extra = None, []
    while args and args[0].startswith("--"):
        if args[0] == "--git":
            repo, args = args[1], args[2:]
        elif args[0] == "--fast-timers":
            extra.append("--fast-timers")
            args = args[1:]
        elif args[0] == "--ready-timeout":
            extra += ["--ready-timeout", args[1]]
            args = args[2:]
        else:
            sys.exit(__doc__)
    if not args:
        sys.exit(__doc__)
    print(f"load average: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    for lab in args:
        if repo is None:
            census(lab, lab, extra)
            continue
        with tempfile.TemporaryDirectory(prefix="faultbench-census-") as tmp:
            archive = subprocess.run(["git", f"--git-dir={repo}", "archive", "HEAD", lab], capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            census(os.path.join(tmp, lab), lab, extra)


if __name__ == "__main__":
    main()
