"""Runs a Python agent's ``run`` in the thread faultbench gives it, and stops it on demand.

Each run of a Python agent gets its own OS thread (and, for ``async def run``, its own event
loop), so a blocking or misbehaving agent can only delay itself. ``Control.cancel`` is called
from Rust when the run's wall-clock budget passes or the benchmark is interrupted: an async
agent's task is cancelled; a sync agent gets ``AgentCancelled`` raised in its thread at the next
Python instruction (a call blocked inside C, e.g. ``time.sleep``, ends first).
"""

from __future__ import annotations

import asyncio
import ctypes
import inspect
import threading
import traceback


class AgentCancelled(BaseException):
    """Raised inside a sync agent that ran past its wall-clock budget."""


class Control:
    """Where a running agent can be reached from another thread."""

    def __init__(self) -> None:
        self.thread_id: int | None = None
        self.cancel_async = None
        self.cancelled = False
        self.lock = threading.Lock()

    def cancel(self) -> None:
        with self.lock:
            self.cancelled = True
            if self.cancel_async is not None:
                self.cancel_async()
            elif self.thread_id is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self.thread_id), ctypes.py_object(AgentCancelled)
                )


def drive(agent, agent_input, tools, control: Control):
    """Returns ``("ok", value)`` or ``("error", traceback text)``."""
    with control.lock:
        control.thread_id = threading.get_ident()
    try:
        result = agent.run(agent_input, tools)
        if inspect.isawaitable(result):
            result = asyncio.run(_await(result, control))
        with control.lock:
            control.thread_id = None
        return ("ok", result)
    except BaseException:  # noqa: BLE001 - everything becomes the run's recorded error
        with control.lock:
            control.thread_id = None
        return ("error", traceback.format_exc())


async def _await(awaitable, control: Control):
    task = asyncio.ensure_future(awaitable)
    loop = asyncio.get_running_loop()
    with control.lock:
        control.cancel_async = lambda: loop.call_soon_threadsafe(task.cancel)
        if control.cancelled:
            task.cancel()
    return await task
