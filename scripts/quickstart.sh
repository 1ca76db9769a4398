#!/usr/bin/env bash
# Installs what is missing, then runs a real slice of the benchmark end to end: one topology's
# 25 core scenarios on Linux namespaces with real FRR, the deterministic baseline agent (no API
# key needed) and the rubric judge; prints the report tables and the path of the HTML report.
# Run as root on Debian 12. Override the slice with TOPOLOGY=<ID> and JOBS=<n>, the build with
# PROFILE=release (an optimised binary; the default `quickstart` profile compiles faster, see
# Cargo.toml and docs/development.md).
set -euo pipefail
cd "$(dirname "$0")/.."

TOPOLOGY="${TOPOLOGY:-simple_bgp}"
JOBS="${JOBS:-2}"
PROFILE="${PROFILE:-quickstart}"
BIN="target/${PROFILE}/faultbench"
[ "$PROFILE" = dev ] && BIN=target/debug/faultbench
RUNS="runs/quickstart-${TOPOLOGY}-$(date -u +%Y%m%d-%H%M%S)"

# Only what running labs needs; the test-only packages (browser, venvs, compilers) are
# scripts/test.sh's (`scripts/install-deps.sh` without `--run`).
./scripts/install-deps.sh --run
# Without the CLI's default features (Kathará backend, result bundles, MCP, generate), which
# this run never calls: a third less to compile, measured in docs/development.md. With
# `faultbench-netshim` beside it, the CLI starts commands in lab devices without forking itself
# and uses the small program as the in-device shims (docs/performance.md). One invocation, so
# faultbench-emu is built once with the CLI's features.
echo "== building the faultbench CLI and its netshim (profile ${PROFILE}, netns backend only)"
cargo build --profile "${PROFILE}" -q -p faultbench-cli -p faultbench-emu --no-default-features \
  --bin faultbench --bin faultbench-netshim
echo "== faultbench doctor"
"${BIN}" doctor || true
echo "== benchmark: ${TOPOLOGY}, baseline agent, rubric judge, netns, ${JOBS} parallel labs -> ${RUNS}"
exec "${BIN}" bench \
  --emulator netns --agents baseline --judge rubric \
  --scope all --topology "${TOPOLOGY}" --dataset dataset \
  --jobs "${JOBS}" --runs-root "${RUNS}"
