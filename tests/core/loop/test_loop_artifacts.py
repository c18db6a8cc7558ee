"""[artifacts] dir: the artifacts of tool results written to files, referenced from the result,
the run record and the ledger; never shown to the model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from sqlite_files import sqlite_file

import toolwire
from toolwire import Config, Host
from toolwire.config import ArtifactsConfig, ConfigError, LedgerConfig, config_from_dict
from toolwire.loop import ToolCallingLoop
from toolwire.messages import ToolResultMessage
from toolwire.testing import ScriptedModel, tool_call
from toolwire.tools import ToolResult

from .loop_support import tools_plugin

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@toolwire.tool
def report(title: Annotated[str, "The report's title."]) -> ToolResult:
    """Make a report."""
    return ToolResult.ok(
        f"report {title} made",
        artifacts={
            "report.csv": "a,b\n1,2\n",
            "chart.png": PNG,
            "summary": {"rows": 1, "title": title},
            "../../escape": "x",
            "socket": object(),
        },
    )


def _host(tmp_path: Path, **artifacts: Any) -> Host:
    config = Config(
        artifacts=ArtifactsConfig(dir=str(tmp_path / "artifacts"), **artifacts),
        ledger=LedgerConfig(path=str(tmp_path / "ledger.sqlite3")),
    )
    return Host.load(config, plugins=[tools_plugin(report)])


def _check_files(refs: dict[str, Any], folder: Path) -> Path:
    """The written files hold the artifacts, under ``folder``, with no partial file left."""
    png = Path(refs["chart.png"]["path"])
    assert png.read_bytes() == PNG
    assert refs["chart.png"]["sha256"] == hashlib.sha256(PNG).hexdigest()
    assert refs["chart.png"]["bytes"] == len(PNG)
    assert Path(refs["report.csv"]["path"]).read_text(encoding="utf-8") == "a,b\n1,2\n"
    assert json.loads(Path(refs["summary"]["path"]).read_text(encoding="utf-8")) == {
        "rows": 1,
        "title": "Q3",
    }
    root = folder.resolve()
    for ref in refs.values():
        if "path" in ref:
            assert Path(ref["path"]).resolve().is_relative_to(root)
    assert not list(root.rglob(".partial-*"))
    return png


async def _run(host: Host) -> Any:
    model = ScriptedModel(script=[tool_call("report", {"title": "Q3"}, id="c/1"), "done"])
    try:
        run = await ToolCallingLoop(host, adapter=model).run("make the report")
    finally:
        await host.aclose()
    return run, model


async def test_artifacts_are_written_and_referenced_from_the_run_and_the_ledger(tmp_path: Path):
    run, model = await _run(_host(tmp_path))
    result = next(m.result for m in run.messages if isinstance(m, ToolResultMessage))
    refs = {ref["name"]: ref for ref in result.metadata["artifacts"]}
    assert sorted(refs) == ["../../escape", "chart.png", "report.csv", "socket", "summary"]
    png = _check_files(refs, tmp_path / "artifacts")
    assert "not written" in refs["socket"]["error"]
    assert "neither bytes, text nor JSON" in refs["socket"]["error"]
    # the caller still has the artifacts; the model sees none of it
    assert result.artifacts["chart.png"] == PNG
    seen = model.requests[1].messages[-1]
    assert isinstance(seen, ToolResultMessage)
    assert seen.result.model_text() == "report Q3 made"
    # the run record holds the references
    record = run.to_json()
    assert str(png) in json.dumps(record)
    # and so does the ledger's settled row
    with sqlite_file(tmp_path / "ledger.sqlite3") as db:
        (stored,) = db.execute("SELECT result FROM calls WHERE tool = 'report'").fetchone()
    assert str(png) in stored


async def test_an_artifact_over_the_cap_is_referenced_not_written(tmp_path: Path):
    run, _ = await _run(_host(tmp_path, max_bytes=100))
    result = next(m.result for m in run.messages if isinstance(m, ToolResultMessage))
    refs = {ref["name"]: ref for ref in result.metadata["artifacts"]}
    assert "over [artifacts] max_bytes = 100" in refs["chart.png"]["error"]
    assert "path" in refs["report.csv"]
    assert result.is_ok


async def test_an_unwritable_directory_costs_only_the_artifacts(tmp_path: Path):
    (tmp_path / "artifacts").write_text("a file where the directory should be")
    run, _ = await _run(_host(tmp_path))
    result = next(m.result for m in run.messages if isinstance(m, ToolResultMessage))
    assert result.is_ok
    assert run.stop_reason == "answered"
    assert all("error" in ref for ref in result.metadata["artifacts"])


async def test_without_a_directory_nothing_is_written(tmp_path: Path):
    host = Host.load(
        Config(ledger=LedgerConfig(path=str(tmp_path / "l.sqlite3"))),
        plugins=[tools_plugin(report)],
    )
    run, _ = await _run(host)
    result = next(m.result for m in run.messages if isinstance(m, ToolResultMessage))
    assert "artifacts" not in result.metadata
    assert result.artifacts["chart.png"] == PNG
    assert not (tmp_path / "artifacts").exists()


def test_a_bad_cap_names_the_key():
    with pytest.raises(ConfigError, match=r"\$\.artifacts\.max_bytes"):
        config_from_dict({"artifacts": {"dir": "x", "max_bytes": 0}})
