"""``[ledger] url``: runs on a shared PostgreSQL ledger, and the errors of its setting."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from loop_resume_tools import (
    RUN_ID,
    SCRIPT,
    approve_in_a_child_killed_at,
    effects,
    make_config,
    plugin,
)

from toolwire import Host
from toolwire.config import ConfigError, LedgerConfig, config_from_dict
from toolwire.loop import Approve, Ledger, LedgerError, ToolCallingLoop
from toolwire.testing import ScriptedModel


def _loop(workdir: Path, url: str) -> ToolCallingLoop:
    host = Host.load(config=make_config(workdir, url), plugins=[plugin(workdir)])
    return ToolCallingLoop(host, adapter=ScriptedModel(script=SCRIPT))


async def test_a_run_killed_on_one_worker_is_resumed_on_another(
    tmp_path: Path, postgres_url: str
) -> None:
    first = await _loop(tmp_path, postgres_url).run("charge 7, then wait", run_id=RUN_ID)
    assert first.stop_reason == "deferred"
    (tmp_path / "block-charge").write_text("")
    approve_in_a_child_killed_at(tmp_path, "charge.started", postgres_url)
    (tmp_path / "block-charge").unlink()
    assert effects(tmp_path) == ["charge"]

    other = _loop(tmp_path, postgres_url)  # another worker, its own connection
    assert other.ledger is not None
    assert other.ledger.location == postgres_url
    loaded = other.load(RUN_ID)
    assert [(d.tool, d.reason) for d in loaded.deferred] == [("charge", "interrupted")]
    again = await other.resume(first, {first.deferred[0].call_id: Approve()})  # stale
    assert effects(tmp_path) == ["charge"]
    assert again.stop_reason == "deferred"
    done = await other.resume(other.load(RUN_ID), {first.deferred[0].call_id: Approve()})
    assert done.stop_reason == "answered"
    assert effects(tmp_path) == ["charge", "charge", "wait"]
    assert _loop(tmp_path, postgres_url).load(RUN_ID).to_json(events=False) == done.to_json(
        events=False
    )
    assert not (tmp_path / "ledger.sqlite3").exists()  # the url wins over the path


def test_a_url_that_is_not_postgresql_names_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"ledger\.url.*expected a 'postgresql://…' URL"):
        config_from_dict({"ledger": {"url": "mysql://u:secret@db/x"}})
    with pytest.raises(ConfigError) as raised:
        config_from_dict({"ledger": {"url": "mysql://u:secret@db/x"}})
    assert "secret" not in str(raised.value)


def test_a_missing_driver_names_the_setting_and_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed
    url = "postgresql://worker:hunter2@db.internal/toolwire"
    with pytest.raises(LedgerError) as raised:
        Ledger.open(LedgerConfig(url=url))
    message = str(raised.value)
    assert isinstance(raised.value, ConfigError)  # the CLI reports it as a config error
    assert raised.value.path == "$.ledger.url"
    assert "[ledger] url = 'postgresql://worker:***@db.internal/toolwire'" in message
    assert "pip install 'toolwire[postgres]'" in message
    assert "hunter2" not in message


def test_an_unreachable_server_is_named_in_the_error() -> None:
    ledger = Ledger.open(LedgerConfig(url="postgresql://nobody:pw@127.0.0.1:1/none"))
    assert ledger.location == "postgresql://nobody:***@127.0.0.1:1/none"
    with pytest.raises(Exception, match=r"127\.0\.0\.1"):
        ledger.started("r", 1, "c", "charge", {}, idempotent=False)
