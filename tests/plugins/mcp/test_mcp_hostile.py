"""A hostile MCP server (raw JSON-RPC, no SDK): results capped and filtered whatever its hints,
descriptions and titles filtered and cut, schemas bounded, an unreadable tool costing only
itself, plain-text errors, and names that already carry the server's name."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolwire import Host, ToolCallingLoop
from toolwire.testing import ScriptedModel, tool_call

RAW_SERVER = Path(__file__).with_name("raw_server.py")
NOTE = 512  # the host's note on filtered content comes on top of the cap


def raw(**settings: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(RAW_SERVER)], **settings}


def _plugin_error(host: Host) -> str:
    info = host.plugin_info("mcp")
    assert info is not None
    return info.error or ""


async def test_results_are_capped_and_filtered_whatever_the_hints(write_config):
    """A read-only, closed-world tool returning 1 MiB of markup: the model gets 64 KiB at most
    ([policy] max_untrusted_result_bytes), filtered."""
    host = Host.load(write_config({"raw": raw(env={"RAW_TOOLS": "big"})}))
    async with host:
        tool = host.tools["raw_big"]
        assert tool.policy.read_only
        assert tool.returns_untrusted_content
        result = await ToolCallingLoop(host).call("raw_big", {"size": 1024 * 1024})
    text = result.model_text()
    assert len(text.encode()) <= 65_536 + NOTE
    assert "<|im_start|>" not in text
    assert "truncated" in text


async def test_policy_and_server_caps(write_config):
    extra = "\n[policy]\nmax_untrusted_result_bytes = 4096\n"
    only = {"RAW_TOOLS": "big"}
    servers = {"raw": raw(env=only), "small": raw(env=only, max_result_bytes=2000)}
    host = Host.load(write_config(servers, extra=extra))
    async with host:
        loop = ToolCallingLoop(host)
        policy_cut = await loop.call("raw_big", {"size": 100_000})
        server_cut = await loop.call("small_big", {"size": 100_000})
    assert len(policy_cut.model_text().encode()) <= 4096 + NOTE
    assert len(server_cut.model_text().encode()) <= 2000 + NOTE


async def test_the_whole_run_sends_the_provider_a_capped_result(write_config):
    host = Host.load(write_config({"raw": raw(env={"RAW_TOOLS": "big"})}))
    model = ScriptedModel(script=[tool_call("raw_big", {"size": 1024 * 1024}), "done"])
    async with host:
        run = await ToolCallingLoop(host, adapter=model).run("read it")
    assert run.stop_reason == "answered"
    sent = json.dumps([m for r in model.requests for m in r.messages], default=str)
    assert len(sent) < 200_000
    assert "<|im_start|>" not in sent


async def test_descriptions_and_titles_are_filtered_and_cut(write_config):
    host = Host.load(write_config({"raw": raw()}))
    async with host:
        tool = host.tools["raw_loud"]
        for text in (tool.description, tool.title or ""):
            assert "<|im_start|>" not in text
            assert "</tool_result>" not in text
            assert "\x1b" not in text
            assert "\a" not in text
        assert len(tool.description) <= 4000
        assert len(tool.title or "") <= 200
        from toolwire.prompted import render_prompted_tools

        prompt = render_prompted_tools((tool.function_spec(),), "json", several_calls=False)
    assert "<|im_start|>" not in prompt


async def test_schemas_are_bounded_and_one_bad_tool_costs_only_itself(write_config):
    host = Host.load(write_config({"raw": raw()}))
    async with host:
        names = set(host.tools)
        error = _plugin_error(host)
    assert {"raw_big", "raw_loud", "raw_plain_error", "raw_status", "raw", "raw_echo"} <= names
    assert not {"raw_wide", "raw_deep", "raw_untyped"} & names
    assert "MCP server 'raw', tool 'wide'" in error
    assert "max_schema_properties" in error
    assert "MCP server 'raw', tool 'deep'" in error
    assert "max_schema_depth" in error
    assert "MCP server 'raw', tool 'untyped'" in error
    # The next host reads the kept list (no server started) and still says what was left out.
    async with Host.load(write_config({"raw": raw()})) as again:
        assert "raw_wide" not in again.tools
        assert "max_schema_properties" in _plugin_error(again)


async def test_schema_bounds_are_settings(write_config):
    host = Host.load(
        write_config({"raw": raw(max_schema_properties=10_000, max_schema_bytes=1_000_000)})
    )
    async with host:
        assert "raw_wide" in host.tools


async def test_plain_text_errors_with_a_configured_prefix(write_config):
    host = Host.load(write_config({"raw": raw(), "marked": raw(error_prefix="Error:")}))
    async with host:
        loop = ToolCallingLoop(host)
        unmarked = await loop.call("raw_plain_error", {})
        marked = await loop.call("marked_plain_error", {})
    assert unmarked.is_ok
    assert marked.status.value == "error"
    assert "no such table" in (marked.content or "")


async def test_default_names_do_not_double_the_server_name(write_config):
    host = Host.load(write_config({"raw": raw()}))
    async with host:
        names = set(host.tools)
    assert {"raw", "raw_status", "raw_echo"} <= names
    assert "raw_raw" not in names
    assert "raw_raw_status" not in names


async def test_annotations_are_defaults_the_config_overrides(write_config):
    overrides = {
        "big": {"side_effects": ["network"], "idempotent": False},
        "echo": {"side_effects": ["read_only"]},
    }
    host = Host.load(write_config({"raw": raw(tools=overrides)}))
    async with host:
        big = host.tools["raw_big"]
        echo = host.tools["raw_echo"]
        loud = host.tools["raw_loud"]
    assert {e.value for e in big.policy.side_effects or ()} == {"network"}
    assert not big.policy.idempotent
    assert echo.policy.read_only
    assert echo.policy.idempotent
    # no hints and no override: the protocol's cautious defaults
    assert {e.value for e in loud.policy.side_effects or ()} == {"destructive", "network"}


async def test_doctor_gives_no_python_advice_for_server_tools(write_config):
    from toolwire.tools import lint_tool

    host = Host.load(write_config({"raw": raw()}))
    async with host:
        findings = [f for name, tool in host.tools.items() for f in lint_tool(tool)]
    texts = " ".join(f.message for f in findings)
    assert "parameter-without-description" in {f.code for f in findings}
    assert "Annotated" not in texts
    assert "docstring" not in texts
    assert "instructions=" not in texts


async def test_an_error_answer_with_code_32000_is_not_a_dead_server(write_config, tmp_path: Path):
    starts = tmp_path / "starts"
    host = Host.load(write_config({"raw": raw(env={"RAW_STARTS": str(starts)})}))
    async with host:
        loop = ToolCallingLoop(host)
        busy = await loop.call("raw_busy", {})
        after = await loop.call("raw_echo", {})
    assert busy.status.value == "error"
    assert "backend busy" in (busy.content or "")
    assert after.is_ok
    assert len(starts.read_text().split()) == 1  # the same process answered both
