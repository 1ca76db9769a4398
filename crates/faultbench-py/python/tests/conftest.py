"""Shared fixtures: paths into the repository (examples, test labs) and a slow mock network."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(os.environ.get("FAULTBENCH_REPO", Path(__file__).resolve().parents[4]))
MOCK = REPO / "examples" / "mock"
NETNS_DATASET = REPO / "crates" / "faultbench-cli" / "tests" / "fixtures" / "netns" / "dataset"
NETNS_LABS = REPO / "crates" / "faultbench-emu" / "tests" / "labs"


# A probe command answered after a delay, to make tool calls take measurable time.
SLOW_RULE = """

[[rule]]
device = "*"
command = "slow-probe"
delay_ms = {delay}
stdout = "probed {{device}}\\n"
"""


@pytest.fixture
def duo_scenario():
    import faultbench as fb

    return fb.load_scenario(MOCK / "duo-r1-ospfd-down.txt")


@pytest.fixture
def slow_duo(tmp_path: Path) -> Path:
    """A copy of the examples' Duo network whose `slow-probe` command answers after 300 ms;
    returns the topology root holding it (`Duo/`)."""
    root = tmp_path / "topologies"
    shutil.copytree(MOCK / "Duo", root / "Duo")
    with open(root / "Duo" / "mock.toml", "a") as f:
        f.write(SLOW_RULE.format(delay=300))
    return root


@pytest.fixture
def duo_dataset(tmp_path: Path) -> Path:
    """A dataset of one mock topology: the examples' scenario in `duo_Q/base/`."""
    base = tmp_path / "dataset" / "duo_Q" / "base"
    base.mkdir(parents=True)
    shutil.copy(MOCK / "duo-r1-ospfd-down.txt", base)
    return tmp_path / "dataset"


# The start of a script whose agent waits forever once it has said so (Ctrl-C tests).
HANG_PRELUDE = """
import asyncio, sys, faultbench as fb
class Hang:
    name = "hang"
    async def run(self, input, tools):
        print("agent started", flush=True)
        await asyncio.sleep(3600)
"""


def _sigint_as_at_a_terminal() -> None:
    # A suite started in the background by a non-interactive shell inherits SIGINT ignored, and
    # Python then never installs its Ctrl-C handler: the Ctrl-C tests need what a terminal gives.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_python(script: str, *args) -> subprocess.Popen:
    """Runs `script` in a new interpreter (the installed faultbench) with `args` as argv[1:]."""
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        preexec_fn=_sigint_as_at_a_terminal,
    )


def serve_chat_completions(reply) -> ThreadingHTTPServer:
    """A local server speaking the Chat Completions wire format on 127.0.0.1 (a free port):
    every POST's JSON body is passed to `reply(path, body)`, whose dict is the response.
    Call `.shutdown()` when done."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            out = json.dumps(reply(self.path, body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
