"""Sensitive arguments are redacted by the tool a call resolved to, whatever spelling the model
used for its name (``Login`` for ``login``, a wire alias), in every output of the run: its JSON,
its events, the JSONL trace, ``toolwire run --json`` and batch records; and a refusal never
repeats a sensitive value. (Request bodies, OpenTelemetry and the web chat have theirs with
their plugins' tests.)"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from loop_support import tools_plugin

import toolwire
from toolwire import Config, Host
from toolwire.batch import BatchJob, JobSettings, run_job
from toolwire.cli._render import run_cli
from toolwire.config import LedgerConfig, TraceConfig
from toolwire.loop import Run, ToolCallingLoop
from toolwire.messages import ToolResultMessage
from toolwire.testing import ScriptedModel, tool_call

CANARY = "CANARY-pw-7731"


@toolwire.tool(sensitive_arguments=["password"])
def login(user: str, password: str) -> str:
    """Log in.

    Args:
        user: Who.
        password: Their password.
    """
    return f"welcome {user}"


@toolwire.tool(sensitive_arguments=["code"])
def vault(code: str) -> str:
    """Open the vault.

    Args:
        code: The code.
    """
    return "open"


def _host(tmp_path: Path, script: list[Any]) -> Host:
    config = Config(
        ledger=LedgerConfig(path=str(tmp_path / "ledger.sqlite3")),
        trace=TraceConfig(path=str(tmp_path / "trace.jsonl")),
    )
    host = Host.load(config=config, plugins=[tools_plugin(login, vault)])
    model = ScriptedModel(script=script)

    async def get_adapter() -> Any:
        return model

    host.get_adapter = get_adapter  # type: ignore[method-assign]
    return host


SPELLINGS = ["Login", "LOGIN"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("name", SPELLINGS)
async def test_a_renamed_call_runs_and_is_redacted_in_its_events_and_trace(
    tmp_path: Path, name: str, stream: bool
) -> None:
    host = _host(tmp_path, [tool_call(name, {"user": "ann", "password": CANARY}), "In."])
    run = await ToolCallingLoop(host).run("log in", stream=stream)
    assert run.stop_reason == "answered"
    [record] = run.tool_calls
    assert (record.call.name, record.tool, record.outcome) == (name, "login", "executed")
    events = json.dumps(run.to_json()["events"])
    assert CANARY not in events
    assert '"password": "[redacted]"' in events
    assert CANARY not in (tmp_path / "trace.jsonl").read_text()


@pytest.mark.parametrize("name", SPELLINGS)
def test_a_renamed_call_is_redacted_in_run_json(tmp_path: Path, name: str) -> None:
    host = _host(tmp_path, [tool_call(name, {"user": "ann", "password": CANARY}), "In."])
    out = io.StringIO()
    assert run_cli(host, "log in", json_output=True, stdin=io.StringIO(), stdout=out) == 0
    data = json.loads(out.getvalue())
    assert data["tool_calls"][0]["tool"] == "login"
    assert CANARY not in out.getvalue()


async def test_a_renamed_call_is_redacted_in_a_batch_record(tmp_path: Path) -> None:
    host = _host(tmp_path, [tool_call("Login", {"user": "ann", "password": CANARY}), "In."])
    job = BatchJob(id="j1", line=1, run_id="batch_j1", prompt="log in")
    record = await run_job(host, job, JobSettings())
    assert record["stop_reason"] == "answered"
    assert CANARY not in json.dumps(record)


async def test_a_refusal_of_a_registered_tool_not_offered_hides_its_sensitive_value(
    tmp_path: Path,
) -> None:
    """The model calls ``vault``, which is registered but not offered this run: the refusal
    names the tool and the offered ones and says what arrived, without the sensitive value."""
    host = _host(tmp_path, [tool_call("vault", {"code": CANARY}), "Sorry."])
    run = await ToolCallingLoop(host).run("open it", tools=["login"])
    assert run.stop_reason == "answered"
    [answer] = [m for m in run.messages if isinstance(m, ToolResultMessage)]
    text = answer.result.content or ""
    assert text.startswith("Unknown tool 'vault' (called with arguments ")
    assert text.endswith("Available tools: login.")
    assert '"code": "[redacted]"' in text
    assert CANARY not in json.dumps(_redacted_json(run, host))
    assert CANARY not in (tmp_path / "trace.jsonl").read_text()


def _redacted_json(run: Run, host: Host) -> dict[str, Any]:
    def sensitive(name: str) -> frozenset[str]:
        tool = host.tools.get(name)
        return tool.sensitive_arguments if tool is not None else frozenset()

    return run.to_json(redact=sensitive)
