"""faultbench from Python: run your agents on faultbench's labs, tools, judges and benchmark.

The core is Rust (the ``faultbench._native`` extension); this package re-exports it with type
stubs. See ``docs/python.md`` in the repository for the whole API.

Quick start::

    import faultbench as fb

    class MyAgent:
        name = "mine"

        async def run(self, input: fb.AgentInput, tools: fb.Tools) -> fb.Diagnosis:
            out = await tools.acall("ping_pair", host_a="pc1", host_b="web1")
            healthy = " 0% packet loss" in out
            return fb.Diagnosis(is_anomaly=not healthy, faulty_devices=[], text=out[:200])

    scenario = fb.load_scenario("examples/mock/duo-r1-ospfd-down.txt")
    record = fb.run(scenario, MyAgent(), judge="rubric", emulator="mock",
                    topologies=["examples/mock"])
    print(record.status, record.scores)
"""

from __future__ import annotations

from typing import Awaitable, Protocol, Union, runtime_checkable

from ._native import (
    Answer,
    AgentInput,
    BenchResult,
    ConfigError,
    Dataset,
    Diagnosis,
    ExecResult,
    FaultbenchError,
    Lab,
    LabError,
    Record,
    Report,
    Scenario,
    ScenarioError,
    Scores,
    Tool,
    ToolError,
    Tools,
    Usage,
    __version__,
    bench,
    judge,
    load_dataset,
    load_scenario,
    report,
    run,
    validate,
)


@runtime_checkable
class Agent(Protocol):
    """What ``run`` and ``bench`` accept as an agent: a ``name`` and a ``run`` method, sync or
    ``async def``, returning a ``str`` (ending with the ``=== DIAGNOSIS ===`` block), a
    ``Diagnosis`` or an ``Answer``."""

    name: str

    def run(
        self, input: AgentInput, tools: Tools
    ) -> Union[str, Diagnosis, Answer, Awaitable[Union[str, Diagnosis, Answer]]]: ...


__all__ = [
    "Agent",
    "AgentInput",
    "Answer",
    "BenchResult",
    "ConfigError",
    "Dataset",
    "Diagnosis",
    "ExecResult",
    "FaultbenchError",
    "Lab",
    "LabError",
    "Record",
    "Report",
    "Scenario",
    "ScenarioError",
    "Scores",
    "Tool",
    "ToolError",
    "Tools",
    "Usage",
    "__version__",
    "bench",
    "judge",
    "load_dataset",
    "load_scenario",
    "report",
    "run",
    "validate",
]

