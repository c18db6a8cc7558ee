"""toolwire-langchain in one process: references, schemas, results, errors, artifacts, injected
arguments, the config's policy, and what a reference that is no tool costs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

import toolwire
from toolwire.config import ConfigError, config_from_dict
from toolwire.loop import ToolCallingLoop
from toolwire.testing import ScriptedModel, tool_call

HERE = Path(__file__).parent
SAMPLE = "lc_sample_tools"


@pytest.fixture(autouse=True)
def _samples_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))


def load(
    tmp_path: Path,
    references: Sequence[str],
    *,
    settings: Mapping[str, Any] | None = None,
    **tables: Any,
) -> toolwire.Host:
    raw = {
        "plugins": {"enable": ["langchain"]},
        "tools": {
            "langchain": {"tools": [f"{SAMPLE}:{r}" for r in references], **(settings or {})}
        },
        "ledger": {"path": str(tmp_path / "ledger.sqlite3")},
        **tables,
    }
    return toolwire.Host.load(config_from_dict(raw))


def failure(host: toolwire.Host) -> str:
    """The plugin's failure report once the host collected its tools."""
    assert host.tools is not None
    info = host.plugin_info("langchain")
    assert info is not None
    return info.error or ""


async def run(
    host: toolwire.Host, script: list[Any], *, context: Mapping[str, Any] | None = None
) -> toolwire.Run:
    loop = ToolCallingLoop(host, adapter=ScriptedModel(script=script))
    return await loop.run("go", context=context)


async def test_an_at_tool_function_and_a_base_tool_class(tmp_path: Path):
    host = load(tmp_path, ["multiply", "Divide"])
    assert sorted(host.tools) == ["divide", "multiply"]
    divide = host.tools["divide"]
    assert divide.description == "Divide a by b."
    assert divide.parameters == {
        "type": "object",
        "properties": {
            "a": {"description": "The dividend.", "type": "number"},
            "b": {"description": "The divisor, not zero.", "type": "number"},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    turn = [
        tool_call("multiply", {"a": 6, "b": 7}, id="m"),
        tool_call("divide", {"a": 1, "b": 3}, id="d"),
        tool_call("divide", {"a": 1, "b": 0}, id="z"),
        tool_call("multiply", {"a": 6, "c": 7}, id="x"),
    ]
    done = await run(host, [turn, "done"])
    product, quotient, by_zero, misspelt = (call.result for call in done.tool_calls)
    assert (product.status, product.content) == ("ok", "42")
    assert (quotient.status, quotient.content) == ("ok", "0.33")
    # A ToolException the tool handles (handle_tool_error) is an error result with its text.
    assert by_zero.status == "error"
    assert by_zero.content == "cannot divide by zero; ask for another divisor"
    # An argument the tool does not take is refused before LangChain sees it.
    assert misspelt.status == "error"
    assert "c" in (misspelt.content or "")
    await host.aclose()


async def test_a_single_input_tool_takes_its_one_argument(tmp_path: Path):
    host = load(tmp_path, ["shout"])
    assert list(host.tools["shout"].parameters["properties"]) == ["__arg1"]
    done = await run(host, [[tool_call("shout", {"__arg1": "hey"})], "done"])
    assert done.tool_calls[0].result.content == "HEY"
    await host.aclose()


async def test_an_unhandled_tool_exception_is_a_failed_call(tmp_path: Path):
    host = load(tmp_path, ["strict_root"])
    done = await run(host, [[tool_call("strict_root", {"x": -4})], "done"])
    result = done.tool_calls[0].result
    assert result.status == "error"
    assert result.content == "Tool execution failed: ToolException: -4.0 is negative"
    await host.aclose()


async def test_content_and_artifact_keeps_the_artifact_from_the_model(tmp_path: Path):
    host = load(tmp_path, ["search_reports"])
    done = await run(host, [[tool_call("search_reports", {"query": "north"})], "done"])
    result = done.tool_calls[0].result
    assert result.status == "ok"
    (document,) = result.artifacts["artifact"]
    assert isinstance(document, Document)
    assert result.content == document.page_content
    assert result.model_text() == document.page_content  # the metadata stays out
    await host.aclose()


async def test_injected_arguments_come_from_the_context_never_the_model(tmp_path: Path):
    host = load(tmp_path, ["account"])
    offered = host.tools["account"].parameters
    assert list(offered["properties"]) == ["field"]
    turn = [tool_call("account", {"field": "email"}, id="call-9")]
    done = await run(host, [turn, "done"], context={"user_id": "u-1"})
    result = done.tool_calls[0].result
    assert result.content == "email of u-1 at default"
    assert result.artifacts["artifact"] == {"user": "u-1", "call": "call-9"}

    # The model cannot supply it: an argument outside the schema is refused.
    sneaky = [tool_call("account", {"field": "email", "user_id": "admin"}, id="s")]
    done = await run(host, [sneaky, "done"], context={"user_id": "u-1"})
    assert done.tool_calls[0].result.status == "error"
    assert "user_id" in (done.tool_calls[0].result.content or "")

    # Without it from the application, the tool is not run, and the message says where from.
    done = await run(host, [[tool_call("account", {"field": "name"})], "done"])
    result = done.tool_calls[0].result
    assert result.status == "error"
    assert "needs user_id from the application" in (result.content or "")
    assert "context={'user_id': …}" in (result.content or "")
    await host.aclose()


async def test_toolkits_lists_and_classes_with_arguments(tmp_path: Path):
    host = load(
        tmp_path,
        ["TOOLS", "Maths"],
        settings={"arguments": {f"{SAMPLE}:Maths": {}}},
    )
    # multiply comes from both TOOLS and the toolkit: the first is kept, the clash reported.
    assert sorted(host.tools) == ["divide", "multiply", "strict_root"]
    assert "tool 'multiply' comes from lc_sample_tools:TOOLS and lc_sample_tools:Maths" in (
        failure(host)
    )
    await host.aclose()
    divide = load(tmp_path, ["Divide"], settings={"arguments": {f"{SAMPLE}:Divide": {"digits": 4}}})
    done = await run(divide, [[tool_call("divide", {"a": 1, "b": 3})], "done"])
    assert done.tool_calls[0].result.content == "0.3333"
    await divide.aclose()


async def test_references_that_are_no_tools_cost_only_themselves(tmp_path: Path):
    host = load(tmp_path, ["multiply", "not_decorated", "nothing_here", "_store"])
    host_tools = list(host.tools)
    assert host_tools == ["multiply"]
    problem = failure(host)
    assert "lc_sample_tools:not_decorated" in problem
    assert "decorate it with langchain_core.tools.tool" in problem
    assert "lc_sample_tools:nothing_here: AttributeError" in problem
    assert "lc_sample_tools:_store: TypeError" in problem
    await host.aclose()
    refused = load(
        tmp_path, ["Divide"], settings={"arguments": {f"{SAMPLE}:Divide": {"digits": "sk-5512"}}}
    )
    problem = failure(refused)
    assert "lc_sample_tools:Divide: ValidationError" in problem
    assert "sk-5512" not in problem
    await refused.aclose()
    missing = toolwire.Host.load(
        config_from_dict(
            {
                "plugins": {"enable": ["langchain"]},
                "tools": {"langchain": {"tools": ["no_such_module_here:thing"]}},
            }
        )
    )
    assert "ModuleNotFoundError" in failure(missing)
    await missing.aclose()


def test_settings_are_checked_when_the_config_is_read():
    def settings(**section: Any) -> None:
        config = config_from_dict(
            {"plugins": {"enable": ["langchain"]}, "tools": {"langchain": section}}
        )
        toolwire.Host.load(config)

    with pytest.raises(
        ConfigError, match=r"'not a reference' is not a 'package\.module:attribute'"
    ):
        settings(tools=["not a reference"])
    with pytest.raises(ConfigError, match="arguments: 'pkg:Other' is not in tools"):
        settings(tools=["pkg:Tool"], arguments={"pkg:Other": {}})


async def test_policy_comes_from_the_config_and_strict_names_where(tmp_path: Path):
    declared = load(
        tmp_path,
        ["multiply", "Divide"],
        settings={"policy": {"multiply": {"side_effects": ["read_only"], "idempotent": True}}},
        policy={"strict": True},
    )
    assert declared.tools["multiply"].policy.read_only
    turn = [tool_call("multiply", {"a": 2, "b": 3}, id="m"), tool_call("divide", {"a": 1, "b": 2})]
    done = await run(declared, [turn, "done"])
    product, quotient = (call.result for call in done.tool_calls)
    assert product.content == "6"
    assert quotient.status == "blocked"
    assert "Declare them in [tools.langchain.policy.divide]" in (quotient.content or "")
    await declared.aclose()
    typo = load(tmp_path, ["multiply"], settings={"policy": {"multiplY": {"idempotent": True}}})
    assert "policy names 'multiplY', which no named tool has" in failure(typo)
    await typo.aclose()


def test_langchain_is_imported_only_when_a_tool_is_named(tmp_path: Path):
    named = tmp_path / "named.toml"
    named.write_text(
        f'[plugins]\nenable = ["langchain"]\n[tools.langchain]\ntools = ["{SAMPLE}:multiply"]\n'
    )
    none = tmp_path / "none.toml"
    none.write_text('[plugins]\nenable = ["langchain"]\n')
    code = (
        "import sys, toolwire\n"
        "host = toolwire.Host.load(sys.argv[1])\n"
        "print('langchain_core' in sys.modules, 'toolwire.tools' in sys.modules)\n"
        "print(sorted(host.tools), 'langchain_core' in sys.modules)\n"
    )

    def lines(config: Path) -> list[str]:
        return subprocess.run(
            [sys.executable, "-c", code, str(config)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
            env={"PYTHONPATH": str(HERE), "PATH": ""},
        ).stdout.splitlines()

    # `toolwire plugins` loads the host, never the tools: neither LangChain nor the tool model.
    assert lines(named) == ["False False", "['multiply'] True"]
    assert lines(none) == ["False False", "[] False"]
