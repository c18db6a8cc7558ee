"""``toolwire run`` and ``toolwire batch`` collect young objects less often while their
conversations go, and leave the collector as they found it; `toolwire run` starts the tool
thread before its first request."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path

import pytest

from toolwire.cli import _collector, main
from toolwire.testing import ScriptedModel


def test_settling_freezes_start_up_and_raises_the_young_threshold_until_the_block_ends() -> None:
    before = gc.get_threshold()
    inside: list[tuple[tuple[int, int, int], int]] = []

    def command() -> None:
        with _collector.collector_for_runs() as settle:
            inside.append((gc.get_threshold(), gc.get_freeze_count()))
            settle()
            inside.append((gc.get_threshold(), gc.get_freeze_count()))
            raise RuntimeError("a command that fails")

    with pytest.raises(RuntimeError):
        command()
    assert inside[0] == (before, 0)  # nothing changes before start-up is over
    assert inside[1][0] == (_collector.YOUNG_THRESHOLD, *before[1:])
    assert inside[1][1] > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_run_goes_with_the_collector_settled_and_puts_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[tuple[int, int, int], int]] = []
    complete = ScriptedModel.complete

    async def noting(self: ScriptedModel, request: object, emit: object) -> object:
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return await complete(self, request, emit)  # type: ignore[arg-type]

    monkeypatch.setattr(ScriptedModel, "complete", noting)
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[provider]\nadapter = "scripted"\noptions = { script = ["Hello."] }\n'
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    before = gc.get_threshold()
    assert main(["--config", str(config), "run", "--json", "hi"]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == "Hello."
    assert seen[0][0][0] == _collector.YOUNG_THRESHOLD
    assert seen[0][1] > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_run_with_tools_starts_the_tool_thread_before_the_first_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    threads_at_first_request: list[int] = []
    complete = ScriptedModel.complete

    async def noting(self: ScriptedModel, request: object, emit: object) -> object:
        if not threads_at_first_request:
            pool = asyncio.get_running_loop()._default_executor  # type: ignore[attr-defined]
            threads_at_first_request.append(len(pool._threads) if pool is not None else 0)
        return await complete(self, request, emit)  # type: ignore[arg-type]

    monkeypatch.setattr(ScriptedModel, "complete", noting)
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["basics"]\n[tools.basics]\noffer = "always"\n'
        '[provider]\nadapter = "scripted"\n'
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    assert main(["--config", str(config), "run", "--json", "6 * 7?"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert "calculator" in [call["tool"] for call in run["tool_calls"]]
    assert threads_at_first_request == [1]
