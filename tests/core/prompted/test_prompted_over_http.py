"""The new dialects over a real wire: the openai-chat adapter against the fake Chat Completions
server of ``toolwire.testing``, streamed, with a dialect per tool."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated

import pytest

import toolwire
from toolwire import Config, Host
from toolwire.config import LedgerConfig, PluginsConfig, ProviderConfig
from toolwire.events import ToolCallCompleted
from toolwire.testing import FakeOpenAIChatServer


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_typescript_and_python_tools_over_chat_completions(
    tmp_path: Path, stream: bool
) -> None:
    seen: list[tuple[str, object]] = []

    @toolwire.tool
    def lookup(city: Annotated[str, "A city."], days: Annotated[int, "How many days."] = 1) -> str:
        """The forecast for a city."""
        seen.append(("lookup", (city, days)))
        return f"{city}: sunny for {days} days"

    @toolwire.tool
    def note(text: Annotated[str, "What to remember."], pinned: bool = False) -> str:
        """Remember a line."""
        seen.append(("note", (text, pinned)))
        return "noted"

    plugin = types.SimpleNamespace(
        __name__="over_http", toolwire_tools=toolwire.hookimpl(lambda settings: [lookup, note])
    )
    script = [
        "Checking.\nlookup(\"Lyon\", 3);\nnote('trip to Lyon', pinned=True)",
        "Sunny in Lyon; noted.",
    ]
    async with FakeOpenAIChatServer(script, chunk_size=5) as server:
        config = Config(
            plugins=PluginsConfig(enable=("openai",)),
            provider=ProviderConfig(
                adapter="openai-chat",
                base_url=server.base_url,
                model="small",
                native_tools=False,
                tool_dialect="typescript",
                tool_dialects={"note": "python"},
                stream=stream,
            ),
            ledger=LedgerConfig(enabled=False, path=str(tmp_path / "ledger.sqlite3")),
        )
        host = Host.load(config=config, plugins=[plugin])
        try:
            run = await host.run("Weather in Lyon for three days, and remember the trip.")
        finally:
            await host.aclose()
    assert run.stop_reason == "answered", run.detail
    assert run.text == "Sunny in Lyon; noted."
    assert seen == [("lookup", ("Lyon", 3)), ("note", ("trip to Lyon", True))]
    first, second = server.bodies
    assert "tools" not in first
    system = first["messages"][0]["content"]
    assert "### Tools called in TypeScript\nlookup(city: string, days?: number)" in system
    assert "### Tools called in Python\nnote(text: str, pinned: bool = False)" in system
    # The calls come back as the model wrote them, the results as one user turn.
    assistant, results = second["messages"][-2:]
    assert assistant == {
        "role": "assistant",
        "content": "Checking.\nlookup(\"Lyon\", 3)\nnote('trip to Lyon', pinned=True)",
    }
    assert results["role"] == "user"
    assert results["content"].startswith("[Tool results]\n<tool_result id=")
    if stream:
        completed = [e.call.name for e in run.events if isinstance(e, ToolCallCompleted)]
        assert completed == ["lookup", "note"]
