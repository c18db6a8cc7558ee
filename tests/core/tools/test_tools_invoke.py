"""Calling tools: structuring, injection, sync and async, results, errors and blocks."""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import threading
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import attrs
import pytest

from toolwire.tools import (
    Inject,
    Injected,
    Source,
    Tool,
    ToolBlocked,
    ToolContext,
    ToolResult,
    ToolStatus,
    tool,
)


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


@attrs.frozen
class Box:
    width: int
    height: int = 1
    unit: Unit = Unit.C


class Person(TypedDict):
    name: str
    age: int


@attrs.frozen
class Report:
    title: str
    when: dt.date
    tags: frozenset[str]


def context(t: Tool, **fields: Any) -> ToolContext:
    return ToolContext(tool=t, call_id="c1", run_id="r1", round=1, **fields)


async def test_arguments_are_structured_into_parameter_types():
    seen: dict[str, Any] = {}

    @tool
    def f(
        box: Box,
        unit: Unit,
        when: dt.datetime,
        day: dt.date,
        at: dt.time,
        id: uuid.UUID,
        path: Path,
        pair: tuple[int, str],
        tags: set[str],
        person: Person,
        boxes: list[Box],
        either: Box | int,
        count: int,
        ratio: float,
        mode: Literal["a", "b"] = "a",
    ) -> None:
        """F."""
        seen.update(locals())

    result = await f.invoke(
        {
            "box": {"width": 3, "unit": "fahrenheit"},
            "unit": "celsius",
            "when": "2024-05-01T10:30:00Z",
            "day": "2024-05-01",
            "at": "10:30:00",
            "id": "123e4567-e89b-12d3-a456-426614174000",
            "path": "notes/today.md",
            "pair": [1, "x"],
            "tags": ["a", "b", "c"],
            "person": {"name": "Ann", "age": 30},
            "boxes": [{"width": 1}, {"width": 2, "height": 5}],
            "either": {"width": 9},
            "count": 4.0,
            "ratio": 1,
        },
        context(f),
    )
    assert result.status is ToolStatus.OK, result.content
    assert seen["box"] == Box(width=3, unit=Unit.F)
    assert seen["unit"] is Unit.C
    assert seen["when"] == dt.datetime(2024, 5, 1, 10, 30, tzinfo=dt.UTC)
    assert seen["day"] == dt.date(2024, 5, 1)
    assert seen["at"] == dt.time(10, 30)
    assert seen["id"] == uuid.UUID("123e4567-e89b-12d3-a456-426614174000")
    assert seen["path"] == Path("notes/today.md")
    assert seen["pair"] == (1, "x")
    assert seen["tags"] == {"a", "b", "c"}
    assert seen["person"] == {"name": "Ann", "age": 30}
    assert seen["boxes"] == [Box(width=1), Box(width=2, height=5)]
    assert seen["either"] == Box(width=9)
    assert seen["count"] == 4
    assert type(seen["count"]) is int
    assert seen["ratio"] == 1.0
    assert type(seen["ratio"]) is float
    assert seen["mode"] == "a"


async def test_union_members_are_tried_in_order():
    seen: list[Any] = []

    @tool
    def f(value: dt.date | str | int) -> None:
        """F."""
        seen.append(value)

    for raw in ("2024-02-03", "soon", 5):
        assert (await f.invoke({"value": raw})).is_ok
    assert seen == [dt.date(2024, 2, 3), "soon", 5]


async def test_defaults_apply_when_arguments_are_left_out_or_null():
    @tool
    def f(q: str, limit: int = 5, /, *, unit: Unit = Unit.F) -> str:
        """F."""
        return f"{q} {limit} {unit.value}"

    assert (await f.invoke({"q": "x"})).content == "x 5 fahrenheit"
    assert (await f.invoke({"q": "x", "limit": None, "unit": None})).content == "x 5 fahrenheit"
    assert (await f.invoke({"q": "x", "limit": 2, "unit": "celsius"})).content == "x 2 celsius"


async def test_sync_tools_run_in_a_worker_thread_and_async_ones_in_the_loop():
    threads: dict[str, int] = {}

    @tool
    def sync_tool() -> None:
        """Sync."""
        threads["sync"] = threading.get_ident()

    @tool
    async def async_tool() -> None:
        """Async."""
        threads["async"] = threading.get_ident()

    await sync_tool.invoke({})
    await async_tool.invoke({})
    assert threads["async"] == threading.get_ident()
    assert threads["sync"] != threading.get_ident()


async def test_return_values_become_results():
    @tool
    def text() -> str:
        """Text."""
        return "héllo"

    @tool
    def nothing() -> None:
        """Nothing."""

    @tool
    def record() -> Report:
        """Record."""
        return Report(title="Q1", when=dt.date(2024, 3, 31), tags=frozenset({"x"}))

    @tool
    def mapping() -> dict[str, Any]:
        """Mapping."""
        return {"n": 1, "unit": Unit.C, "items": (1, 2)}

    @tool
    def explicit() -> ToolResult:
        """Explicit."""
        return ToolResult.ok("done", sources=[Source("https://example.org", "Ex")])

    assert (await text.invoke({})).content == "héllo"
    empty = await nothing.invoke({})
    assert empty.is_ok
    assert empty.content is None
    assert empty.data is None
    assert (await record.invoke({})).data == {"title": "Q1", "when": "2024-03-31", "tags": ["x"]}
    data = (await mapping.invoke({})).data
    assert data == {"n": 1, "unit": "celsius", "items": [1, 2]}
    assert (await explicit.invoke({})).sources == (Source("https://example.org", "Ex"),)
    assert (
        await record.invoke({})
    ).model_text() == '{"title": "Q1", "when": "2024-03-31", "tags": ["x"]}'


async def test_a_return_value_that_is_not_json_is_an_error_result():
    @tool
    def odd() -> object:
        """Odd."""
        return object()

    result = await odd.invoke({})
    assert result.status is ToolStatus.ERROR
    assert "returned a object that cannot be sent as JSON" in (result.content or "")


async def test_tool_blocked_becomes_a_blocked_result():
    @tool
    def guarded(url: str) -> str:
        """Guarded."""
        raise ToolBlocked(f"{url} is on a private network", retryable=False)

    result = await guarded.invoke({"url": "http://10.0.0.1"})
    assert result.status is ToolStatus.BLOCKED
    assert result.content == "http://10.0.0.1 is on a private network"
    assert isinstance(result.exception, ToolBlocked)


async def test_exceptions_become_error_results_keeping_the_exception():
    @tool
    async def divide(a: int, b: int) -> float:
        """Divide."""
        return a / b

    result = await divide.invoke({"a": 1, "b": 0})
    assert result.status is ToolStatus.ERROR
    assert result.content == "Tool execution failed: ZeroDivisionError: division by zero"
    assert isinstance(result.exception, ZeroDivisionError)


async def test_error_texts_do_not_leak_sensitive_arguments():
    @tool(sensitive_arguments=["password"])
    def login(user: str, password: str) -> None:
        """Log in."""
        raise PermissionError(f"bad password {password} for {user}")

    result = await login.invoke({"user": "ann", "password": "hunter22"})
    assert (
        result.content == "Tool execution failed: PermissionError: bad password [redacted] for ann"
    )


async def test_invalid_arguments_become_an_error_result_with_the_refusals():
    @tool
    def f(n: int) -> None:
        """F."""

    result = await f.invoke({"n": "five"})
    assert result.status is ToolStatus.ERROR
    assert (
        result.content
        == 'Invalid arguments for tool f: n: got "five" (string); expected an integer.'
    )


async def test_cancellation_propagates():
    started = asyncio.Event()

    @tool
    async def slow() -> None:
        """Slow."""
        started.set()
        await asyncio.sleep(30)

    task = asyncio.create_task(slow.invoke({}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_context_is_injected_and_model_values_under_hidden_names_are_ignored():
    seen: list[ToolContext] = []

    @tool
    def f(q: str, ctx: ToolContext) -> str:
        """F."""
        seen.append(ctx)
        ctx.report_progress("half", 0.5)
        return q

    progress: list[tuple[str, float | None]] = []
    ctx = context(f, progress=lambda message, fraction: progress.append((message, fraction)))
    result = await f.invoke({"q": "x", "ctx": "forged by the model"}, ctx)
    assert result.content == "x"
    assert seen == [ctx]
    assert progress == [("half", 0.5)]


async def test_injected_values_come_from_services_then_context_then_defaults():
    seen: dict[str, Any] = {}

    @tool
    def f(
        q: str,
        http: Injected[str],
        settings: Injected[dict[str, Any]],
        client: Annotated[str, Inject("db")],
        whole: Injected[ToolContext],
        optional: Injected[str] = "fallback",
    ) -> None:
        """F."""
        seen.update(http=http, settings=settings, client=client, whole=whole, optional=optional)

    ctx = context(f, services={"http": "HTTP", "db": "DB"}, settings={"k": 1})
    result = await f.invoke({"q": "x", "http": "forged", "client": "forged"}, ctx)
    assert result.is_ok, result.content
    assert seen == {
        "http": "HTTP",
        "settings": {"k": 1},
        "client": "DB",
        "whole": ctx,
        "optional": "fallback",
    }
    assert list(f.parameters["properties"]) == ["q"]


async def test_a_missing_service_is_an_error_naming_it():
    @tool
    def f(mailer: Injected[object]) -> None:
        """F."""

    result = await f.invoke({}, context(f, services={"http": 1}))
    assert result.status is ToolStatus.ERROR
    assert "needs the host service 'mailer'" in (result.content or "")
    assert "(services: http)" in (result.content or "")


async def test_cancellation_flag_is_visible_to_the_tool():
    @tool
    def f(ctx: ToolContext) -> str:
        """F."""
        return "stopped" if ctx.is_cancelled else "running"

    flag = asyncio.Event()
    assert (await f.invoke({}, context(f, cancelled=flag))).content == "running"
    flag.set()
    assert (await f.invoke({}, context(f, cancelled=flag))).content == "stopped"


def test_a_decorated_function_is_a_tool_and_still_callable():
    @tool
    def add(a: int, b: int = 2) -> int:
        """Add."""
        return a + b

    assert isinstance(add, Tool)
    assert add(1) == 3
    assert add(a=1, b=5) == 6
    assert add.__wrapped__ is not None


async def test_explicit_schema_handlers_get_the_raw_arguments():
    schema = {
        "type": "object",
        "properties": {"sql": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["sql"],
    }
    calls: list[Any] = []

    def one(arguments: Mapping[str, Any]) -> str:
        calls.append(dict(arguments))
        return "one"

    async def two(arguments: Mapping[str, Any], ctx: ToolContext) -> str:
        calls.append((dict(arguments), ctx.call_id))
        return "two"

    t1 = Tool.from_schema("q1", "Q.", schema, one)
    t2 = Tool.from_schema("q2", "Q.", schema, two)
    assert (await t1.invoke({"sql": "select 1", "limit": None})).content == "one"
    assert (await t2.invoke({"sql": "select 2"}, context(t2))).content == "two"
    assert calls == [{"sql": "select 1"}, ({"sql": "select 2"}, "c1")]
    assert t1({"sql": "direct"}) == "one"
    bad = await t1.invoke({"limit": 1})
    assert bad.status is ToolStatus.ERROR
    assert "sql: missing; it is required (a string)." in (bad.content or "")


async def test_external_tools_are_not_run_by_the_host():
    t = Tool.from_schema("ask_user", "Ask.", {"type": "object", "properties": {}}, external=True)
    result = await t.invoke({})
    assert result.status is ToolStatus.ERROR
    assert "run by the caller" in (result.content or "")
    with pytest.raises(TypeError, match="no implementation"):
        t()


def test_raw_arguments_are_the_providers_text_else_the_json_of_the_parsed_arguments():
    @tool
    def f(q: str) -> str:
        """Echo."""
        return q

    kept = context(f, raw_arguments='{ "q" : "é" }', call_arguments={"q": "other"})
    assert kept.raw_arguments == '{ "q" : "é" }'
    written = context(f, call_arguments={"q": "é", "n": [1, 2]})
    assert written.raw_arguments == '{"q":"é","n":[1,2]}'
    assert context(f).raw_arguments is None


async def test_json_scalars_are_the_data_as_returned_and_their_subclasses_are_unstructured():
    class Level(enum.IntEnum):
        HIGH = 3

    returned: list[Any] = [7, 2.5, True, Level.HIGH]

    @tool
    def value(i: int) -> Any:
        """Value."""
        return returned[i]

    results = [await value.invoke({"i": i}) for i in range(len(returned))]
    assert [(r.data, type(r.data)) for r in results] == [
        (7, int),
        (2.5, float),
        (True, bool),
        (3, int),
    ]
    assert [r.model_text() for r in results] == ["7", "2.5", "true", "3"]


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "worker"])
async def test_a_parameter_may_bear_the_name_of_the_runners_own(inline: bool):
    @tool(inline=inline)
    def echo(function: str, is_async: bool, inline: int) -> str:
        """Echo."""
        return f"{function} {is_async} {inline}"

    handled = Tool.from_schema(
        "handled",
        "Echo.",
        {"type": "object", "properties": {"function": {"type": "string"}}},
        lambda arguments: arguments["function"],
        inline=inline,
    )
    result = await echo.invoke({"function": "f", "is_async": True, "inline": 3})
    assert result.content == "f True 3"
    assert (await handled.invoke({"function": "g"})).content == "g"
