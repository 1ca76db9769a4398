#!/usr/bin/env python3
"""Bring a topology up on real Kathará and run its baseline probes: the engine's smoke test.

    scripts/kathara-bringup.py TOPOLOGY [TOPOLOGY…] [--settle SECS] [--keep]
                               [--network-plugin kathara/katharanp|kathara/katharanp_vde]

For each topology under topologies/: copies the lab to a scratch folder with a lab-level
kathara.conf (`image_update_policy = Never`, so Kathará never asks a registry), times
`python -m kathara lstart`, waits until every device's startup has run (`/tmp/EOS`, which
Kathará's devices write when their startup ends), then runs each probe of the topology's
baseline.toml inside its device with `docker exec` and checks it with the same expectation
rules as faultbench (`0% loss`, `nonempty`, `N`, `>=N`, …). Probes that fail are retried until
--settle seconds after the startups ended (routing protocols converge after the startups),
then the lab is cleaned (`lclean`) unless --keep. Prints one line per topology and exits 1
when a probe never passed.

Needs the engine set up by `scripts/install-deps.sh --kathara`. Timings are wall-clock on a
shared machine: read them next to the machine's load.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KATHARA = ["/opt/faultbench/kathara-venv/bin/python", "-m", "kathara"]
LOSS = re.compile(r"(\d+(?:\.\d+)?)% (?:packet )?loss")
INT = re.compile(r"-?\d+")


def expectation_holds(expect: str, out: str) -> bool:
    """faultbench's [POST-INJECT-CHECK] expectation rules (crates/faultbench-core/src/scenario/check.rs)."""
    out = out.lower()
    e = expect.strip().lower()
    loss = LOSS.search(out)
    ints = INT.findall(out)
    last = int(ints[-1]) if ints else None
    if e == "0% loss":
        return bool(loss) and float(loss.group(1)) == 0.0
    if e == "loss>0":
        return not loss or float(loss.group(1)) > 0.0
    if e == "nonempty":
        return out.strip() != ""
    if e == "empty":
        return out.strip() == ""
    if e == "up":
        return "up" in out and "down" not in out
    if e == "down":
        return "down" in out
    if e in ("full", "init"):
        return e in out
    if e == "nonzero":
        return last is not None and last != 0
    if e.startswith(">="):
        return last is not None and last >= int(e[2:])
    if re.fullmatch(r"-?\d+", e):
        return last is not None and last == int(e)
    raise SystemExit(f"unknown expectation {expect!r}")


def containers(lab_dir: str) -> dict:
    """Lab hash → {device name → container id}, from the labels Kathará puts on its containers."""
    out = subprocess.run(
        ["docker", "ps", "--filter", "label=app=kathara", "--format", "{{.ID}} {{.Names}}"],
        capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        cid, name = line.split(" ", 1)
        labels = json.loads(subprocess.run(
            ["docker", "inspect", "-f", "{{json .Config.Labels}}", cid],
            capture_output=True, text=True, check=True).stdout)
        found.setdefault(labels.get("lab_hash"), {})[labels.get("name")] = cid
    return found


def dexec(cid: str, command: str, timeout: float = 30) -> str:
    try:
        r = subprocess.run(["docker", "exec", cid, "sh", "-c", command],
                           capture_output=True, text=True, timeout=timeout)
        return r.stdout
    except subprocess.TimeoutExpired:
        return ""


def run(topology: str, settle: float, keep: bool, plugin: str | None) -> bool:
    src = os.path.join(REPO, "topologies", topology)
    work = tempfile.mkdtemp(prefix=f"kathara-bringup-{topology}-")
    lab = os.path.join(work, topology)
    shutil.copytree(src, lab)
    with open(os.path.join(lab, "kathara.conf"), "w") as f:
        conf = {"image_update_policy": "Never", "manager_type": "docker"}
        if plugin:
            conf["network_plugin"] = plugin
        json.dump(conf, f)
    with open(os.path.join(src, "baseline.toml"), "rb") as f:
        probes = tomllib.load(f).get("probe", [])
    before = set(containers(lab))
    t0 = time.monotonic()
    r = subprocess.run(KATHARA + ["lstart", "--noterminals", "-d", lab],
                       capture_output=True, text=True, timeout=600)
    t_lstart = time.monotonic() - t0
    ok = True
    try:
        if r.returncode != 0:
            print(f"{topology}: lstart failed ({r.returncode}): {r.stderr[-800:]}")
            return False
        # This lab's containers: a lab hash that is new and has every probed device (other
        # labs may start at the same time on a shared engine).
        wanted = {p["device"] for p in probes}
        devs = {}
        for h, group in containers(lab).items():
            if h not in before and wanted <= set(group):
                devs = group
        # Startups done: every device has /tmp/EOS.
        pending = set(devs)
        while pending and time.monotonic() - t0 < 600:
            pending = {d for d in pending if dexec(devs[d], "test -e /tmp/EOS && echo y").strip() != "y"}
            if pending:
                time.sleep(0.5)
        t_startups = time.monotonic() - t0
        # Probes: retried until they pass or the settle time is over.
        passed = {}
        deadline = time.monotonic() + settle
        while True:
            for i, p in enumerate(probes):
                if passed.get(i):
                    continue
                cid = devs.get(p["device"])
                out = dexec(cid, p["command"]) if cid else ""
                passed[i] = expectation_holds(str(p["expect"]), out)
            if all(passed.values()) or time.monotonic() > deadline:
                break
            time.sleep(1)
        t_probes = time.monotonic() - t0
        n_ok = sum(passed.values())
        ok = n_ok == len(probes)
        load = os.getloadavg()[0]
        print(f"{topology}: {len(devs)} devices ({plugin or 'default plugin'}); lstart {t_lstart:.1f} s; startups done {t_startups:.1f} s; "
              f"baseline {n_ok}/{len(probes)} probes at {t_probes:.1f} s (load {load:.1f})")
        for i, p in enumerate(probes):
            if not passed.get(i):
                print(f"  FAIL {p['device']}: {p['name']}: `{p['command']}` expected {p['expect']}")
    finally:
        if not keep:
            subprocess.run(KATHARA + ["lclean", "-d", lab], capture_output=True, timeout=600)
            shutil.rmtree(work, ignore_errors=True)
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("topology", nargs="+")
    ap.add_argument("--settle", type=float, default=90.0)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--network-plugin", help="Kathará's network_plugin setting (default: Kathará's, katharanp_vde)")
    a = ap.parse_args()
    results = [run(t, a.settle, a.keep, a.network_plugin) for t in a.topology]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
