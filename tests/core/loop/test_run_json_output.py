"""``toolwire run --json`` writes the run in one piece, and a run's repr stays one line."""

from __future__ import annotations

import asyncio
import datetime
import io
import json
import math
from pathlib import Path
from typing import Annotated, Any

from loop_support import make_host

import toolwire
from toolwire._json.fast import json_bytes, json_text
from toolwire.cli._render import run_cli
from toolwire.config import LoopConfig, ProviderConfig


@toolwire.tool(side_effects="read_only", idempotent=True, allow_duplicates=True)
def add(a: Annotated[int, "First."], b: Annotated[int, "Second."]) -> int:
    """Add two integers."""
    return a + b


class CountingOutput(io.StringIO):
    """stdout that counts the writes it gets."""

    writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return super().write(text)


def _host(tmp_path: Path, rounds: int) -> toolwire.Host:
    script: list[Any] = [
        {"tool_calls": [{"name": "add", "arguments": {"a": i, "b": 1}}]} for i in range(rounds)
    ]
    provider = ProviderConfig(adapter="scripted", options={"script": [*script, "Added."]})
    loop = LoopConfig(max_rounds=rounds + 1, max_tool_calls=rounds)
    return make_host(tmp_path, [add], provider=provider, loop=loop)


def test_the_run_is_written_in_one_piece(tmp_path: Path) -> None:
    out = CountingOutput()
    code = run_cli(_host(tmp_path, 30), "add", json_output=True, stdin=io.StringIO(), stdout=out)
    assert code == 0
    assert out.writes == 1
    text = out.getvalue()
    assert text.endswith("}\n")
    data = json.loads(text)
    assert data["stop_reason"] == "answered"
    assert len(data["tool_calls"]) == 30
    # Indented by two spaces, as json.dump(..., indent=2) writes it.
    assert text.startswith('{\n  "id": "run_')


def test_a_long_run_has_a_short_repr(tmp_path: Path) -> None:
    host = _host(tmp_path, 40)
    run = asyncio.run(host.run("add"))
    asyncio.run(host.aclose())
    shown = repr(run)
    assert shown.startswith(f"Run(id={run.id!r}, stop_reason='answered', rounds=41,")
    assert "tool_calls=40" in shown
    assert len(shown) < 300


def test_json_the_fast_encoder_refuses_gets_the_standard_answer() -> None:
    # Values orjson refuses: an integer past 64 bits, a key that is not a string, a lone
    # surrogate.
    for value in ({"n": 2**70}, {1: "one", None: "none"}, {"s": "\ud800"}):
        assert json_bytes(value) == json.dumps(value).encode("ascii")
        assert json_text(value, indent=True) == json.dumps(
            value, ensure_ascii=False, indent=2, default=str
        )
    # What it takes, it writes as the standard encoder would (non-ASCII kept in text).
    value = {"text": "résumé 東京 😀", "list": [1, 2.5, True, None], "empty": {}, "none": []}
    assert json.loads(json_bytes(value)) == value
    assert json_text(value, indent=True) == json.dumps(value, ensure_ascii=False, indent=2)
    assert json_text(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # Anything without a JSON form is written as its str; a float that is not finite as null.
    assert json_text({"path": Path("/tmp")}) == '{"path":"/tmp"}'
    when = datetime.datetime(2026, 1, 2, 3, 4, 5)
    assert json_text({"when": when}) == json.dumps({"when": str(when)}, separators=(",", ":"))
    assert json_text({"x": math.nan}) == '{"x":null}'
