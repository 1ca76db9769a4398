#!/usr/bin/env bash
# Runs every fuzz target (fuzz/) for SECONDS each (default 20), from corpora seeded with the
# project's own files. Exit 1 on any crash (the input is kept under fuzz/artifacts/<target>/).
#
# cargo-fuzz needs nightly compiler flags; on the stable toolchain RUSTC_BOOTSTRAP=1 unlocks
# them. Needs `cargo install cargo-fuzz --locked` (once; not part of scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
export RUSTC_BOOTSTRAP=1
targets=(scenario lab_conf diagnosis manifest result_json identity runs_root)

command -v cargo-fuzz >/dev/null || { echo "cargo-fuzz missing: cargo install cargo-fuzz --locked" >&2; exit 1; }

# Seeds (the corpora are scratch: fuzz/corpus is ignored by git).
corpus=fuzz/corpus
mkdir -p "$corpus"/{scenario,lab_conf,diagnosis,manifest,result_json,identity,runs_root}
# (awk, not head: head would exit early and, with pipefail, end the script.)
find dataset crates/faultbench-core/tests/data crates/faultbench-cli/tests/fixtures -name '*.txt' \
    | awk 'NR <= 200' | while read -r f; do cp "$f" "$corpus/scenario/$(echo "$f" | tr / _)"; done
for t in topologies/*/; do
    n=$(basename "$t")
    { cat "$t/lab.conf"; printf '\0'; cat "$t/lab.dep" 2>/dev/null || true; printf '\0';
      cat "$t/baseline.toml" 2>/dev/null || true; } > "$corpus/lab_conf/$n"
done
printf '=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1, pc_0_0\ndiagnosis_text:\nospfd is not running on r1.\n=== END ===\n' > "$corpus/diagnosis/fault"
printf 'Looked around.\n=== DIAGNOSIS ===\nis_anomaly: false\nfaulty_devices:\ndiagnosis_text:\nThe network is healthy; the ticket is wrong.\n=== END ===\n' > "$corpus/diagnosis/healthy"
# Records and a registry from a mock benchmark run, when the binary is built.
if [ -x target/debug/faultbench ]; then
    runs=$(mktemp -d)
    fx=crates/faultbench-cli/tests/fixtures/bench
    target/debug/faultbench bench --emulator mock --agents baseline --scope all --dataset "$fx/dataset" \
        --topologies "$fx/topologies" --runs-root "$runs/r" --no-report >/dev/null 2>&1 || true
    i=0
    while read -r f; do i=$((i + 1)); cp "$f" "$corpus/result_json/seed$i"; done \
        < <(find "$runs/r" -name result.json)
    [ -f "$runs/r/MANIFEST.csv" ] && cp "$runs/r/MANIFEST.csv" "$corpus/manifest/seed"
    [ -f "$runs/r/identity.json" ] && cp "$runs/r/identity.json" "$corpus/identity/seed"
    # The whole root in the runs_root target's entry format (fuzz/fuzz_targets/runs_root.rs),
    # once as it is and once with `report` and `view/index.html` planted as links out.
    python3 - "$runs/r" "$corpus/runs_root" <<'PY'
import os, sys
root, out = sys.argv[1], sys.argv[2]
entries = b""
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        entries += b"\0" + os.path.relpath(p, root).encode() + b"\0" + open(p, "rb").read().replace(b"\0", b"") + b"\0"
open(os.path.join(out, "seed"), "wb").write(entries)
links = b"\2report\0@\0" + b"\1view\0" + b"\2view/index.html\0@/index.html\0"
open(os.path.join(out, "seed-links"), "wb").write(entries + links)
PY
    rm -rf "$runs"
fi

echo "== fuzz build"
start=$(date +%s)
(cd fuzz && cargo fuzz build -O)
echo "   built in $(( $(date +%s) - start )) s"
status=0
for t in "${targets[@]}"; do
    echo "== fuzz $t (${secs} s)"
    if ! (cd fuzz && cargo fuzz run -O "$t" "corpus/$t" -- -max_total_time="$secs" -max_len=65536 \
            -print_final_stats=1 2>&1 | tail -n 12); then
        echo "FUZZ CRASH in $t: see fuzz/artifacts/$t/" >&2
        status=1
    fi
done
exit "$status"
