"""A whole ``toolwire run --json`` in a child process, against a loopback fake provider."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolwire.testing import FakeOpenAIChatServer

KEY_ENV = "FAKE_PROVIDER_KEY"


def provider_table(server: FakeOpenAIChatServer) -> str:
    """The ``[provider]`` table that points ``toolwire run`` at ``server``."""
    return (
        f'\n[provider]\nadapter = "openai-chat"\nbase_url = "{server.base_url}"\n'
        f'model = "test-model"\napi_key_env = "{KEY_ENV}"\n'
    )


async def toolwire_run(
    config: Path,
    prompt: str,
    *,
    env: Mapping[str, str] | None = None,
    options: tuple[str, ...] = (),
    exit_code: int = 0,
) -> dict[str, Any]:
    """Run ``toolwire --config CONFIG run --json [OPTIONS] PROMPT``, check it exits with
    ``exit_code`` and return the run it prints."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "toolwire",
        "--config",
        str(config),
        "run",
        "--json",
        *options,
        prompt,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=config.parent,
        env={**os.environ, KEY_ENV: "sk-test", **(env or {})},
    )
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode == exit_code, err.decode()
    run: dict[str, Any] = json.loads(out)
    return run


def sent_results(body: Mapping[str, Any]) -> list[str]:
    """The tool results a Chat Completions request sends back, in order."""
    return [m["content"] for m in body["messages"] if m.get("role") == "tool"]
