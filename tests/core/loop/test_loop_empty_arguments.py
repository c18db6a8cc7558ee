"""Empty argument text from the model: a tool that changes things is not run on its defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest
from loop_support import events_of, make_host, result_texts, run_script

import toolwire
from toolwire.messages import ToolCall
from toolwire.testing import tool_call

wiped: list[str] = []


@toolwire.tool(side_effects="destructive")
def wipe_all(scope: Annotated[str, "What to wipe."] = "all") -> str:
    """Wipe files."""
    wiped.append(scope)
    return f"wiped {scope}"


@toolwire.tool(side_effects="read_only", idempotent=True)
def list_files(folder: Annotated[str, "Which folder."] = ".") -> str:
    """List files."""
    return f"listed {folder}"


@toolwire.tool(side_effects="destructive")
def empty_trash() -> str:
    """Empty the trash."""
    wiped.append("trash")
    return "emptied"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    wiped.clear()


@pytest.mark.parametrize(
    "call",
    [
        tool_call("wipe_all", raw_arguments=""),  # text the loop repairs to {}
        ToolCall(id="", name="wipe_all", arguments={}, raw_arguments=""),  # as adapters give it
        ToolCall(id="", name="wipe_all", arguments={}, raw_arguments="  null "),
    ],
    ids=["unparsed", "parsed", "null"],
)
async def test_no_argument_text_for_a_tool_with_side_effects_is_a_refusal(
    tmp_path: Path, call: ToolCall
) -> None:
    host = make_host(tmp_path, [wipe_all])
    run = await run_script(host, [call, tool_call("wipe_all", {"scope": "all"}), "done"])
    assert wiped == ["all"]  # once: the model's second call, which named its arguments
    refusal = result_texts(run)[0]
    assert refusal.startswith("Not run: the call of wipe_all came without any argument text")
    assert 'send them: {"scope": "all"}' in refusal
    assert [e.reason for e in events_of(run, "invalid_arguments")][-1].startswith(
        "no argument text"
    )
    assert run.stop_reason == "answered"


@pytest.mark.parametrize(
    "call",
    [
        ToolCall(id="", name="list_files", arguments={}, raw_arguments=""),  # read only
        ToolCall(id="", name="empty_trash", arguments={}, raw_arguments=""),  # no parameters
        ToolCall(id="", name="wipe_all", arguments={}, raw_arguments="{}"),  # an explicit choice
        ToolCall(id="", name="wipe_all", arguments={}),  # an object from the wire (Anthropic)
    ],
    ids=["read-only", "no-parameters", "explicit", "object"],
)
async def test_a_call_that_means_its_defaults_runs(tmp_path: Path, call: ToolCall) -> None:
    host = make_host(tmp_path, [wipe_all, list_files, empty_trash])
    run = await run_script(host, [call, "done"])
    assert not result_texts(run)[0].startswith("Not run")
    assert not events_of(run, "invalid_arguments")


def test_adapters_keep_empty_argument_text_apart_from_an_empty_object() -> None:
    openai = pytest.importorskip("toolwire_openai")
    chat = openai.parse_chat_completion(
        {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "tool_calls": [
                            {"id": "a", "function": {"name": "wipe_all", "arguments": ""}},
                            {"id": "b", "function": {"name": "wipe_all", "arguments": "{}"}},
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    assert [(c.arguments, c.raw_arguments) for c in chat.tool_calls] == [({}, ""), ({}, "{}")]
    responses = openai.parse_response(
        {
            "output": [
                {"type": "function_call", "call_id": "a", "name": "wipe_all", "arguments": ""},
            ]
        }
    )
    assert [(c.arguments, c.raw_arguments) for c in responses.tool_calls] == [({}, "")]
