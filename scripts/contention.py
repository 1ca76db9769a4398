#!/usr/bin/env python3
"""How much a lab coming up (or going down) beside a running lab slows that lab's probes.

    scripts/contention.py BINARY [TOPOLOGY] [--seconds S] [--shares N]

Brings up one lab of TOPOLOGY (default Kath3), the "agent's lab", and probes it the way the
baseline agent surveys devices: six devices at once, each running the agent's survey script
(about thirty short programs: ip, ss, ps, nft, awk, sed ...) through `lab exec`. The probe
repeats while, in turn:

  alone          nothing else happens
  up nice 5      a second lab of TOPOLOGY comes up at niceness 5 (what `bench` prestarts use)
  up nice 19     the same at niceness 19
  up cgroup      the same in a cgroup-v1 CPU group of weight N (default 64; a nice-0 task is 1024)
  down           a second lab is torn down

each for as long as it takes and at least S seconds (default 20), and prints, per condition,
the median, p90 and longest probe round. Needs root and a quiet machine;
every lab it starts it tears down. The numbers of docs/performance.md come from it.
"""

import os
import statistics
import subprocess
import sys
import threading
import time

SURVEY = r"""echo @@fwd; cat /proc/sys/net/ipv4/ip_forward
echo @@link; ip -o link show | sed -e 's/ qdisc [^ ]*//'
echo @@addr; ip -o -4 addr show | awk '{print $2, $4}'
echo @@proc; ps -e -o comm= | sort -u | tr '\n' ' '; echo
echo @@listen; ss -H -ltunwp | awk '{print $1, $5, $7}' | sort -u
echo @@daemons; grep -E '^[a-z0-9]+d=yes' /etc/frr/daemons 2>/dev/null | tr '\n' ' '; echo
echo @@ipt; iptables-save 2>/dev/null | grep -E '^[*]|^-A'
echo @@nft; nft list ruleset 2>/dev/null | head -30
echo @@tc; tc qdisc show | grep -E 'netem|tbf'
echo @@vlan; bridge vlan show 2>/dev/null | head -20
echo @@route; ip -4 route show | head -100
"""

CGROUP = "/sys/fs/cgroup/cpu/faultbench-contention"


def devices(topology):
    names = []
    with open(os.path.join("topologies", topology, "lab.conf")) as f:
        for line in f:
            if "[" in line and not line.startswith("#"):
                d = line.split("[", 1)[0].strip()
                if d and d not in names:
                    names.append(d)
    return names


def run(args, **kw):
    return subprocess.run(args, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout.strip()


def probe(binary, lab, devs):
    start = time.monotonic()
    procs = [
        subprocess.Popen([binary, "lab", "exec", lab, d, "--", "sh", "-c", SURVEY],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for d in devs
    ]
    for p in procs:
        p.wait()
    return time.monotonic() - start


def probe_while(binary, lab, devs, action, seconds):
    """Probe rounds while `action` runs in a thread, and at least `seconds` from the start (the
    kernel goes on with a teardown after the processes are gone)."""
    done = threading.Event()
    took = {}

    def go():
        t = time.monotonic()
        action()
        took["action"] = time.monotonic() - t
        done.set()

    start = time.monotonic()
    if action is None:
        done.set()
    else:
        threading.Thread(target=go, daemon=True).start()
    rounds = []
    while not done.is_set() or time.monotonic() - start < seconds:
        rounds.append(probe(binary, lab, devs))
    return rounds, took.get("action")


def main():
    args = [a for a in sys.argv[1:]]
    seconds, shares = 20, 64
    if "--seconds" in args:
        i = args.index("--seconds"); seconds = float(args[i + 1]); del args[i:i + 2]
    if "--shares" in args:
        i = args.index("--shares"); shares = int(args[i + 1]); del args[i:i + 2]
    if not args:
        sys.exit(__doc__)
    binary = os.path.abspath(args[0])
    topology = args[1] if len(args) > 1 else "Kath3"
    devs = [d for d in devices(topology)][:6]
    os.makedirs(CGROUP, exist_ok=True)
    with open(os.path.join(CGROUP, "cpu.shares"), "w") as f:
        f.write(str(shares))
    agent_lab = f"contention-a-{os.getpid()}"
    other = f"contention-b-{os.getpid()}"
    run([binary, "lab", "up", topology, "--name", agent_lab], stderr=subprocess.DEVNULL)
    try:
        probe(binary, agent_lab, devs)  # warm caches
        up = [binary, "lab", "up", topology, "--name", other]
        join = f"echo $$ > {CGROUP}/cgroup.procs && exec \"$@\""
        conditions = [
            ("alone", None),
            ("up nice 0", lambda: run(up, stderr=subprocess.DEVNULL)),
            ("up nice 5", lambda: run(["nice", "-n", "5"] + up, stderr=subprocess.DEVNULL)),
            ("up nice 19", lambda: run(["nice", "-n", "19"] + up, stderr=subprocess.DEVNULL)),
            (f"up cgroup {shares}", lambda: run(["sh", "-c", join, "sh"] + up,
                                                       stderr=subprocess.DEVNULL)),
            ("down", lambda: run([binary, "lab", "down", other], stderr=subprocess.DEVNULL)),
        ]
        print(f"{topology}: probing {', '.join(devs)} of {agent_lab}")
        print(f"{'condition':16} {'rounds':>6} {'median s':>9} {'p90 s':>7} {'max s':>7} {'action s':>9}")
        for name, action in conditions:
            if name == "down":
                run(up, stderr=subprocess.DEVNULL)
            rounds, took = probe_while(binary, agent_lab, devs, action, seconds)
            if name.startswith("up"):
                run([binary, "lab", "down", other], stderr=subprocess.DEVNULL)
                time.sleep(10)  # let the kernel finish that teardown
            rounds.sort()
            p90 = rounds[int(len(rounds) * 0.9)] if rounds else float("nan")
            med = statistics.median(rounds) if rounds else float("nan")
            act = f"{took:9.1f}" if took is not None else f"{'':9}"
            print(f"{name:16} {len(rounds):6d} {med:9.3f} {p90:7.3f} {rounds[-1]:7.3f} {act}",
                  flush=True)
    finally:
        for lab in (agent_lab, other):
            subprocess.run([binary, "lab", "down", lab],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            os.rmdir(CGROUP)
        except OSError:
            pass


if __name__ == "__main__":
    main()
