#!/usr/bin/env bash
# The whole test suite, as CI runs it: system packages, formatting, lints, every test.
# Run as root on Debian 12 (live-lab tests need namespaces and FRR).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh

# A fresh build needs about 2 GB (measured: 2.0 GB); say so up front rather than failing in the linker.
# Incremental state only helps rebuilds, and CI builds once.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
avail_kb=$(df -Pk . | awk 'NR==2 {print $4}')
echo "== disk: $((avail_kb / 1024)) MiB free in $(pwd)"
if [ "$avail_kb" -lt $((4 * 1024 * 1024)) ]; then
    echo "warning: less than 4 GiB free; the build may fail with 'No space left on device'" >&2
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
cargo test --workspace --all-targets
cargo test --workspace --doc

# --- real-model stage (issue 20) ---------------------------------------------------------
# A real local model (Gemma 3 270M) behind llama.cpp's OpenAI-compatible server drives react,
# sade and the LLM judge on a live lab. Builds and caches the server and the model under
# /opt/faultbench on first use; fails (never skips) when the server cannot be started.
echo "== real-model stage"
./scripts/real-llm.sh
# --- end of the real-model stage -----------------------------------------------------------

echo "== all tests passed"
