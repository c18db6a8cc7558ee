"""The loop against hostile input: which results the host wrote itself, the untrusted-content
backstop, call ids a provider repeats across rounds."""

from __future__ import annotations

from pathlib import Path

from loop_support import make_host, run_script

import toolwire
from toolwire.loop import Run
from toolwire.messages import SystemMessage, ToolResultMessage
from toolwire.testing import tool_call


@toolwire.tool
def echo(text: str) -> str:
    """Repeat the text."""
    return text


def _result_messages(run: Run) -> list[ToolResultMessage]:
    return [m for m in run.messages if isinstance(m, ToolResultMessage)]


async def test_results_the_host_wrote_are_marked_and_keep_the_mark(tmp_path: Path) -> None:
    host = make_host(tmp_path, [echo])
    run = await run_script(
        host,
        [
            [
                tool_call("echo", {"text": "a"}, id="ran"),
                tool_call("fetch", {"url": "https://x.example/"}, id="unknown"),
                tool_call("echo", {"text": 3}, id="invalid"),
                tool_call("echo", {"text": "a"}, id="duplicate"),
            ],
            "done",
        ],
    )
    marks = {m.call_id: m.by_host for m in _result_messages(run)}
    assert marks == {"ran": False, "unknown": True, "invalid": True, "duplicate": True}
    again = Run.from_json(run.to_json())
    assert {m.call_id: m.by_host for m in _result_messages(again)} == marks


async def test_a_tool_reads_the_system_prompt_first_in_its_conversation(tmp_path: Path) -> None:
    seen: list[object] = []

    @toolwire.tool
    def look(context: toolwire.ToolContext) -> str:
        """Look at the conversation."""
        seen.extend(context.messages)
        return "looked"

    host = make_host(tmp_path, [look])
    await run_script(host, [[tool_call("look")], "done"], system_prompt="Be brief.")
    assert seen[0] == SystemMessage("Be brief.")
