#!/usr/bin/env python3
"""Bring Kathará labs up on the netns backend, unmodified, and check reachability: a census.

Usage (root, from the repository):
  scripts/lab-census.py [options] LAB...                  lab directories
  scripts/lab-census.py [options] --git REPO LAB...       paths inside a git repository
  scripts/lab-census.py [options] --list FILE             the labs FILE names (see below)
  scripts/lab-census.py --markdown --results FILE         the table rows for docs/kathara.md

Options:
  --results FILE      append one JSON line per lab to FILE and skip labs already in it (so an
                      interrupted census resumes where it stopped); --force runs them again
  --after S           check reachability right after `lab up` returns and again S seconds after it
                      returned (default 30; 0: only once)
  --fast-timers       passed to `lab up` (recorded in the row: the lab then deviates from its files)
  --ready-timeout S   passed to `lab up`
  --strict            do not pass `--accept-startup-errors` to `lab up` (by default it is passed,
                      so that exit 1 means "did not converge" and startup problems are listed
                      as items; either way the checks run)
  --describe          print what each lab's files configure (protocols, services) and run nothing
  --repos DIR         where --list finds repositories: DIR/owner+name/repo, DIR/owner+name,
                      DIR/owner/name or DIR/name (a clone or a bare mirror; with or without .git)

A lab comes from a directory, or, with --git, is written from the repository's HEAD (or from a
pinned commit, with --list) into a temporary directory: never into this repository. Files the
repository does not hold (a mirror may lack big blobs) are left out and listed in the row. A --list FILE has one lab per line, `owner/name@commit path/in/repo` (a line
`owner/name@commit .` or `owner/name@commit` alone is a lab at the repository's root); words in
backquotes are read as well, so the census table of docs/kathara.md is itself a list.

For each lab: what its files configure (`protocols`: routing daemons the FRR or Quagga `daemons`
files enable, static routes, DNS/DHCP/web servers, ifupdown, firewalls…), then `faultbench lab
up` (exit code, time, convergence time, the warnings and items it reports), then reachability:
every device pings every address of every other device (IPv4 but 127/8, and global
IPv6, from `ip -o addr`) and the unreachable (device, address) pairs are counted and grouped by source.
Addresses are read again for the second check (a DHCP client may have one only later). Then
`faultbench lab down`, also when the script is interrupted.
Uses target/debug/faultbench unless $FAULTBENCH points elsewhere ($FAULTBENCH_COMMIT then names
the commit it was built from; by default, this repository's HEAD).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

FB = os.environ.get("FAULTBENCH", "target/debug/faultbench")
HERE = os.path.dirname(os.path.abspath(__file__))

# Routing daemons a FRR/Quagga `daemons` file can enable, with the name the census shows.
ROUTING_DAEMONS = {
    "bgpd": "bgp", "ospfd": "ospf", "ospf6d": "ospf6", "ripd": "rip", "ripngd": "ripng",
    "isisd": "isis", "pimd": "pim", "ldpd": "ldp", "eigrpd": "eigrp", "babeld": "babel",
    "bfdd": "bfd", "fabricd": "openfabric", "vrrpd": "vrrp", "nhrpd": "nhrp", "pbrd": "pbr",
}
# Services a startup file starts (`systemctl start X`, `/etc/init.d/X start`, `service X start`),
# by the name the census shows.
SERVICES = {
    "named": "dns(bind)", "bind": "dns(bind)", "bind9": "dns(bind)", "dnsmasq": "dnsmasq",
    "isc-dhcp-server": "dhcp-server", "dhcp3-server": "dhcp-server", "isc-dhcp-relay": "dhcp-relay",
    "apache2": "http(apache2)", "nginx": "http(nginx)", "lighttpd": "http(lighttpd)",
    "squid": "proxy(squid)", "exim4": "smtp(exim4)", "postfix": "smtp(postfix)",
    "ssh": "ssh", "sshd": "ssh", "xinetd": "inetd", "inetd": "inetd", "openvpn": "openvpn",
    "snmpd": "snmp", "keepalived": "vrrp(keepalived)", "radvd": "radvd", "nftables": "firewall",
    "networking": "ifupdown", "frr": "frr", "quagga": "quagga", "zebra": "quagga",
    "ospfd": "quagga", "bgpd": "quagga", "ripd": "quagga",
}
START = re.compile(
    r"(?:systemctl\s+(?:start|restart|reload)\s+([\w@.-]+?)(?:\.service)?\b"
    r"|/etc/init\.d/([\w.-]+)\s+(?:start|restart|reload|force-reload)"
    r"|\bservice\s+([\w.-]+)\s+(?:start|restart|reload))")


def fb(*args, timeout=900):
    return subprocess.run([FB, *args], capture_output=True, text=True, timeout=timeout)


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def lab_conf(lab):
    """(device names, images) from lab.conf."""
    devices, images = set(), set()
    for line in read(os.path.join(lab, "lab.conf")).splitlines():
        m = re.match(r'\s*([\w.-]+)\[([^\]]+)\]\s*=\s*"?([^"#]*)"?', line)
        if not m:
            continue
        dev, key, value = m.groups()
        devices.add(dev)
        if key == "image":
            images.add(value.strip())
    return devices, images


def daemons_enabled(text):
    return {d for d, v in re.findall(r"^\s*(\w+)\s*=\s*\"?(\w+)", text, re.M)
            if v == "yes" and d in ROUTING_DAEMONS}


def protocols(lab):
    """What the lab's files configure, as a sorted list of short names (see the module doc)."""
    found = set()
    devices, images = lab_conf(lab)
    for img in images:
        if "p4" in img or "ovs" in img or "openvswitch" in img or "pox" in img or "sdn" in img:
            found.add(f"image:{img}")
    startups = [os.path.join(lab, f) for f in os.listdir(lab) if f.endswith(".startup")]
    for dev in sorted(devices | {os.path.basename(s)[:-8] for s in startups}):
        root = os.path.join(lab, dev)
        for suite, etc in (("frr", "etc/frr"), ("quagga", "etc/quagga"), ("quagga", "etc/zebra")):
            daemons = os.path.join(root, etc, "daemons")
            if os.path.isfile(daemons):
                for d in daemons_enabled(read(daemons)):
                    found.add(ROUTING_DAEMONS[d])
                if suite == "quagga":
                    found.add("quagga")
                    per_daemon = [f for f in ("ospfd.conf", "bgpd.conf", "ripd.conf")
                                  if os.path.isfile(os.path.join(root, etc, f))]
                    if per_daemon:
                        found.add("quagga-per-daemon")
            for conf in ("frr.conf", "zebra.conf", "staticd.conf", "Quagga.conf"):
                if re.search(r"^\s*ip route ", read(os.path.join(root, etc, conf)), re.M):
                    found.add("static")
        if os.path.isdir(os.path.join(root, "etc/bind")):
            found.add("dns(bind)")
        if os.path.isfile(os.path.join(root, "etc/dnsmasq.conf")):
            found.add("dnsmasq")
        if any(os.path.isfile(os.path.join(root, p)) for p in ("etc/dhcp/dhcpd.conf", "etc/dhcp3/dhcpd.conf")):
            found.add("dhcp-server")
        if os.path.isdir(os.path.join(root, "var/www")) or os.path.isdir(os.path.join(root, "etc/apache2")):
            found.add("http(apache2)")
        if os.path.isfile(os.path.join(root, "etc/network/interfaces")):
            found.add("ifupdown")
    for s in startups:
        text = "\n".join(l for l in read(s).splitlines() if not l.lstrip().startswith("#"))
        for m in START.finditer(text):
            name = next(g for g in m.groups() if g)
            found.add(SERVICES.get(name, f"service:{name}"))
        if re.search(r"\b(ip\s+(-\d\s+)?route\s+(add|replace)|route\s+add)\b", text):
            found.add("static")
        if re.search(r"\b(dhclient|udhcpc|dhcpcd)\b", text):
            found.add("dhcp-client")
        if re.search(r"\bifup\b", text):
            found.add("ifupdown")
        if re.search(r"\b(iptables|nft)\b", text):
            found.add("firewall")
        if re.search(r"\b(brctl|type\s+bridge)\b", text):
            found.add("bridge")
        if re.search(r"\b(vconfig|type\s+vlan)\b", text):
            found.add("vlan")
        if re.search(r"\btype\s+vxlan\b", text):
            found.add("vxlan")
        if re.search(r"\bmpls\b", text):
            found.add("mpls")
        if re.search(r"^\s*(zebra|ospfd|bgpd|ripd)\s+-d", text, re.M):
            found.add("quagga")
    # `frr`/`quagga` alone say which suite; the routing protocols carry the information.
    return sorted(found)


def addresses(name, devices):
    """device -> [its IPv4 addresses but 127/8, and its global IPv6 addresses but ::1]."""
    out = {}
    for d in devices:
        r = fb("lab", "exec", name, d, "--timeout", "10", "--", "ip", "-o", "addr", "show")
        v4 = [a for a in re.findall(r"\binet (\d+\.\d+\.\d+\.\d+)/", r.stdout) if not a.startswith("127.")]
        v6 = [a for a in re.findall(r"\binet6 ([0-9a-f:]+)/\d+ scope global", r.stdout) if a != "::1"]
        out[d] = v4 + v6
    return out


def reachability(name, devices):
    """Every device pings every address of every other device, all at once per device."""
    addrs = addresses(name, devices)
    failed, tried = [], 0
    for d in addrs:
        targets = sorted({a for other, l in addrs.items() if other != d for a in l} - set(addrs[d]))
        if not targets:
            continue
        tried += len(targets)
        script = "for a in " + " ".join(targets) + "; do (ping -c2 -i0.2 -W1 $a >/dev/null 2>&1 || echo $a) & done; wait"
        r = fb("lab", "exec", name, d, "--timeout", "30", "--", "sh", "-c", script)
        failed += [(d, a) for a in r.stdout.split()]
    by_source = {}
    for d, _ in failed:
        by_source[d] = by_source.get(d, 0) + 1
    # A device without an IPv4 route back (e.g. a BGP-unnumbered fabric switch) shows up as
    # one source failing towards everything.
    return {
        "pairs": tried,
        "reachable": tried - len(failed),
        "unreachable": [f"{d}->{a}" for d, a in failed[:400]],
        "unreachable_from": by_source,
        "addressless": sorted(d for d, l in addrs.items() if not l),
    }


def parse_up(stderr):
    """The items `lab up` reports: warnings, indented lines (not converged, cannot come up, …)."""
    lines = stderr.splitlines()
    m = re.search(r"routing converged after (\d+) ms", stderr)
    return {
        "converged_after_ms": int(m.group(1)) if m else None,
        "summary": next((l for l in lines if " up from " in l), (lines or [""])[-1])[:300],
        "warnings": [l[len("warning: "):][:400] for l in lines if l.startswith("warning:")],
        "items": [l.strip()[:300] for l in lines
                  if l.startswith("  ") and "left running for inspection" not in l][:40],
    }


def census(lab, row, extra, after):
    label = row["source"].split("@")[0].split("/")[-1] + row["lab"]
    name = "census-" + re.sub(r"[^a-z0-9]", "", label.lower())[-20:] + f"-{os.getpid() % 1000}"
    row["protocols"] = protocols(lab)
    row["fast_timers"] = "--fast-timers" in extra
    row["accept_startup_errors"] = "--accept-startup-errors" in extra
    row["load_before"] = round(os.getloadavg()[0], 1)
    t0 = time.monotonic()
    up = fb("lab", "up", lab, "--name", name, *extra)
    row["lab_up_s"] = round(time.monotonic() - t0, 1)
    row["exit"] = up.returncode
    row.update(parse_up(up.stderr))
    print(up.stderr.rstrip(), file=sys.stderr)
    if up.returncode not in (0, 1):
        row["error"] = (up.stderr.strip().splitlines() or ["?"])[-1][:400].replace(lab, "<lab>")
        fb("lab", "down", name)  # in case a partly deployed lab is left
        return row
    try:
        up_done = time.monotonic()
        state = json.loads(fb("lab", "ls", "--json").stdout or "[]")
        devices = [d["name"] for s in state if s["name"] == name for d in s["devices"]]
        row["devices"] = len(devices)
        row["now"] = reachability(name, devices)
        if after > 0:
            wait = after - (time.monotonic() - up_done)
            time.sleep(max(0.0, wait))
            row["later_after_s"] = round(time.monotonic() - up_done, 1)
            row["later"] = reachability(name, devices)
    finally:
        fb("lab", "down", name)
    return row


def repo_name(git_dir):
    """owner/name of a mirror (`…/owner+name/repo`) or of a clone's origin, else the directory."""
    for part in reversed(os.path.abspath(git_dir).split(os.sep)):
        if "+" in part:
            return part.replace("+", "/", 1)
    url = subprocess.run(["git", f"--git-dir={git_dir}", "config", "remote.origin.url"],
                         capture_output=True, text=True).stdout.strip()
    m = re.search(r"github\.com[:/]([^/]+/[^/]+?)(?:\.git)?$", url)
    return m.group(1) if m else os.path.abspath(git_dir)


def find_repo(repos, owner_name):
    owner, name = owner_name.split("/", 1)
    for cand in (f"{owner}+{name}/repo", f"{owner}+{name}", f"{owner}/{name}", name):
        for sub in ("", ".git"):
            path = os.path.join(repos, cand, sub)
            if os.path.isfile(os.path.join(path, "HEAD")) and os.path.isdir(os.path.join(path, "objects")):
                return path
    sys.exit(f"{owner_name}: no clone under {repos}; run `git clone --bare https://github.com/{owner_name} "
             f"{os.path.join(repos, owner + '+' + name)}`")


def read_list(path):
    """[(owner/name, commit, lab path)] from a list file or a markdown table."""
    labs = []
    for line in read(path).splitlines():
        words = re.findall(r"`([^`]+)`", line) or line.strip().split(None, 1)
        if not words or not re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{7,40}", words[0]):
            continue
        owner_name, commit = words[0].split("@")
        labs.append((owner_name, commit, words[1] if len(words) > 1 else "."))
    return labs


def materialise(git_dir, commit, lab, tmp):
    """Writes the lab's files at `commit` under tmp; returns (lab directory, files left out).

    Not `git archive`: a mirror may lack big blobs (e.g. a binary someone committed into
    `shared/`), which `git archive` refuses; such files are left out and named in the row. The
    tree is untrusted (this runs as root): an entry whose path would leave tmp, by `..` or
    through a symbolic link written before it, is left out too."""
    root = os.path.realpath(tmp)
    paths = [] if lab in (".", "") else [lab]
    tree = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", commit, "--", *paths],
                          capture_output=True, check=True).stdout
    entries = [e.split(b"\t", 1) for e in tree.split(b"\0") if e]
    cat = subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    missing = []
    for meta, raw_path in entries:
        mode, kind, sha = meta.decode().split()
        path = raw_path.decode(errors="replace")
        if kind != "blob":
            continue  # a submodule: nothing to write
        cat.stdin.write(sha.encode() + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if header[-1] == b"missing":
            missing.append(path)
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        if not make_parents(root, path):
            missing.append(path)
            continue
        dest = os.path.join(root, path)
        if mode == "120000":
            os.symlink(data.decode(errors="replace"), dest)
            continue
        with open(dest, "wb") as f:
            f.write(data)
        if mode == "100755":
            os.chmod(dest, 0o755)
    cat.stdin.close()
    cat.wait()
    return os.path.join(root, *paths), missing


def make_parents(root, rel):
    """Creates the directories of `rel` under root; False when `rel` is absolute, has a `..`, or
    runs through a symbolic link, or when something already sits at `rel`."""
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return False
    d = root
    for part in parts[:-1]:
        d = os.path.join(d, part)
        if os.path.islink(d) or (os.path.lexists(d) and not os.path.isdir(d)):
            return False
        if not os.path.isdir(d):
            os.mkdir(d)
    return not os.path.lexists(os.path.join(root, rel))


def faultbench_commit():
    # $FAULTBENCH_COMMIT names the build when $FAULTBENCH is a copy made before later commits.
    if os.environ.get("FAULTBENCH_COMMIT"):
        return os.environ["FAULTBENCH_COMMIT"]
    r = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or None


def pct(check):
    return f"{check['reachable']}/{check['pairs']}" if check else "–"


tmp_path = re.compile(r"/tmp/faultbench-census-[^/ ]+/?")


def markdown(results):
    """One table row per lab (the notes column is left for a person to fill in)."""
    print("| repository@commit | lab | devices | protocols | `lab up` | reachable after `lab up` | 30 s later | notes |")
    print("|---|---|---:|---|---|---:|---:|---|")
    for r in results:
        if r.get("error"):
            up = f"exit {r['exit']}: refused"
        else:
            up = f"exit {r['exit']}, {r['lab_up_s']:.0f} s"
            if r.get("converged_after_ms") is not None:
                up += f" (converged {r['converged_after_ms'] / 1000:.0f} s)"
            reported = len(r.get("warnings", [])) + len(r.get("items", []))
            if reported:
                up += f"; {reported} item{'s' if reported > 1 else ''} reported"
        if r.get("fast_timers"):
            up += ", `--fast-timers`"
        later = pct(r.get("later"))
        if r.get("later") and abs(r.get("later_after_s", 30) - 30) > 5:
            later += f" (after {r['later_after_s']:.0f} s)"
        print(f"| `{r['source']}` | `{r['lab']}` | {r.get('devices', '–')} | {', '.join(r['protocols'])} "
              f"| {up} | {pct(r.get('now'))} | {later} | {tmp_path.sub('', r.get('error', ''))} |")


def load_results(path):
    rows = []
    for line in read(path).splitlines() if path else []:
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return rows


def interrupt(_signum, _frame):
    raise KeyboardInterrupt


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("labs", nargs="*")
    p.add_argument("--git")
    p.add_argument("--list")
    p.add_argument("--repos", default=".")
    p.add_argument("--results")
    p.add_argument("--force", action="store_true")
    p.add_argument("--after", type=float, default=30)
    p.add_argument("--fast-timers", action="store_true")
    p.add_argument("--ready-timeout")
    p.add_argument("--strict", action="store_true")
    p.add_argument("--describe", action="store_true")
    p.add_argument("--markdown", action="store_true")
    a = p.parse_args()
    # SIGTERM unwinds like Ctrl-C, so that the running lab is taken down (see census()).
    signal.signal(signal.SIGTERM, interrupt)
    if a.markdown:
        markdown(load_results(a.results))
        return
    extra = (["--fast-timers"] if a.fast_timers else []) + (["--ready-timeout", a.ready_timeout] if a.ready_timeout else [])
    # Startup problems make `lab up` exit 1 unless accepted; the census lists them as items
    # either way and keeps exit 1 for a lab that did not converge.
    if not a.strict:
        extra.append("--accept-startup-errors")
    # (source, git dir or None, commit, lab path)
    todo = []
    if a.list:
        for owner_name, commit, lab in read_list(a.list):
            todo.append((owner_name, find_repo(a.repos, owner_name), commit, lab))
    elif a.git:
        head = subprocess.run(["git", f"--git-dir={a.git}", "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        todo = [(repo_name(a.git), a.git, head, lab) for lab in a.labs]
    else:
        todo = [(os.path.abspath(lab), None, None, lab) for lab in a.labs]
    if not todo:
        p.error("no labs given")
    done = {(r["source"], r["lab"]) for r in load_results(a.results)} if not a.force else set()
    print(f"load average: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    for name, git_dir, commit, lab in todo:
        source = f"{name}@{commit[:12]}" if commit else name
        if (source, lab) in done:
            print(f"{source} {lab}: already in {a.results}, skipped", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory(prefix="faultbench-census-") as tmp:
            path, missing = materialise(git_dir, commit, lab, tmp) if git_dir else (lab, [])
            if a.describe:
                print(f"{source} {lab}: {', '.join(protocols(path))}")
                continue
            row = {"source": source, "lab": lab, "faultbench": faultbench_commit(),
                   "date": time.strftime("%Y-%m-%d")}
            if missing:
                row["missing_files"] = missing
            row = census(path, row, extra, a.after)
        later = f", {pct(row.get('later'))} after {row.get('later_after_s')} s" if row.get("later") else ""
        print(f"{source} {lab}: exit {row['exit']}, lab up {row['lab_up_s']} s, "
              f"{pct(row.get('now'))} reachable{later}", file=sys.stderr)
        line = json.dumps(row, ensure_ascii=False)
        print(line, flush=True)
        if a.results:
            with open(a.results, "a") as f:
                f.write(line + "\n")


if __name__ == "__main__":
    main()
