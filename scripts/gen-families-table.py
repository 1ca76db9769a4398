#!/usr/bin/env python3
"""Prints the families x topologies table of docs/generate.md from `faultbench generate
--dry-run` over the eight shipped topologies: candidates per family and topology, and in
parentheses the distinct (family, target resource) pairs where values multiply them.

Usage: scripts/gen-families-table.py [path/to/faultbench]   (default: target/debug/faultbench)
"""
import re
import subprocess
import sys

TOPOS = ["simple_bgp", "dc_clos_bgp", "ospf_enterprise_static",
         "Kath1", "Kath2", "Kath3", "Kath4", "Kath5"]
ROW = re.compile(r"^\s+([a-z0-9-]+)\s+([a-z-]+)\s+(\d+)\s+(\d+)\s+(\d+)")


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else "target/debug/faultbench"
    data = {}
    layers = {}
    for t in TOPOS:
        out = subprocess.run([exe, "generate", "--topology", t, "--dry-run"],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = ROW.match(line)
            if m:
                fam, layer, cand, targ = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
                layers[fam] = layer
                data[(fam, t)] = (cand, targ)
    fams = sorted(layers, key=lambda f: (layers[f], f))
    print("| family | layer | " + " | ".join(TOPOS) + " | total |")
    print("|---|---|" + "---:|" * (len(TOPOS) + 1))
    tc = {t: 0 for t in TOPOS}
    tt = {t: 0 for t in TOPOS}
    for f in fams:
        cells = []
        fc = ft = 0
        for t in TOPOS:
            c, g = data.get((f, t), (0, 0))
            tc[t] += c
            tt[t] += g
            fc += c
            ft += g
            cells.append(f"{c}" if c == g else f"{c} ({g})")
        tot = f"{fc}" if fc == ft else f"{fc} ({ft})"
        print(f"| `{f}` | {layers[f]} | " + " | ".join(cells) + f" | {tot} |")
    print("| **candidates** | | " + " | ".join(str(tc[t]) for t in TOPOS)
          + f" | **{sum(tc.values())}** |")
    print("| **distinct (family, target)** | | " + " | ".join(str(tt[t]) for t in TOPOS)
          + f" | **{sum(tt.values())}** |")
    print(f"\n{len(fams)} families.")


if __name__ == "__main__":
    main()
