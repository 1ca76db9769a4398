#!/usr/bin/env bash
# The whole test suite, as CI runs it: system packages, formatting, lints, every test.
# Run as root on Debian 12 (live-lab tests need namespaces and FRR).
#
# The release-compatibility tests read the public FaulT-Bench release, found by faultbench-testkit:
# FAULTBENCH_RELEASE, else ../shared/release beside the checkout. Without it every other test still
# runs, each test that needs it records that it did not run, and this script lists them and fails —
# unless FAULTBENCH_SKIP_RELEASE=1. With CI=true a missing release fails at once.
set -euo pipefail
# A relative FAULTBENCH_RELEASE means relative to where the script was started.
if [ -n "${FAULTBENCH_RELEASE:-}" ] && [ "${FAULTBENCH_RELEASE#/}" = "$FAULTBENCH_RELEASE" ]; then
    export FAULTBENCH_RELEASE="$PWD/$FAULTBENCH_RELEASE"
fi
cd "$(dirname "$0")/.."

./scripts/install-deps.sh

echo "== release"
release_status=0
cargo run -q -p faultbench-testkit --bin faultbench-release || release_status=$?
case "$release_status" in
0) ;;
2)
    if [ "${CI:-}" = true ]; then
        echo "error: CI=true and the FaulT-Bench release is missing: CI must run the release-compatibility tests" >&2
        exit 1
    fi
    echo "   the release-compatibility tests will be listed as not run at the end"
    ;;
*) exit 1 ;; # FAULTBENCH_RELEASE names something that is not a release: the message says what
esac

# Tests that need the missing release write one marker file each here (faultbench-testkit).
target_dir=${CARGO_TARGET_DIR:-target}
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
export FAULTBENCH_NOT_RUN_DIR="$target_dir/release-not-run"
rm -rf "$FAULTBENCH_NOT_RUN_DIR"
mkdir -p "$FAULTBENCH_NOT_RUN_DIR"

finish() {
    local status=$? not_run
    not_run=$(find "$FAULTBENCH_NOT_RUN_DIR" -type f | wc -l)
    if [ "$not_run" -gt 0 ]; then
        echo
        echo "================================================================================"
        echo "$not_run release-compatibility tests not run: the FaulT-Bench release was not found."
        echo "Run scripts/fetch-release.sh and export FAULTBENCH_RELEASE=… (the line it prints),"
        echo "then run this script again. Not run:"
        for marker in "$FAULTBENCH_NOT_RUN_DIR"/*; do head -n1 "$marker"; done | sort | sed 's/^/  /'
        if [ "${FAULTBENCH_SKIP_RELEASE:-}" = 1 ]; then
            echo "FAULTBENCH_SKIP_RELEASE=1: not counted as a failure."
        elif [ "$status" -eq 0 ]; then
            echo "Failing (set FAULTBENCH_SKIP_RELEASE=1 to accept running without the release)."
            status=1
        fi
        echo "================================================================================"
    fi
    if [ "$status" -eq 0 ]; then
        if [ "$not_run" -eq 0 ]; then
            echo "== all tests passed"
        else
            echo "== all tests that could run passed"
        fi
    fi
    exit "$status"
}
trap finish EXIT

# A fresh build needs about 2 GB (measured: 2.0 GB); say so up front rather than failing in the linker.
# Incremental state only helps rebuilds, and CI builds once.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
avail_kb=$(df -Pk . | awk 'NR==2 {print $4}')
echo "== disk: $((avail_kb / 1024)) MiB free in $(pwd)"
if [ "$avail_kb" -lt $((4 * 1024 * 1024)) ]; then
    echo "warning: less than 4 GiB free; the build may fail with 'No space left on device'" >&2
fi

echo "== links in README.md and docs/ (files and #anchors)"
python3 scripts/check-links.py
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
echo "== unused dependencies (cargo machete)"
# Fails on a dependency declared and never used (installed by scripts/install-deps.sh). A false
# positive (a crate used only through a macro) goes in `[package.metadata.cargo-machete]`.
cargo machete
echo "== faultbench-emu without its heavy backends (cargo features)"
# Also builds faultbench-core without its `pipeline` feature; clippy, so that code unused in
# this configuration is caught too.
cargo clippy -q -p faultbench-emu --no-default-features --features mock,tools -- -D warnings
echo "== cargo doc"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace
echo "== cargo test"
# --all-targets includes the examples; `test_my_agent` is a test target (its #[tokio::test]s run).
cargo test --workspace --all-targets
cargo test --workspace --doc
echo "== examples"
# The examples that need no root or network run to completion (each fails on a wrong result).
cargo run -q --example custom_agent
cargo run -q --example custom_judge
# A user's agent registered by name over simple_bgp's 25 core scenarios with `Bench` on live
# netns labs (as root; ≈2 min on 2 cores). Fails unless all 25 runs are scored.
bench_root=$(mktemp -d)
cargo run -q --example bench_my_agent -- simple_bgp 25 "$bench_root/runs"
rm -rf "$bench_root"
echo "== deploy/k8s (offline schema validation, and proof that a broken manifest fails it)"
./scripts/check-k8s.sh

# --- Python bindings (issue 15) -----------------------------------------------------------
# The `faultbench` wheel (maturin, release, abi3; cached under /opt/faultbench keyed by a hash of
# the sources, rebuilt incrementally), installed in a clean venv with pytest, pytest-asyncio and
# the OpenAI and Anthropic SDKs; the pytest suite includes live netns labs (root).
echo "== python bindings"
./scripts/python-tests.sh
# --- end of the Python bindings stage ------------------------------------------------------

# --- real-model stage (issue 20) ---------------------------------------------------------
# A real local model (Gemma 3 270M) behind llama.cpp's OpenAI-compatible server drives react,
# sade and the LLM judge on a live lab. Builds and caches the server and the model under
# /opt/faultbench on first use; fails (never skips) when the server cannot be started.
echo "== real-model stage"
./scripts/real-llm.sh
# --- end of the real-model stage -----------------------------------------------------------

# --- Kathará engine stage (issue 34) -----------------------------------------------------------
# Real Kathará on this machine's Docker engine. kathara_stage sets the engine up (docker.io,
# dockerd, the device images and the network plugin; cached: images stay in dockerd's storage and
# their rootfs tarball under /opt/faultbench/kathara-images, so a warm run only checks them), asks
# `faultbench doctor` whether it is ready, runs the plugin's live Docker test, and brings up
# simple_bgp and Kath2 with real Kathará until every baseline probe passes, runs the live tests of
# the Docker-API exec, the lab commands on Kathará and the netns emulation of Docker's embedded DNS,
# then `scenario check --emulator kathara` over the core scenarios (base and cex, 25 each) of
# simple_bgp and Kath2 and `lab parity` (netns against Kathará) on simple_bgp and dc_clos_bgp.
# Any failed scenario or any parity difference fails the stage. Fails (never skips) when the
# engine cannot be set up. Target: ≤ 10 min warm; not met under load: on 2 cores at load 35-113
# the two scenario checks alone took 19 and 33 min (docs/parity.md).
kathara_stage() {
    echo "== kathara: engine set-up (scripts/kathara-engine.sh; cached)"
    ./scripts/kathara-engine.sh
    echo "== kathara: faultbench doctor --emulator kathara"
    cargo run -q -p faultbench-cli -- doctor --emulator kathara >/dev/null \
        || { cargo run -q -p faultbench-cli -- doctor --emulator kathara | sed -n '/Kathará engine/,$p'; return 1; }
    echo "== kathara: network plugin under Docker (live test)"
    cargo test -q -p faultbench-netplugin --test live_docker -- --ignored
    echo "== kathara: simple_bgp (katharanp) and Kath2 (Kathará's default, katharanp_vde), baseline probes"
    ./scripts/kathara-bringup.py --network-plugin kathara/katharanp simple_bgp
    ./scripts/kathara-bringup.py Kath2
    echo "== kathara: device commands through the Docker Engine API (live)"
    cargo test -q -p faultbench-emu --test kathara_engine_live -- --ignored --test-threads 1
    echo "== kathara: every lab command and scenario check with --emulator kathara (live)"
    cargo test -q -p faultbench-cli --test kathara_lab_cli -- --ignored --test-threads 1
    echo "== kathara: Docker's embedded DNS emulated on netns devices (live)"
    cargo test -q -p faultbench-emu --test netns_dns
    local fb kconf
    cargo build -q -p faultbench-cli
    fb=target/debug/faultbench
    kconf=$(mktemp --suffix=.toml)
    printf 'cli = ["/opt/faultbench/kathara-venv/bin/python", "-m", "kathara"]\n' >"$kconf"
    # FAULTBENCH_KATHARA_VARIANTS="base" halves the stage (10 scenarios per topology instead of 25).
    local variants=${FAULTBENCH_KATHARA_VARIANTS:-base cex} files=() v
    for v in $variants; do
        files+=(dataset/nika_bgp_Q/"$v"/*.txt dataset/kath2_Q/"$v"/*.txt)
    done
    echo "== kathara: scenario check --emulator kathara, simple_bgp and Kath2 ($variants)"
    FAULTBENCH_KATHARA_CONFIG=$kconf "$fb" scenario check --emulator kathara -j 2 --share-labs \
        "${files[@]}" || { rm -f "$kconf"; return 1; }
    echo "== kathara: lab parity (netns against Kathará): simple_bgp, dc_clos_bgp"
    for t in simple_bgp dc_clos_bgp; do
        "$fb" lab parity "$t" --kathara-config "$kconf" || { rm -f "$kconf"; return 1; }
    done
    rm -f "$kconf"
}
echo "== Kathará engine stage"
kathara_stage
# --- end of the Kathará engine stage -----------------------------------------------------------
