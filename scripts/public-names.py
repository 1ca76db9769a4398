#!/usr/bin/env python3
"""Lists public type names declared in more than one crate; exits 1 if there is any.

One name per concept (issue 28): a reader who meets `Entry` or `Rule` should not have to ask
which crate's. Scans `pub struct|enum|trait|type|union NAME` in the facade's `src/` and every
`crates/*/src` (tests, examples and benches are no public API). A declaration directly under
`#[deprecated(...)]` is a former name kept as an alias for one release and is not counted.
The binary crate faultbench-cli is scanned too: its names are what a contributor reads.

Usage: python3 scripts/public-names.py [ROOT]
"""
import collections
import os
import re
import sys

DECL = re.compile(r"^\s*pub\s+(?:struct|enum|trait|type|union)\s+([A-Z][A-Za-z0-9_]*)")


def declarations(path):
    """(name, line) of each public type declared in one file, deprecated aliases left out."""
    deprecated = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text = line.strip()
            if text.startswith("#[deprecated"):
                deprecated = True
                continue
            m = DECL.match(line)
            if m:
                if not deprecated:
                    yield m.group(1), number
                deprecated = False
            elif text and not text.startswith(("#", "//", ")", "note", "since")):
                # Any other item between the attribute and a declaration ends its reach.
                deprecated = False


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    sources = [("faultbench", os.path.join(root, "src"))]
    crates = os.path.join(root, "crates")
    sources += [(c, os.path.join(crates, c, "src")) for c in sorted(os.listdir(crates))]
    crates_of = collections.defaultdict(set)
    places = collections.defaultdict(list)
    for crate, src in sources:
        for folder, _, files in os.walk(src):
            for name in sorted(files):
                if not name.endswith(".rs"):
                    continue
                path = os.path.join(folder, name)
                for ty, line in declarations(path):
                    crates_of[ty].add(crate)
                    places[ty].append(f"{os.path.relpath(path, root)}:{line}")
    repeated = sorted(ty for ty, cs in crates_of.items() if len(cs) > 1)
    for ty in repeated:
        print(f"{ty}: {'  '.join(places[ty])}")
    print(f"{len(repeated)} public type names declared in more than one crate")
    return 1 if repeated else 0


if __name__ == "__main__":
    sys.exit(main())
