"""MCP servers written with the official SDK, as toolwire tools (stdio and streamable HTTP)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from waiting import eventually

from toolwire import Host, ToolCallingLoop
from toolwire.events import Event
from toolwire.testing import ScriptedModel, tool_call


def _plugin_error(host: Host) -> str:
    info = host.plugin_info("mcp")
    assert info is not None
    return info.error or ""


async def test_lists_the_servers_tools_with_policy_from_annotations(write_config, notes_stdio):
    host = Host.load(write_config({"notes": notes_stdio()}))
    async with host:
        tools = host.tools
        assert {
            "notes_add_numbers",
            "notes_read_note",
            "notes_search_web",
            "notes_slow_count",
            "notes_unlock",
        } <= set(tools)
        read = tools["notes_read_note"]
        assert read.plugin == "mcp"
        assert read.description == "Read one note."
        assert read.parameters["properties"]["title"]["description"] == "The note's title."
        assert read.policy.read_only
        # A server's openWorldHint is its word, not a trust boundary: its results are filtered.
        assert read.returns_untrusted_content
        # No hints: the protocol's defaults (destructive, open world) are the cautious ones.
        search = tools["notes_search_web"]
        assert search.title == "searchWeb"
        assert search.returns_untrusted_content
        assert {e.value for e in search.policy.side_effects or ()} == {"destructive", "network"}
        assert _plugin_error(host) == ""


async def test_calls_text_structured_and_error_results(write_config, notes_stdio):
    host = Host.load(write_config({"notes": notes_stdio()}))
    async with host:
        loop = ToolCallingLoop(host)
        text = await loop.call("notes_read_note", {"title": "groceries"})
        assert text.is_ok
        assert text.content == "milk, eggs"
        structured = await loop.call("notes_add_numbers", {"a": 2, "b": 40})
        assert structured.is_ok
        assert structured.data == {"sum": 42}
        assert structured.content is None  # the text block only repeated the JSON
        failed = await loop.call("notes_read_note", {"title": "nope"})
        assert failed.status.value == "error"
        assert "read_note" in (failed.content or "")
        refused = await loop.call("notes_add_numbers", {"a": "two", "b": 1})
        assert refused.status.value == "error"
        assert "a:" in (refused.content or "")


async def test_images_become_artifacts_and_open_world_text_is_filtered(write_config, notes_stdio):
    host = Host.load(write_config({"notes": notes_stdio()}))
    async with host:
        loop = ToolCallingLoop(host)
        picture = await loop.call("notes_picture", {})
        assert picture.is_ok
        (key,) = picture.artifacts
        assert picture.artifacts[key]["mime_type"] == "image/png"
        assert picture.artifacts[key]["data"].startswith(b"\x89PNG")
        assert key in (picture.content or "")
        searched = await loop.call("notes_search_web", {"query": "mcp"})
        assert "results for mcp" in (searched.content or "")
        assert "<|im_start|>" not in (searched.content or "")


async def test_progress_notifications_become_progress_events(write_config, notes_stdio):
    seen: list[Event] = []

    class Observer:
        import toolwire as _tw

        @_tw.hookimpl
        def toolwire_event(self, event: Event) -> None:
            seen.append(event)

    host = Host.load(write_config({"notes": notes_stdio()}), plugins=[Observer()])
    async with host:
        result = await ToolCallingLoop(host).call("notes_slow_count", {"steps": 3})
    assert result.content == "counted to 3"
    progress = [e for e in seen if e.kind == "tool_progress"]
    assert [getattr(e, "message", None) for e in progress] == [
        "step 1 of 3",
        "step 2 of 3",
        "step 3 of 3",
    ]
    assert getattr(progress[-1], "fraction", None) == 1.0


async def test_list_changed_refreshes_the_offer_from_the_next_round(write_config, notes_stdio):
    host = Host.load(write_config({"notes": notes_stdio()}))
    model = ScriptedModel(
        script=[tool_call("notes_unlock", {}), tool_call("notes_secret_note", {}), "42 it is"]
    )
    async with host:
        assert "notes_secret_note" not in host.tools
        run = await ToolCallingLoop(host, adapter=model).run("unlock and read the secret")
    assert run.stop_reason == "answered", run.stop_reason
    offered = [tuple(sorted(f.name for f in r.functions)) for r in model.requests]
    assert "notes_secret_note" not in offered[0]
    assert "notes_secret_note" in offered[1]
    results = [r.result.content for r in run.tool_calls if r.result is not None]
    assert results == ["unlocked", "the secret is 42"]


async def test_prefix_include_exclude_and_approval(write_config, notes_stdio):
    config = write_config(
        {
            "notes": notes_stdio(
                prefix="",
                include=["read_note", "add_numbers", "searchWeb"],
                exclude=["add_numbers"],
                require_approval=["searchWeb"],
            )
        }
    )
    host = Host.load(config)
    async with host:
        assert sorted(host.tools) == ["read_note", "search_web"]
        assert host.tools["search_web"].policy.requires_approval
        assert not host.tools["read_note"].policy.requires_approval


async def test_server_crash_mid_call_costs_only_its_tools(write_config, notes_stdio):
    """The call the server died in is an error naming it; the next call starts it again."""
    host = Host.load(write_config({"notes": notes_stdio(), "other": notes_stdio()}))
    async with host:
        loop = ToolCallingLoop(host)
        first = await loop.call("notes_whoami", {})
        crashed = await loop.call("notes_crash", {})
        assert crashed.status.value == "error"
        assert "notes" in (crashed.content or "")
        assert "crashing on purpose" in (crashed.content or "")
        still = await loop.call("other_read_note", {"title": "groceries"})
        assert still.is_ok
        assert still.content == "milk, eggs"
        after = await loop.call("notes_whoami", {})
        assert after.is_ok, after.content
        assert after.content != first.content  # a new process
        from toolwire_mcp._plugin import client_for

        client = client_for(host.plugin_settings("mcp"))
        assert client is not None
        connection = client.started("notes")
        assert connection is not None
        assert connection.reconnects == 1
        assert connection.status == "running"


async def test_reconnects_are_bounded(write_config, notes_stdio):
    host = Host.load(write_config({"notes": notes_stdio(max_reconnects=1)}))
    async with host:
        loop = ToolCallingLoop(host)
        assert (await loop.call("notes_crash", {})).status.value == "error"
        assert (await loop.call("notes_crash", {})).status.value == "error"  # restarted once
        refused = await loop.call("notes_read_note", {"title": "groceries"})
        assert refused.status.value == "error"
        assert "max_reconnects = 1" in (refused.content or "")
        assert "crashing on purpose" in (refused.content or "")


async def test_a_server_that_never_answers_times_out_and_is_cancelled(
    write_config, notes_stdio, tmp_path: Path
):
    marker = tmp_path / "hang-cancelled"
    server = notes_stdio(timeout=1, env={"NOTES_HANG_FILE": str(marker)})
    host = Host.load(write_config({"notes": server}))
    async with host:
        loop = ToolCallingLoop(host)
        result = await loop.call("notes_hang", {})
        assert result.status.value == "error"
        assert result.retryable
        assert "within 1 s" in (result.content or "")
        # The server got notifications/cancelled.
        await eventually(lambda: marker.read_text() == "cancelled", what="cancellation")
        assert (await loop.call("notes_read_note", {"title": "groceries"})).is_ok


async def test_a_cancelled_call_sends_mcp_cancellation(write_config, notes_stdio, tmp_path: Path):
    marker = tmp_path / "hang-cancelled"
    host = Host.load(write_config({"notes": notes_stdio(env={"NOTES_HANG_FILE": str(marker)})}))
    async with host:
        assert "notes_hang" in host.tools
        task = asyncio.ensure_future(ToolCallingLoop(host).call("notes_hang", {}))
        await eventually(
            lambda: marker.exists() and marker.read_text() == "started", what="the hanging call"
        )
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await eventually(lambda: marker.read_text() == "cancelled", what="cancellation")


def test_a_server_that_fails_to_start_is_reported_with_its_stderr(write_config, notes_stdio):
    config = write_config(
        {
            "broken": notes_stdio("--mode", "broken"),
            "silent": notes_stdio("--mode", "silent", startup_timeout=5),
            "notes": notes_stdio(),
        }
    )
    host = Host.load(config)
    try:
        tools = host.tools
        assert "notes_read_note" in tools
        assert not any(name.startswith(("broken_", "silent_")) for name in tools)
        error = _plugin_error(host)
        assert "'broken'" in error
        assert "permission denied" in error
        assert "'silent'" in error
        assert "within 5 s" in error
        assert "waiting forever" in error
    finally:
        asyncio.run(host.aclose())


def test_a_missing_command_is_reported(write_config):
    host = Host.load(write_config({"gone": {"command": "/nonexistent/mcp-server"}}))
    try:
        assert host.tools == {}
        assert "/nonexistent/mcp-server" in _plugin_error(host)
    finally:
        asyncio.run(host.aclose())


async def test_streamable_http_server(write_config, http_notes_server: str):
    host = Host.load(write_config({"web": {"url": http_notes_server}}))
    async with host:
        assert "web_read_note" in host.tools
        loop = ToolCallingLoop(host)
        result = await loop.call("web_add_numbers", {"a": 1, "b": 2})
        assert result.data == {"sum": 3}
        failed = await loop.call("web_read_note", {"title": "nope"})
        assert failed.status.value == "error"


async def test_headers_env_that_is_not_set_is_reported(
    write_config, http_notes_server, monkeypatch
):
    monkeypatch.delenv("NOTES_TOKEN_FOR_TESTS", raising=False)
    server = {"url": http_notes_server, "headers_env": {"Authorization": "NOTES_TOKEN_FOR_TESTS"}}
    host = Host.load(write_config({"web": server}))
    async with host:
        assert host.tools == {}
        assert "NOTES_TOKEN_FOR_TESTS" in _plugin_error(host)


def test_settings_errors_name_the_key_and_value(write_config):
    from toolwire import ConfigError

    # Every one is refused when the host loads, as a config error.
    cases = [
        ({"bad": {"command": "x", "url": "http://127.0.0.1:1/mcp"}}, "either command"),
        ({"bad": {"url": "ftp://example.org"}}, r"ftp://example\.org"),
        ({"bad": {"command": "x", "require_approval": "yes"}}, "require_approval"),
        ({"bad": {"command": "x", "include": "read_note"}}, "include = 'read_note'"),
        ({"bad server": {"command": "x"}}, "server name"),
    ]
    for servers, words in cases:
        with pytest.raises(ConfigError, match=words):
            Host.load(write_config(servers))


async def test_a_server_whose_schema_is_used_as_written(write_config, notes_stdio):
    host = Host.load(write_config({"notes": notes_stdio()}))
    async with host:
        tool = host.tools["notes_schedule"]
        assert "$defs" in tool.parameters
        booked = await ToolCallingLoop(host).call(
            "notes_schedule", {"slot": {"day": "2026-12-01", "hour": 9}}
        )
        assert booked.content == "booked 2026-12-01 9"
        refused = await ToolCallingLoop(host).call("notes_schedule", {"slot": {"hour": 9}})
        assert refused.status.value == "error"


async def test_a_server_whose_schema_needs_normalising(write_config, notes_stdio):
    host = Host.load(write_config({"notes": notes_stdio()}))
    async with host:
        listed = host.tools["notes_resize"]
        properties = listed.parameters["properties"]
        assert properties["size"]["type"] == "number"
        assert properties["unit"]["type"] == "string"
        assert any("float" in note for note in listed.schema_notes)
        assert any("String" in note for note in listed.schema_notes)
        resized = await ToolCallingLoop(host).call("notes_resize", {"size": 2.5})
        assert resized.status == "ok"
        assert resized.content == "resized to 2.5 cm"


def test_cli_reports_a_failed_server_with_its_stderr(write_config, notes_stdio, toolwire_cli):
    config = write_config({"broken": notes_stdio("--mode", "broken"), "notes": notes_stdio()})

    def toolwire(*args: str) -> Any:
        return toolwire_cli(config, *args)

    servers = toolwire("mcp", "servers", "--json")
    assert servers.returncode == 1, servers.stderr
    rows = {row["name"]: row for row in json.loads(servers.stdout)}
    assert rows["notes"]["status"] == "running"
    assert "notes_read_note" in rows["notes"]["tools"]
    assert rows["broken"]["status"] == "failed"
    assert "permission denied" in rows["broken"]["error"]
    listed = toolwire("tools", "list")
    assert "notes_read_note" in listed.stdout
    assert "permission denied" in listed.stderr
    doctor = toolwire("doctor")
    assert doctor.returncode == 1
    assert "permission denied" in doctor.stdout


def test_a_missing_command_is_told_where_it_was_looked_for(write_config, toolwire_cli, tmp_path):
    gone = tmp_path / "gone"
    config = write_config(
        {
            "onpath": {"command": "toolwire-no-such-server"},
            "relative": {"command": "bin/no-such-server"},
            "folder": {"command": sys.executable, "cwd": str(gone)},
        }
    )
    servers = toolwire_cli(config, "mcp", "servers", "--json")
    assert servers.returncode == 1, servers.stderr
    errors = {row["name"]: row["error"] for row in json.loads(servers.stdout)}
    assert (
        "could not be started: No such file or directory: 'toolwire-no-such-server' (looked up "
        "on PATH; give command as a full path"
    ) in errors["onpath"]
    assert (
        f"could not be started: No such file or directory: '{tmp_path / 'bin/no-such-server'}' "
        "(a relative command is taken from the config file's folder)"
    ) in errors["relative"]
    # A missing working folder is named as it is, with no word about the command.
    assert errors["folder"].endswith(f"could not be started: No such file or directory: '{gone}'")


async def test_a_list_change_before_the_first_call_applies_at_that_call(write_config, notes_stdio):
    from toolwire_mcp._plugin import client_for

    host = Host.load(write_config({"notes": notes_stdio()}))
    async with host:
        assert "notes_secret_note" not in host.tools
        client = client_for(host.plugin_settings("mcp"))
        assert client is not None
        connection = client.connection("notes")
        # The server changes its list while no call of the host has run yet.
        await client.thread.run(connection.call_tool("unlock", {}, None))
        assert "secret_note" in {t["name"] for t in connection.tools}
        assert "notes_secret_note" not in host.tools
        model = ScriptedModel(
            script=[
                tool_call("notes_read_note", {"title": "groceries"}),
                tool_call("notes_secret_note", {}),
                "done",
            ]
        )
        run = await ToolCallingLoop(host, adapter=model).run("read")
    assert [r.result.content for r in run.tool_calls if r.result is not None] == [
        "milk, eggs",
        "the secret is 42",
    ]


async def test_outside_content_is_filtered_with_the_note_for_the_model(write_config, notes_stdio):
    """An open-world tool's result goes through the untrusted-content filter as any tool's does:
    imitated chat markup neutralised, and the host's note saying so, naming the MCP tool, first."""
    host = Host.load(write_config({"notes": notes_stdio()}))
    async with host:
        result = await ToolCallingLoop(host).call("notes_search_web", {"query": "tides"})
    assert result.is_ok
    content = result.content or ""
    assert "<|im_start|>" not in content
    assert content.startswith("[Host note:")
    assert "from MCP tool notes_search_web" in content
    assert content.endswith("results for tides")
