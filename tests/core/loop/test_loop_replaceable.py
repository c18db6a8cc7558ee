"""A plugin's ``toolwire_loop`` replaces the built-in loop on every surface; adapters stay."""

from __future__ import annotations

import io
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from loop_support import make_host, plugin

import toolwire
from toolwire import HostError
from toolwire.adapters import ModelRequest
from toolwire.batch import BatchJob, JobSettings, run_job
from toolwire.cli._render import run_cli
from toolwire.config import ProviderConfig
from toolwire.events import Event, RunFinished
from toolwire.loop import Decision, Run, RunLoop, ToolCallingLoop, UnknownRun
from toolwire.messages import Message, ToolResultMessage, UserMessage

SCRIPTED = ProviderConfig(adapter="scripted")


@toolwire.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class OneRequestLoop:
    """An agent-mode loop written from scratch: one model request offering every tool, each
    call of the answer run through the host, the results as the run's end."""

    def __init__(self, host: toolwire.Host) -> None:
        self.host = host
        self.last_run: Run | None = None
        self.runs: dict[str, Run] = {}
        self.options: list[Mapping[str, Any]] = []

    async def run(self, prompt_or_messages: str | Sequence[Message], **options: Any) -> Run:
        self.options.append(options)
        run_id = options.get("run_id") or f"one_{uuid.uuid4().hex}"
        messages: tuple[Message, ...] = (
            (UserMessage(prompt_or_messages),)
            if isinstance(prompt_or_messages, str)
            else tuple(prompt_or_messages)
        )
        adapter = await self.host.get_adapter()
        functions = tuple(tool.function_spec() for tool in self.host.tools.values())
        request = ModelRequest(run_id=run_id, round=1, messages=messages, functions=functions)
        answer = await adapter.complete(request, self.host.emit)
        tools = ToolCallingLoop(self.host)
        results = [
            ToolResultMessage(
                call_id=call.id, name=call.name, result=await tools.call(call.name, call.arguments)
            )
            for call in answer.tool_calls
        ]
        text = " ".join(r.result.model_text() for r in results)
        run = Run(
            id=run_id, messages=(*messages, answer, *results), stop_reason="answered", text=text
        )
        self.host.emit(RunFinished(run_id=run_id, round=1, stop_reason="answered"))
        self.last_run = self.runs[run_id] = run
        return run

    async def resume(
        self, run: Run | str, decisions: Mapping[str, Decision] | None = None, **options: Any
    ) -> Run:
        raise ValueError("OneRequestLoop defers nothing, so it has nothing to resume")

    def stream(self, prompt_or_messages: str | Sequence[Message], **options: Any) -> Events:
        return Events(self, prompt_or_messages, options)

    def load(self, run_id: str) -> Run:
        try:
            return self.runs[run_id]
        except KeyError:
            raise UnknownRun(f"no run {run_id!r}") from None


class Events:
    """OneRequestLoop's stream: its single event after the run."""

    def __init__(self, loop: OneRequestLoop, prompt: Any, options: Mapping[str, Any]) -> None:
        self.loop, self.prompt, self.options = loop, prompt, options
        self.run: Run | None = None

    async def __aiter__(self) -> AsyncIterator[Event]:
        self.run = await self.loop.run(self.prompt, **self.options)
        yield RunFinished(run_id=self.run.id, round=1, stop_reason=self.run.stop_reason)

    async def aclose(self) -> None:
        return None


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no")


def providing(loop_class: Any, name: str = "agent_mode") -> Any:
    made: list[Any] = []

    def toolwire_loop(host: toolwire.Host) -> Any:
        made.append(loop_class(host))
        return made[-1]

    provider = plugin(name, toolwire_loop=toolwire_loop)
    provider.made = made
    return provider


def test_the_contract_is_the_built_in_loops(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    assert isinstance(ToolCallingLoop(host), RunLoop)
    assert isinstance(OneRequestLoop(host), RunLoop)


async def test_without_a_plugin_the_host_runs_the_built_in_loop(tmp_path: Path) -> None:
    host = make_host(tmp_path, [add], provider=SCRIPTED)
    assert type(host.new_loop()) is ToolCallingLoop
    run = await host.run("add")
    assert run.stop_reason == "answered"
    assert run.rounds == 2


async def test_a_loop_written_from_scratch_runs_over_the_unchanged_adapter(tmp_path: Path) -> None:
    agent = providing(OneRequestLoop)
    host = make_host(tmp_path, [add], provider=SCRIPTED, plugins=[agent])
    run = await host.run("add")
    assert type(agent.made[0]) is OneRequestLoop
    assert run.id.startswith("one_")
    [result] = [m for m in run.messages if isinstance(m, ToolResultMessage)]
    assert result.name == "add"
    [call] = run.messages[1].tool_calls  # type: ignore[union-attr]
    assert run.text == result.result.model_text() == str(call.arguments["a"] + call.arguments["b"])
    events = [event async for event in host.stream("add")]
    assert [e.kind for e in events] == ["run_finished"]
    assert len(agent.made) == 2  # a new loop per conversation


def test_toolwire_run_uses_the_plugins_loop(tmp_path: Path) -> None:
    agent = providing(OneRequestLoop)
    host = make_host(tmp_path, [add], provider=SCRIPTED, plugins=[agent])
    out = io.StringIO()
    code = run_cli(host, "add", json_output=True, stdout=out, stderr=io.StringIO())
    assert code == 0
    assert '"id": "one_' in out.getvalue()
    assert len(agent.made) == 1


async def test_batch_uses_the_plugins_loop(tmp_path: Path) -> None:
    agent = providing(OneRequestLoop)
    host = make_host(tmp_path, [add], provider=SCRIPTED, plugins=[agent])
    job = BatchJob(id="j1", line=1, run_id="batch_j1", prompt="add", options={})
    record = await run_job(host, job, JobSettings())
    assert record["stop_reason"] == "answered"
    assert agent.made[-1].runs.keys() == {"batch_j1"}
    assert agent.made[-1].options == [{"run_id": "batch_j1", "approval": None}]


async def test_a_subclass_of_the_built_in_loop_is_a_loop_too(tmp_path: Path) -> None:
    class PlanFirst(ToolCallingLoop):
        async def run(self, prompt_or_messages: Any, **options: Any) -> Run:
            options.setdefault("system_prompt", "Plan the steps, then call the tools.")
            return await super().run(prompt_or_messages, **options)

    host = make_host(tmp_path, [add], provider=SCRIPTED, plugins=[providing(PlanFirst)])
    run = await host.run("add")
    assert run.stop_reason == "answered"
    assert run.messages[0].content == "Plan the steps, then call the tools."  # type: ignore[union-attr]


def test_two_plugins_providing_the_loop_are_named(tmp_path: Path) -> None:
    host = make_host(
        tmp_path,
        plugins=[providing(OneRequestLoop, "agent_a"), providing(OneRequestLoop, "agent_b")],
    )
    with pytest.raises(HostError, match=r"plugins 'agent_a', 'agent_b' each provide the loop"):
        host.new_loop()


@pytest.mark.parametrize(
    ("hook", "message"),
    [
        (lambda host: 42, r"plugin 'bad_loop' returned 42 from toolwire_loop; expected a loop"),
        (
            lambda host: Unprintable(),
            r"plugin 'bad_loop' returned a Unprintable object from toolwire_loop; expected a loop",
        ),
        (
            lambda host: 1 / 0,
            r"plugin 'bad_loop' failed to provide the loop \(toolwire_loop\): ZeroDivisionError",
        ),
    ],
)
def test_a_plugin_whose_loop_is_not_one_is_named(tmp_path: Path, hook: Any, message: str) -> None:
    host = make_host(tmp_path, plugins=[plugin("bad_loop", toolwire_loop=hook)])
    with pytest.raises(HostError, match=message):
        host.new_loop()
