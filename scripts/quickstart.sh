#!/usr/bin/env bash
# Installs what is missing, then runs a real slice of the benchmark end to end: one topology's
# 25 core scenarios on Linux namespaces with real FRR, the deterministic baseline agent (no API
# key needed) and the rubric judge; prints the report tables and the path of the HTML report.
# Run as root on Debian 12. Override the slice with TOPOLOGY=<ID> and JOBS=<n>.
set -euo pipefail
cd "$(dirname "$0")/.."

TOPOLOGY="${TOPOLOGY:-simple_bgp}"
JOBS="${JOBS:-2}"
RUNS="runs/quickstart-${TOPOLOGY}-$(date -u +%Y%m%d-%H%M%S)"

# Only what running labs needs; the test-only packages (browser, venvs, compilers) are
# scripts/test.sh's (`scripts/install-deps.sh` without `--run`).
./scripts/install-deps.sh --run
echo "== building faultbench (release)"
cargo build --release -q -p faultbench-cli
echo "== faultbench doctor"
target/release/faultbench doctor || true
echo "== benchmark: ${TOPOLOGY}, baseline agent, rubric judge, netns, ${JOBS} parallel labs -> ${RUNS}"
exec target/release/faultbench bench \
  --emulator netns --agents baseline --judge rubric \
  --scope all --topology "${TOPOLOGY}" --dataset dataset \
  --jobs "${JOBS}" --runs-root "${RUNS}"
