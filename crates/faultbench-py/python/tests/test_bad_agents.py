"""Python agents that misbehave get the statuses a Rust agent gets: an exception is
`agent_error` with the traceback in the record, garbage text is an unparsed answer, a wrong
return type is `agent_error` naming it, a hang past the wall clock is a timeout (the agent is
cancelled), and Ctrl-C stops the run."""

from __future__ import annotations

import asyncio
import os
import signal
import textwrap
import threading
import time

import faultbench as fb
from conftest import HANG_PRELUDE, MOCK, start_python

KW = dict(emulator="mock", topologies=[MOCK])


class Raises:
    name = "raises"

    async def run(self, input, tools):
        await tools.acall("frr_exec", router_name="r1", command="show ip ospf neighbor")
        return helper_that_fails()


def helper_that_fails():
    return 1 / 0


def test_exception_is_agent_error_with_traceback(duo_scenario):
    rec = fb.run(duo_scenario, Raises(), **KW)
    assert rec.status == "agent_error"
    assert "Traceback" in rec.error and "ZeroDivisionError" in rec.error
    assert "helper_that_fails" in rec.error
    assert rec.scores is None
    # The lab was torn down after the failure.
    cleanup = rec.to_dict()["phases"]["cleanup"]
    assert cleanup["action"] == "teardown" and cleanup["ok"], cleanup


class Garbage:
    name = "garbage"

    def run(self, input, tools):
        return "lorem ipsum, the network is a teapot"


def test_garbage_text_is_an_unparsed_answer(duo_scenario):
    rec = fb.run(duo_scenario, Garbage(), **KW)
    assert rec.status == "scored"
    assert rec.diagnosis.parsed_ok is False
    assert not rec.scores.correct


class WrongType:
    name = "wrong-type"

    def run(self, input, tools):
        return {"is_anomaly": True}


def test_wrong_return_type_is_agent_error_naming_it(duo_scenario):
    rec = fb.run(duo_scenario, WrongType(), **KW)
    assert rec.status == "agent_error"
    assert "returned dict" in rec.error and "expected str" in rec.error


class AsyncHang:
    name = "async-hang"

    def __init__(self):
        self.cancelled = threading.Event()

    async def run(self, input, tools):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


def test_async_hang_past_wall_clock_is_a_timeout_and_is_cancelled(duo_scenario):
    agent = AsyncHang()
    t = time.monotonic()
    rec = fb.run(duo_scenario, agent, wall_clock_secs=2, **KW)
    assert rec.status in ("no_output", "no_submission"), (rec.status, rec.error)
    assert "wall-clock" in rec.error
    assert time.monotonic() - t < 30
    assert agent.cancelled.wait(5), "the agent's task was not cancelled"


class SyncSpin:
    """Not async-safe: blocks its thread in pure Python."""

    name = "sync-spin"

    def __init__(self):
        self.stopped = threading.Event()

    def run(self, input, tools):
        try:
            while True:
                pass
        except BaseException:
            self.stopped.set()
            raise


def test_sync_spin_past_wall_clock_is_a_timeout_and_is_stopped(duo_scenario):
    agent = SyncSpin()
    rec = fb.run(duo_scenario, agent, wall_clock_secs=2, **KW)
    assert rec.status in ("no_output", "no_submission"), (rec.status, rec.error)
    assert agent.stopped.wait(5), "the spinning agent was not interrupted"


class BlocksItsLoop:
    """Not async-safe: `time.sleep` inside `async def` blocks its event loop."""

    name = "blocks-loop"

    async def run(self, input, tools):
        time.sleep(4)
        return "too late"


def test_blocking_async_agent_is_a_timeout(duo_scenario):
    rec = fb.run(duo_scenario, BlocksItsLoop(), wall_clock_secs=1, **KW)
    assert rec.status in ("no_output", "no_submission"), (rec.status, rec.error)


def test_agent_without_run_is_a_config_error(duo_scenario):
    class NoRun:
        name = "x"

    try:
        fb.run(duo_scenario, NoRun(), **KW)
    except fb.ConfigError as e:
        assert "run(input, tools)" in str(e)
    else:
        raise AssertionError("accepted an agent without run()")


CTRL_C_SCRIPT = HANG_PRELUDE + textwrap.dedent(
    """
    s = fb.load_scenario(sys.argv[1])
    try:
        fb.run(s, Hang(), emulator="mock", topologies=[sys.argv[2]], wall_clock_secs=3600)
    except KeyboardInterrupt:
        print("interrupted cleanly", flush=True)
        sys.exit(130)
    """
)


def test_ctrl_c_stops_the_run():
    proc = start_python(CTRL_C_SCRIPT, MOCK / "duo-r1-ospfd-down.txt", MOCK)
    assert proc.stdout.readline().strip() == "agent started"
    t = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "interrupted cleanly" in out
    assert time.monotonic() - t < 15
