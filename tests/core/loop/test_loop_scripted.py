"""The scripted test model: scripts, functions, schema-driven mode, config, streaming."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from loop_support import events_of, make_host, run_script

import toolwire
from toolwire import Config, Host
from toolwire.adapters import ModelRequest, ProviderError
from toolwire.config import LedgerConfig, ProviderConfig
from toolwire.messages import AssistantMessage, TextPart, ThinkingPart, ToolCall
from toolwire.testing import ScriptedModel, example_arguments, tool_call


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@toolwire.tool
def paint(
    color: Color,
    shade: Literal["light", "dark"],
    coats: Annotated[int, "How many coats."],
    note: str | None = None,
    areas: list[str] | None = None,
) -> str:
    """Paint something."""
    return f"{coats} {shade} coats of {color.value}"


@toolwire.tool
def weigh(grams: float, exact: bool) -> str:
    """Weigh something."""
    return f"{grams} g"


async def test_schema_driven_mode_calls_every_tool_then_answers(tmp_path: Path) -> None:
    host = make_host(tmp_path, [paint, weigh])
    loop_model = ScriptedModel()
    from toolwire.loop import ToolCallingLoop

    run = await ToolCallingLoop(host, adapter=loop_model).run("try everything")
    assert run.stop_reason == "answered"
    assert [r.status for r in run.tool_calls] == ["ok", "ok"]
    assert [r.tool for r in run.tool_calls] == ["paint", "weigh"]
    assert run.text.splitlines() == [
        "Tool results:",
        "- paint (ok): 1 light coats of red",
        "- weigh (ok): 1.0 g",
    ]


async def test_config_options_give_the_script(tmp_path: Path) -> None:
    config = Config(
        provider=ProviderConfig(
            options={
                "script": [
                    {
                        "thinking": "add them",
                        "tool_calls": [
                            {"name": "weigh", "arguments": {"grams": 2, "exact": True}},
                            {
                                "name": "weigh",
                                "raw_arguments": "{grams: 3, exact: false}",
                                "id": "mine",
                            },
                        ],
                    },
                    "Two and three grams.",
                ]
            }
        ),
        ledger=LedgerConfig(enabled=False),
    )
    from loop_support import tools_plugin

    host = Host.load(config=config, plugins=[tools_plugin(weigh)])
    model = host.adapter_classes()["scripted"](config.provider)
    from toolwire.loop import ToolCallingLoop

    run = await ToolCallingLoop(host, adapter=model).run("weigh")
    assert run.text == "Two and three grams."
    assert [r.call.id for r in run.tool_calls] == ["call_1_0", "mine"]
    assert [r.arguments for r in run.tool_calls] == [
        {"grams": 2, "exact": True},
        {"grams": 3, "exact": False},
    ]
    assert isinstance(run.messages[1], AssistantMessage)
    assert run.messages[1].parts[0] == ThinkingPart(text="add them")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"script": "hello"}, "expected a list of turns"),
        ({"script": [{"txt": "x"}]}, r"options.script\[0\]: unknown key\(s\) txt"),
        ({"script": [{"tool_calls": [{"arguments": {}}]}]}, r"tool_calls\[0\].name = None"),
        ({"mode": "chaos"}, "expected 'script' or 'schema'"),
        ({"mode": "script"}, "needs options.script"),
        ({"speed": 1}, "unknown key"),
    ],
)
def test_bad_options_are_refused_by_name(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ScriptedModel(ProviderConfig(options=options))


async def test_a_function_of_the_request(tmp_path: Path) -> None:
    seen: list[int] = []

    async def respond(request: ModelRequest) -> Any:
        seen.append(len(request.messages))
        if request.round == 1:
            return [tool_call("weigh", {"grams": 1, "exact": False})]
        return AssistantMessage(parts=(TextPart("light"),))

    run = await run_script(make_host(tmp_path, [weigh]), respond)
    assert run.text == "light"
    assert seen == [1, 3]


async def test_script_running_out_is_a_provider_error(tmp_path: Path) -> None:
    run = await run_script(
        make_host(tmp_path, [weigh]), [tool_call("weigh", {"grams": 1, "exact": True})]
    )
    assert run.stop_reason == "error"
    assert "the script has 1 turn(s) and the conversation asks for turn 2" in (run.detail or "")
    assert isinstance(run.error, ProviderError)


async def test_streaming_emits_text_and_tool_call_events(tmp_path: Path) -> None:
    host = make_host(tmp_path, [weigh])
    script = [
        AssistantMessage(
            parts=(TextPart("Weighing now."), tool_call("weigh", {"grams": 12.5, "exact": True}))
        ),
        "Done.",
    ]
    run = await run_script(host, script, stream=True)
    assert "".join(e.text for e in events_of(run, "text_delta")) == "Weighing now.Done."
    [started] = events_of(run, "tool_call_started")
    assert (started.call_id, started.name) == ("call_1_0", "weigh")
    deltas = events_of(run, "tool_call_arguments_delta")
    assert "".join(d.delta for d in deltas) == '{"grams":12.5,"exact":true}'
    # The run keeps the delta texts; the live partial value is only for observers at emit time.
    assert all(d.partial_arguments is None for d in deltas)
    [completed] = events_of(run, "tool_call_completed")
    assert isinstance(completed.call, ToolCall)
    assert completed.call.arguments == {"grams": 12.5, "exact": True}
    assert all(e.round is not None for e in deltas)


def test_tool_call_refuses_both_argument_forms() -> None:
    with pytest.raises(ValueError, match="not both"):
        tool_call("x", {"a": 1}, raw_arguments="{}")


SCHEMAS = [
    {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 9}},
        "required": ["n"],
    },
    {
        "type": "object",
        "properties": {"x": {"type": "number", "exclusiveMinimum": 2}},
        "required": ["x"],
    },
    {"type": "object", "properties": {"s": {"type": "string", "minLength": 12}}, "required": ["s"]},
    {"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}, "required": ["s"]},
    {"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}, "required": ["u"]},
    {"type": "object", "properties": {"c": {"const": "fixed"}}, "required": ["c"]},
    {"type": "object", "properties": {"e": {"enum": [None, "b"]}}, "required": ["e"]},
    {
        "type": "object",
        "properties": {"v": {"anyOf": [{"type": "null"}, {"type": "boolean"}]}},
        "required": ["v"],
    },
    {
        "type": "object",
        "properties": {
            "l": {"type": "array", "items": {"type": "string"}, "minItems": 2, "uniqueItems": True}
        },
        "required": ["l"],
    },
    {
        "type": "object",
        "properties": {"o": {"$ref": "#/$defs/Point"}},
        "required": ["o"],
        "$defs": {
            "Point": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
        },
    },
    {"type": "object", "properties": {"d": {"type": "integer", "default": 4}}},
    {
        "type": "object",
        "properties": {"m": {"type": "integer", "multipleOf": 5}},
        "required": ["m"],
    },
    {
        "type": "object",
        "properties": {"p": {"type": "string", "pattern": "^[0-9]+$"}},
        "required": ["p"],
    },
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_example_arguments_are_valid(schema: dict[str, Any]) -> None:
    import fastjsonschema

    arguments = example_arguments(schema)
    fastjsonschema.compile(schema)(arguments)


@settings(max_examples=30, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{1,8}", fullmatch=True),
        st.sampled_from(
            [
                {"type": "string"},
                {"type": "integer", "minimum": -3},
                {"type": "number"},
                {"type": "boolean"},
                {"type": "array", "items": {"type": "integer"}},
                {"type": ["string", "null"]},
                {"enum": ["a", "b"]},
                {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]},
            ]
        ),
        max_size=5,
    ),
    st.data(),
)
def test_example_arguments_fit_generated_schemas(properties: dict[str, Any], data: Any) -> None:
    import fastjsonschema

    required = data.draw(
        st.lists(st.sampled_from(sorted(properties)), unique=True) if properties else st.just([])
    )
    schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    arguments = example_arguments(schema)
    assert set(arguments) == set(required)
    fastjsonschema.compile(schema)(arguments)
