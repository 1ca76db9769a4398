#!/usr/bin/env bash
# The Python bindings' stage (issue 15): build the `faultbench` wheel with maturin (release, abi3),
# install it in a clean venv with pytest, pytest-asyncio and the OpenAI and Anthropic SDKs (from
# PyPI; the tests make no network calls), and run crates/faultbench-py/python/tests.
#
#   scripts/python-tests.sh            build (cached) + clean venv + pytest
#   scripts/python-tests.sh wheel      only build (or find) the wheel; prints its path
#   scripts/python-tests.sh -- ARGS    extra pytest arguments (e.g. -k bench)
#
# Caching: the wheel is kept under $FAULTBENCH_PY_HOME (/opt/faultbench) in py-wheels/<key>/, the
# key being a SHA-256 of everything compiled into it (the crates' sources, data and manifests,
# Cargo.lock, the Python package and pyproject.toml); an unchanged tree reuses it without
# compiling. A changed tree rebuilds with CARGO_TARGET_DIR=$FAULTBENCH_PY_HOME/py-target, kept
# between runs, so the release build is incremental (only the changed crates recompile). Only the
# newest three wheels are kept. The test venv is made fresh every time.
set -euo pipefail
shopt -s inherit_errexit # a failed build inside $(build_wheel) stops the script
cd "$(dirname "$0")/.."
REPO="$PWD"
HOME_DIR="${FAULTBENCH_PY_HOME:-/opt/faultbench}"
TOOLS_VENV="$HOME_DIR/maturin-venv"
MATURIN_VERSION="1.16.0"
TEST_PACKAGES=(pytest pytest-asyncio openai anthropic pandas)
mode="${1:-test}"
[ "$mode" = "--" ] && mode=test
log() { echo "== python: $*"; }

tree_key() {
    {
        find crates -path '*/target' -prune -o -type f \
            \( -path 'crates/*/src/*' -o -path 'crates/*/data/*' -o -name Cargo.toml -o -name build.rs \
               -o -path 'crates/faultbench-py/python/faultbench/*' -o -path 'crates/faultbench-py/pyproject.toml' \) \
            -print
        echo Cargo.toml
        echo Cargo.lock
    } | grep -v '/__pycache__/' | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16
}

build_wheel() {
    local key dir t0
    key=$(tree_key)
    dir="$HOME_DIR/py-wheels/$key"
    if ls "$dir"/faultbench-*.whl >/dev/null 2>&1; then
        log "wheel cached for tree $key" >&2
    else
        [ -x "$TOOLS_VENV/bin/maturin" ] && "$TOOLS_VENV/bin/maturin" --version | grep -q " $MATURIN_VERSION\$" || {
            rm -rf "$TOOLS_VENV"
            python3 -m venv "$TOOLS_VENV"
            "$TOOLS_VENV/bin/pip" install -q "maturin==$MATURIN_VERSION"
        }
        t0=$(date +%s)
        log "building the wheel for tree $key (maturin build --release; incremental in $HOME_DIR/py-target)" >&2
        rm -rf "$dir.tmp"
        mkdir -p "$dir.tmp"
        CARGO_TARGET_DIR="$HOME_DIR/py-target" CARGO_INCREMENTAL=0 \
            "$TOOLS_VENV/bin/maturin" build --release --quiet -m crates/faultbench-py/Cargo.toml -o "$dir.tmp" >&2
        ls "$dir.tmp"/faultbench-*.whl >/dev/null || { echo "error: maturin produced no wheel" >&2; exit 1; }
        rm -rf "$dir"
        mv "$dir.tmp" "$dir"
        log "wheel built in $(($(date +%s) - t0)) s" >&2
        # Keep the newest three trees' wheels.
        ls -1dt "$HOME_DIR"/py-wheels/*/ 2>/dev/null | tail -n +4 | xargs -r rm -rf
    fi
    ls "$dir"/faultbench-*.whl | head -n 1
}

wheel=$(build_wheel)
if [ "$mode" = wheel ]; then
    echo "$wheel"
    exit 0
fi
[ "${1:-}" = "--" ] && shift
[ "${1:-}" = test ] && shift
[ "${1:-}" = "--" ] && shift

venv=$(mktemp -d /tmp/faultbench-pytest.XXXXXX)
trap 'rm -rf "$venv"' EXIT
log "clean venv $venv: $(basename "$wheel") + ${TEST_PACKAGES[*]}"
python3 -m venv "$venv"
"$venv/bin/pip" install -q "$wheel" "${TEST_PACKAGES[@]}"
# Run from outside the source tree so that `import faultbench` is the installed wheel.
cd "$venv"
FAULTBENCH_REPO="$REPO" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    -c "$REPO/crates/faultbench-py/python/tests/pytest.ini" "$REPO/crates/faultbench-py/python/tests" "$@"
