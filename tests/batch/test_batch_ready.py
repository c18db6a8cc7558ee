"""An in-process batch makes the host's adapter once, before its first run starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import Host
from toolwire.batch import BatchPlan, run_batch
from toolwire.config import config_from_dict


async def test_the_adapter_is_made_before_the_first_run(tmp_path: Path) -> None:
    config = config_from_dict(
        {
            "provider": {"adapter": "scripted", "options": {"script": ["Hello."]}},
            "ledger": {"path": str(tmp_path / "ledger.sqlite3")},
        }
    )
    host = Host.load(config)
    made: list[Any] = []
    create = host.create_adapter

    def counting(api: str | None = None) -> Any:
        made.append(api)
        return create(api)

    host.create_adapter = counting  # type: ignore[method-assign]
    source = tmp_path / "in.jsonl"
    source.write_text(
        "".join(json.dumps({"id": str(i), "prompt": "Hi"}) + "\n" for i in range(3)),
        encoding="utf-8",
    )
    made_at_start: list[list[Any]] = []
    try:
        summary = await run_batch(
            host,
            source,
            tmp_path / "out.jsonl",
            plan=BatchPlan(concurrency=3),
            on_start=lambda progress: made_at_start.append(list(made)),
        )
    finally:
        await host.aclose()
    assert summary.done == 3
    assert made_at_start == [[None]]
    assert made == [None]


async def test_the_schema_compiler_is_loaded_before_the_first_run_when_tools_are_offered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolwire.tools._validation as validation

    loaded: list[str] = []
    load = validation.load_compiler

    def counting() -> None:
        loaded.append("compiler")
        load()

    monkeypatch.setattr(validation, "load_compiler", counting)
    config = config_from_dict(
        {
            "plugins": {"enable": ["basics"]},
            "provider": {"adapter": "scripted"},  # it calls every offered tool, then answers
            "tools": {"basics": {"offer": "always"}},
            "ledger": {"path": str(tmp_path / "ledger.sqlite3")},
        }
    )
    host = Host.load(config)
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "1", "prompt": "6 * 7?"}) + "\n", encoding="utf-8")
    loaded_at_start: list[list[str]] = []
    try:
        summary = await run_batch(
            host,
            source,
            tmp_path / "out.jsonl",
            plan=BatchPlan(concurrency=1),
            on_start=lambda progress: loaded_at_start.append(list(loaded)),
        )
    finally:
        await host.aclose()
    assert summary.done == 1
    assert loaded_at_start == [["compiler"]]
    record = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8"))
    assert "calculator" in [call["tool"] for call in record["tool_calls"]]


async def test_the_ledger_is_asked_once_for_every_job_and_only_held_runs_are_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolwire.loop import Ledger, Run, ToolCallingLoop

    config = config_from_dict(
        {
            "provider": {"adapter": "scripted", "options": {"script": ["Hello."] * 4}},
            "ledger": {"path": str(tmp_path / "ledger.sqlite3")},
        }
    )
    source = tmp_path / "in.jsonl"
    source.write_text(
        "".join(json.dumps({"id": str(i), "prompt": "Hi"}) + "\n" for i in range(4)),
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    # A run of job 2 the ledger already holds (as a batch killed after it ended leaves it).
    from toolwire.batch._jobs import batch_key, job_run_id

    held = job_run_id(batch_key(out), "2")
    host = Host.load(config)
    loop = host.new_loop()
    assert isinstance(loop, ToolCallingLoop)
    assert loop.ledger is not None
    loop.ledger.save_run(Run(id=held, messages=(), stop_reason="answered", text="Kept."))
    loads: list[str] = []
    queries: list[int] = []
    load, stored_runs = ToolCallingLoop.load, Ledger.stored_runs

    def loading(self: ToolCallingLoop, run_id: str) -> Run:
        loads.append(run_id)
        return load(self, run_id)

    def asking(self: Ledger, run_ids: Any) -> set[str]:
        queries.append(len(run_ids))
        return stored_runs(self, run_ids)

    monkeypatch.setattr(ToolCallingLoop, "load", loading)
    monkeypatch.setattr(Ledger, "stored_runs", asking)
    try:
        summary = await run_batch(host, source, out, plan=BatchPlan(concurrency=2))
    finally:
        await host.aclose()
    assert summary.done == 4
    assert queries == [4]
    assert loads == [held]
    records = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert records["2"]["text"] == "Kept."
    assert records["2"]["resumed"] is True
