"""``toolwire tools show NAME --wire gemini``: the exact body on stdout, what Gemini receives
differently as notes on stderr, and a tool Gemini's schema subset cannot take refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import toolwire.host._entrypoints as entrypoints
from toolwire.cli import main
from toolwire.host._entrypoints import PluginEntryPoint

PLUGIN = """
import toolwire
from toolwire import Tool


@toolwire.hookimpl
def toolwire_tools(settings):
    return [
        Tool.from_schema(
            "tag_file",
            "Tag a file.",
            {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "format": "uri-reference"},
                    "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                "required": ["path"],
            },
            lambda arguments: "tagged",
        ),
        Tool.from_schema(
            "mail",
            "Mail someone.",
            {"type": "object", "properties": {"to": {"type": "string", "format": "email"}}},
            lambda arguments: "sent",
        ),
    ]
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project enabling ``gemini`` and a plugin of tools written in the wild."""
    (tmp_path / "wild_tools_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("TOOLWIRE_CACHE_DIR", str(tmp_path / "cache"))
    real = entrypoints._from_metadata

    def with_wild(group: str) -> list[PluginEntryPoint]:
        return [*real(group), PluginEntryPoint(name="wild", value="wild_tools_plugin")]

    monkeypatch.setattr(entrypoints, "_from_metadata", with_wild)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolwire.toml").write_text(
        '[plugins]\nenable = ["gemini", "wild"]\n[ledger]\nenabled = false\n', encoding="utf-8"
    )
    return tmp_path


def test_auto_sends_what_the_subset_would_change_as_json_schema_and_says_so(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tools", "show", "tag_file", "--wire", "gemini"]) == 0
    captured = capsys.readouterr()
    [tool] = json.loads(captured.out)
    [declaration] = tool["functionDeclarations"]
    assert declaration["parametersJsonSchema"]["properties"]["tags"]["additionalProperties"] == {
        "type": "string"
    }
    assert captured.err.startswith("note: tag_file: sent as written in parametersJsonSchema")
    assert "open dict" in captured.err


def test_openapi_refuses_by_name_and_describes_what_it_can_send(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = workdir / "toolwire.toml"
    config.write_text(
        config.read_text() + '[providers.gemini]\nschemas = "openapi"\n', encoding="utf-8"
    )
    assert main(["tools", "show", "tag_file", "--wire", "gemini"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "gemini cannot receive the tool 'tag_file'" in captured.err
    assert "tags: an object without declared properties" in captured.err
    assert main(["tools", "show", "mail", "--wire", "gemini"]) == 0
    captured = capsys.readouterr()
    [tool] = json.loads(captured.out)
    to = tool["functionDeclarations"][0]["parameters"]["properties"]["to"]
    assert to == {"type": "STRING", "description": "format: email"}
    assert captured.err == "note: mail: to: format 'email' is written into the description\n"
