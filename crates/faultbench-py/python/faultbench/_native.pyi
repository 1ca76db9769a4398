"""Type stubs of the native module (Rust, PyO3). See docs/python.md for the API guide."""

from __future__ import annotations

import os
from typing import Any, Awaitable, Callable, Iterator, Mapping, Optional, Sequence, Union

_Path = Union[str, os.PathLike[str]]
_Json = Any

__version__: str

class FaultbenchError(Exception):
    """Base class of every faultbench error."""

class ScenarioError(FaultbenchError):
    """A scenario file or dataset could not be read or parsed (the message has file:line)."""

class LabError(FaultbenchError):
    """A lab could not be deployed, reached or torn down."""

class ToolError(FaultbenchError):
    """A tool call could not run: unknown tool, invalid arguments, refused, or the lab failed."""

class ConfigError(FaultbenchError):
    """An unknown agent, judge or emulator name, or options that do not fit together."""

# ---- scenarios and datasets ---------------------------------------------------------------

class Scenario:
    """One scenario of the release's format."""

    @staticmethod
    def parse(text: str) -> Scenario:
        """Parses a scenario from its text (errors name the line)."""
    @property
    def id(self) -> str: ...
    @property
    def topology(self) -> str: ...
    @property
    def category(self) -> str:
        """``correct_fault``, ``false_premise``, ``wrong_device`` or ``wrong_cause``."""
    @property
    def layer(self) -> str:
        """``base``, ``cex`` or a persona layer (``novice``, ``naive``, …)."""
    @property
    def fault_family(self) -> str: ...
    @property
    def ticket(self) -> str:
        """The only text the agent sees besides the topology summary."""
    @property
    def ground_truth(self) -> str: ...
    @property
    def fix(self) -> Optional[str]: ...
    @property
    def axes(self) -> list[dict[str, Optional[str]]]:
        """``[{"axis", "kind", "argument"}]``; kind is assert, must, bonus or reason-dim."""
    @property
    def path(self) -> Optional[os.PathLike[str]]: ...
    def to_text(self) -> str: ...

class Dataset:
    """A dataset folder (``<topo>_Q/<layer>/*.txt``)."""

    @property
    def root(self) -> os.PathLike[str]: ...
    @property
    def scenarios(self) -> list[Scenario]: ...
    @property
    def errors(self) -> list[str]:
        """Why files failed to parse (``file:line: what``)."""
    @property
    def misplaced(self) -> list[os.PathLike[str]]: ...
    def select(self, scope: str = "all", topology: Optional[str] = None) -> list[Scenario]:
        """A scope (``all`` = base then cex, or a layer) of one topology or all."""
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Scenario]: ...

def load_scenario(path: _Path) -> Scenario:
    """Reads one scenario file; raises ScenarioError with file:line."""

def load_dataset(path: _Path) -> Dataset:
    """Scans a dataset folder; unparsable files are listed in ``Dataset.errors``."""

def validate(path: _Path) -> int:
    """Checks a file or dataset; raises ScenarioError listing every problem, else returns the
    number of scenarios."""

# ---- labs and tools -------------------------------------------------------------------------

class ExecResult:
    stdout: str
    stderr: str
    exit_code: Optional[int]
    timed_out: bool
    @property
    def ok(self) -> bool: ...

class Tool:
    """One tool: ``tool(**kwargs) -> str`` or ``await tool.acall(**kwargs)``."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> dict[str, _Json]: ...
    @property
    def mutating(self) -> bool: ...
    def openai(self) -> dict[str, _Json]: ...
    def anthropic(self) -> dict[str, _Json]: ...
    def __call__(self, args: Optional[Mapping[str, _Json]] = None, **kwargs: _Json) -> str: ...
    def acall(self, args: Optional[Mapping[str, _Json]] = None, **kwargs: _Json) -> Awaitable[str]: ...

class Tools:
    """The 22 tools of a lab or a run."""

    @property
    def names(self) -> list[str]: ...
    def specs(self) -> list[dict[str, _Json]]: ...
    def openai(self) -> list[dict[str, _Json]]:
        """``[{"type": "function", "function": {"name", "description", "parameters"}}]``."""
    def anthropic(self) -> list[dict[str, _Json]]:
        """``[{"name", "description", "input_schema"}]``."""
    def call(self, name: str, args: Optional[Mapping[str, _Json]] = None, **kwargs: _Json) -> str:
        """Runs a tool; raises ToolError when it cannot run."""
    def acall(self, name: str, args: Optional[Mapping[str, _Json]] = None, **kwargs: _Json) -> Awaitable[str]: ...
    def callables(self) -> list[Tool]: ...
    def __getitem__(self, name: str) -> Tool: ...
    def __contains__(self, name: str) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Tool]: ...

class Lab:
    """A topology on an emulator; a context manager (``with`` / ``async with``)."""

    @classmethod
    def up(
        cls,
        topology: _Path,
        emulator: str = "mock",
        *,
        topologies: Sequence[_Path] = ...,
        name: Optional[str] = None,
        record: Optional[_Path] = None,
        kathara_config: Optional[_Path] = None,
    ) -> Lab: ...
    def deploy(self) -> None: ...
    def teardown(self) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def emulator(self) -> str: ...
    @property
    def path(self) -> os.PathLike[str]: ...
    @property
    def devices(self) -> list[str]: ...
    def exec(self, device: str, argv: Union[str, Sequence[str]], timeout: float = 30.0) -> ExecResult: ...
    def tools(self, *, read_only: bool = False, telemetry: bool = False) -> Tools: ...
    def __enter__(self) -> Lab: ...
    def __exit__(self, *exc: object) -> bool: ...
    async def __aenter__(self) -> Lab: ...
    async def __aexit__(self, *exc: object) -> bool: ...

# ---- agents, judges, runs ---------------------------------------------------------------------

class AgentInput:
    @property
    def prompt(self) -> str: ...
    @property
    def ticket(self) -> str: ...
    @property
    def topology_summary(self) -> str: ...
    @property
    def max_turns(self) -> int: ...
    @property
    def wall_clock_secs(self) -> int: ...
    @property
    def task(self) -> str: ...

class Usage:
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    def __init__(
        self,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> None: ...

_UsageLike = Union[Usage, Mapping[str, int], Any]

class Diagnosis:
    is_anomaly: Optional[bool]
    faulty_devices: list[str]
    text: str
    parsed_ok: bool
    usage: Optional[_UsageLike]
    cost_usd: Optional[float]
    model: Optional[str]
    def __init__(
        self,
        is_anomaly: Optional[bool] = None,
        faulty_devices: Sequence[str] = ...,
        text: str = "",
        *,
        usage: Optional[_UsageLike] = None,
        cost_usd: Optional[float] = None,
        model: Optional[str] = None,
    ) -> None: ...
    @staticmethod
    def parse(answer: str) -> Diagnosis: ...
    def render(self) -> str: ...

class Answer:
    text: str
    usage: Optional[_UsageLike]
    cost_usd: Optional[float]
    model: Optional[str]
    def __init__(
        self,
        text: str,
        *,
        usage: Optional[_UsageLike] = None,
        cost_usd: Optional[float] = None,
        model: Optional[str] = None,
    ) -> None: ...

class Scores:
    def __init__(
        self,
        outcome: float = 0.0,
        *,
        fix: Optional[float] = None,
        reasoning: Optional[float] = None,
        judge: str = "python",
        error: Optional[str] = None,
    ) -> None: ...
    def axis(self, axis: str, kind: str, score: float, rationale: str = "") -> None: ...
    def finish(self) -> None: ...
    @property
    def outcome(self) -> float: ...
    @property
    def fix(self) -> Optional[float]: ...
    @property
    def reasoning(self) -> Optional[float]: ...
    @property
    def judge(self) -> str: ...
    @property
    def correct(self) -> bool: ...
    @property
    def per_axis(self) -> list[dict[str, _Json]]: ...
    def to_dict(self) -> dict[str, _Json]: ...

class Record:
    @property
    def status(self) -> str: ...
    @property
    def error(self) -> Optional[str]: ...
    @property
    def scenario_id(self) -> str: ...
    @property
    def agent(self) -> str: ...
    @property
    def pass_(self) -> int: ...
    @property
    def diagnosis(self) -> Optional[Diagnosis]: ...
    @property
    def scores(self) -> Optional[Scores]: ...
    @property
    def final_text(self) -> Optional[str]: ...
    @property
    def tool_calls(self) -> list[dict[str, _Json]]: ...
    def to_dict(self) -> dict[str, _Json]: ...

_JudgeFn = Callable[[Scenario, Diagnosis], Union[Scores, float]]
_AgentLike = Any  # an object with `name` and `run(input, tools)`, or a built-in agent's name

def judge(
    scenario: Scenario,
    diagnosis: Union[Diagnosis, str],
    judge: Union[str, _JudgeFn, None] = None,
    *,
    model: Optional[str] = None,
    llm_config: Optional[_Path] = None,
    trace_digest: str = "",
) -> Scores: ...

def run(
    scenario: Scenario,
    agent: _AgentLike,
    judge: Union[str, _JudgeFn, None] = None,
    *,
    emulator: str = "netns",
    topologies: Sequence[_Path] = ...,
    max_turns: int = 20,
    wall_clock_secs: int = 600,
    read_only: bool = False,
    telemetry: Optional[bool] = None,
    judge_model: Optional[str] = None,
    llm_config: Optional[_Path] = None,
    model: Optional[str] = None,
    runs_root: Optional[_Path] = None,
    pass_: int = 1,
) -> Record: ...

class BenchResult:
    runs_root: os.PathLike[str]
    planned: int
    skipped: int
    finished: int
    statuses: dict[str, int]
    report_html: Optional[os.PathLike[str]]

def bench(
    agents: Mapping[str, _AgentLike],
    *,
    runs_root: _Path,
    scenarios: Optional[Sequence[Union[Scenario, str]]] = None,
    dataset: _Path = "dataset",
    scope: str = "all",
    experiment: Optional[str] = None,
    topology: Optional[str] = None,
    passes: Optional[int] = None,
    jobs: int = 1,
    resume: bool = True,
    judge: Union[str, _JudgeFn, None] = None,
    emulator: str = "netns",
    topologies: Optional[_Path] = None,
    max_turns: int = 20,
    wall_clock_secs: int = 600,
    read_only: bool = False,
    telemetry: Optional[bool] = None,
    prestart: int = 1,
    shard: Optional[str] = None,
    judge_model: Optional[str] = None,
    llm_config: Optional[_Path] = None,
    model: Optional[str] = None,
    progress: Optional[Callable[[dict[str, _Json]], None]] = None,
    report: bool = True,
) -> BenchResult:
    """Runs scenarios x agents x passes through the library's Bench (same files as
    ``faultbench bench``); ``progress`` gets one dict per event, on the calling thread."""

# ---- reports ----------------------------------------------------------------------------------

class Report:
    @property
    def rows(self) -> list[dict[str, Union[str, float, None]]]: ...
    def to_dict(self) -> dict[str, _Json]: ...
    @property
    def markdown(self) -> str: ...
    @property
    def html_path(self) -> Optional[os.PathLike[str]]: ...
    @property
    def warnings(self) -> list[str]: ...
    def dataframe(self) -> Any:
        """A pandas DataFrame of ``rows`` (raises ImportError without pandas)."""

def report(runs_root: _Path, *, out_dir: Optional[_Path] = None, write: bool = True) -> Report: ...
