"""``tools show`` and ``doctor`` for tools from the wild: aliases and normaliser notes."""

from __future__ import annotations

import argparse
import io
import json
from typing import Any

import pytest

from toolwire import Config, Host, Tool
from toolwire.cli._commands import _tools_show
from toolwire.config import ProviderConfig
from toolwire.tools import lint_tool

openai_plugin = pytest.importorskip("toolwire_openai._plugin")
anthropic_plugin = pytest.importorskip("toolwire_anthropic._plugin")

WILD = {"properties": {"n": {"type": "int", "description": "A number."}}, "required": ["n"]}


def _host() -> Host:
    host = Host.load(
        Config(provider=ProviderConfig(model="m")), plugins=[openai_plugin, anthropic_plugin]
    )
    host.add_tool(
        Tool.from_schema("math.factorial", "Factorial.", WILD, lambda a: 1, normalize=True)
    )
    return host


def _show(wire: str | None) -> tuple[Any, str]:
    host = _host()
    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(wire=wire, dialect=None, json=True)
    assert _tools_show(host, host.tools["math.factorial"], args, out, err) == 0
    return json.loads(out.getvalue()), err.getvalue()


def test_show_lists_the_normaliser_notes() -> None:
    shown, _ = _show(None)
    assert shown["name"] == "math.factorial"
    assert shown["parameters"]["properties"]["n"]["type"] == "integer"
    assert shown["schema_notes"] == [
        '$: the root had no "type"; it became "type": "object"',
        '$.properties.n.type: "int" became "integer"',
    ]


@pytest.mark.parametrize("wire", ["openai-chat", "openai-responses", "anthropic-messages"])
def test_show_wire_sends_the_alias_and_says_so(wire: str) -> None:
    shown, notes = _show(wire)
    text = json.dumps(shown)
    assert '"math_factorial"' in text
    assert '"math.factorial"' not in text
    assert "sent as 'math_factorial'" in notes
    assert '$.properties.n.type: "int" became "integer"' in notes


def test_doctor_reports_the_normalised_schema_and_the_alias() -> None:
    findings = {f.code: f for f in lint_tool(_host().tools["math.factorial"])}
    assert findings["normalized-schema"].severity == "info"
    assert '"int" became "integer"' in findings["normalized-schema"].message
    assert "under an alias" in findings["unsafe-name"].message
