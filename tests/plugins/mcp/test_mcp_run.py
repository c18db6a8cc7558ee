"""A whole ``toolwire run`` calling an MCP tool and answering from its result: the scripted
model, and each native adapter over its loopback fake provider."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolwire.testing import (
    FakeAnthropicServer,
    FakeOpenAIChatServer,
    FakeOpenAIResponsesServer,
    tool_call,
)


def test_scripted_model_run(write_config, notes_stdio, tmp_path: Path):
    import subprocess

    script = (
        '\n[provider]\nadapter = "scripted"\n[provider.options]\nscript = [\n'
        '  { tool_calls = [{ name = "notes_add_numbers", arguments = { a = 2, b = 40 } }] },\n'
        '  "The sum is 42.",\n]\n'
    )
    config = write_config({"notes": notes_stdio()}, extra=script)
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "--config", str(config), "run", "--json", "add"],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert run["stop_reason"] == "answered"
    (call,) = run["tool_calls"]
    assert call["result"]["data"] == {"sum": 42}


@pytest.mark.parametrize(
    ("server_cls", "adapter", "plugin"),
    [
        (FakeOpenAIChatServer, "openai-chat", "openai"),
        (FakeOpenAIResponsesServer, "openai-responses", "openai"),
        (FakeAnthropicServer, "anthropic-messages", "anthropic"),
    ],
)
async def test_native_adapter_run(
    write_config, notes_stdio, toolwire_run, server_cls: Any, adapter: str, plugin: str
):
    server = server_cls([tool_call("notes_add_numbers", {"a": 2, "b": 40}), "The sum is 42."])
    async with server:
        provider = (
            f'\n[provider]\nadapter = "{adapter}"\nbase_url = "{server.base_url}"\n'
            'model = "test-model"\napi_key_env = "FAKE_PROVIDER_KEY"\n'
        )
        config = write_config({"notes": notes_stdio()}, plugins=("mcp", plugin), extra=provider)
        run = await toolwire_run(config, "What is 2 + 40?")
    assert run["stop_reason"] == "answered"
    first, second = server.bodies
    sent_tools = json.dumps(first["tools"])
    assert "notes_add_numbers" in sent_tools
    # The MCP result went back to the provider in its own wire shape.
    assert '\\"sum\\": 42' in json.dumps(second) or '"sum": 42' in json.dumps(second)
    assert "The sum is 42." in json.dumps(run)
