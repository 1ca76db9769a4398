#!/usr/bin/env bash
# The whole test suite, as CI runs it: system packages, formatting, lints, every test.
# Run as root on Debian 12 (live-lab tests need namespaces and FRR).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
cargo test --workspace --all-targets
cargo test --workspace --doc
echo "== all tests passed"
