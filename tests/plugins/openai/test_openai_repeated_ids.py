"""A host that numbers its tool calls afresh each round (``call_0`` every time): the run keeps
one id per call, and the wire keeps the host's own."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

import toolwire
import toolwire_openai._plugin as openai_plugin
from toolwire import Host
from toolwire.config import config_from_dict
from toolwire.testing import FakeOpenAIChatServer, tool_call


@toolwire.tool(idempotent=False)
def note(text: str) -> str:
    """Write a note."""
    return f"noted {text}"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_call_ids_repeated_each_round_stay_the_hosts_on_the_wire(
    tmp_path: Path, stream: bool
) -> None:
    script = [
        [tool_call("note", {"text": "a"}, id="call_0")],
        [tool_call("note", {"text": "b"}, id="call_0")],
        "done",
    ]
    tools = types.SimpleNamespace(
        __name__="notes", toolwire_tools=toolwire.hookimpl(lambda settings: [note])
    )
    async with FakeOpenAIChatServer(script) as server:
        config = config_from_dict(
            {
                "plugins": {"enable": ["openai"]},
                "provider": {
                    "adapter": "openai-chat",
                    "base_url": server.base_url,
                    "model": "m",
                    "stream": stream,
                },
                "ledger": {"path": str(tmp_path / "ledger.sqlite3")},
            }
        )
        host = Host.load(config, plugins=[openai_plugin, tools])
        async with host:
            run = await host.run("note a, then b")
        last = server.requests[-1].body["messages"]
    assert run.stop_reason == "answered"
    assert [r.call.id for r in run.tool_calls] == ["call_0", "call_0_r2"]
    assert [r.outcome for r in run.tool_calls] == ["executed", "executed"]
    sent_calls = [
        c["id"] for m in last if m["role"] == "assistant" for c in m.get("tool_calls", [])
    ]
    answered = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    assert sent_calls == ["call_0", "call_0"]
    assert answered == ["call_0", "call_0"]
    assert [m["content"] for m in last if m["role"] == "tool"] == ["noted a", "noted b"]
