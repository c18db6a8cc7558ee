"""The loop's semantics of offers, calls and results, through whole scripted runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import attrs
from loop_support import assert_no_orphans, events_of, make_host, plugin, scripted_loop

import toolwire
from toolwire.messages import SystemMessage
from toolwire.testing import tool_call


@toolwire.tool(instructions="Use shout for emphasis.")
def shout(text: Annotated[str, "Text."]) -> str:
    """Upper-case text."""
    return text.upper()


@toolwire.tool(instructions="Use echo to repeat.", strict=False)
def echo(text: Annotated[str, "Text."]) -> str:
    """Repeat text."""
    return text


# -- the offer ---------------------------------------------------------------------------------


async def test_tool_whose_instructions_raise_is_left_out_of_that_request(tmp_path: Path) -> None:
    def instructions(tool: toolwire.Tool, request: Any) -> str | None:
        if tool.name == "echo":
            raise RuntimeError("no instructions today")
        return None

    host = make_host(
        tmp_path,
        [shout, echo],
        plugins=[plugin("instr", toolwire_system_prompt_instructions=instructions)],
    )
    loop, model = scripted_loop(host, [[tool_call("echo", {"text": "hi"})], "ok"])
    run = await loop.run("go")
    first = model.requests[0]
    assert [f.name for f in first.functions] == ["shout"]
    assert first.messages[0] == SystemMessage("Use shout for emphasis.")
    [omitted] = [e for e in events_of(run, "tool_omitted") if e.round == 1]
    assert omitted.tool == "echo"
    assert "RuntimeError: no instructions today" in omitted.reason
    [started] = events_of(run, "round_started")[:1]
    assert started.offered == ("shout",)
    # The model's call of the left-out tool is answered as unknown, never run.
    [unknown] = events_of(run, "unknown_tool")
    assert unknown.name == "echo"
    assert not events_of(run, "tool_started")
    assert_no_orphans(run)


async def test_resolver_cannot_rename_a_function_or_change_its_strict_mode(
    tmp_path: Path,
) -> None:
    def resolve(tool: toolwire.Tool, request: Any) -> Any:
        spec = tool.function_spec()
        if tool.name == "echo":
            return attrs.evolve(spec, name="say_it", strict=True, description="Say it back.")
        return spec

    host = make_host(
        tmp_path, [shout, echo], plugins=[plugin("res", toolwire_resolve_function=resolve)]
    )
    loop, model = scripted_loop(host, [[tool_call("echo", {"text": "hi"})], "ok"])
    run = await loop.run("go")
    functions = {f.name: f for f in model.requests[0].functions}
    assert sorted(functions) == ["echo", "shout"]
    assert functions["echo"].strict is False
    assert functions["echo"].description == "Say it back."
    [corrected] = [e for e in events_of(run, "tool_resolution_corrected") if e.round == 1]
    assert corrected.tool == "echo"
    assert corrected.changes == ("name 'say_it' kept as 'echo'", "strict True kept as False")
    [completed] = events_of(run, "tool_completed")
    assert completed.result.content == "hi"
    assert run.stop_reason == "answered"


async def test_resolution_that_keeps_name_and_strict_mode_is_not_reported(
    tmp_path: Path,
) -> None:
    def resolve(tool: toolwire.Tool, request: Any) -> Any:
        return attrs.evolve(tool.function_spec(), strict=None, description="Other words.")

    host = make_host(tmp_path, [echo], plugins=[plugin("res", toolwire_resolve_function=resolve)])
    loop, model = scripted_loop(host, ["ok"])
    run = await loop.run("go")
    [function] = model.requests[0].functions
    assert (function.name, function.strict, function.description) == ("echo", False, "Other words.")
    assert not events_of(run, "tool_resolution_corrected")
