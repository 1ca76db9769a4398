#!/usr/bin/env bash
# Median cost of one device command on Kathará: faultbench's Docker Engine API path against a
# bare `docker exec CONTAINER true` on the same container (issue 34's target: ratio ≤ 1.2).
#
#   ./scripts/kathara-exec-latency.sh [TOPOLOGY] [DEVICE] [ROUNDS]   (default simple_bgp router1 30)
#
# Needs the Kathará engine (`./scripts/install-deps.sh --kathara`). Brings the lab up under a
# fresh name, measures, and tears it down even when interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."
topology=${1:-simple_bgp}
device=${2:-router1}
rounds=${3:-30}
name="latency-$$"
cargo build -q -p faultbench-cli -p faultbench-emu --example kathara_exec_latency
fb=target/debug/faultbench
trap '"$fb" lab down --emulator kathara "$name" >/dev/null 2>&1 || true' EXIT
"$fb" lab up --emulator kathara --no-wait --name "$name" "$topology" >/dev/null
target/debug/examples/kathara_exec_latency "$name" "$device" "$rounds"
