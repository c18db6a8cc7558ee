"""`toolwire tools call` involves no model: an allowlisted private host is the caller's to read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp import web

from toolwire import Host
from toolwire.cli import main
from toolwire.loop import ToolCallingLoop

pytest.importorskip("toolwire_web", reason="needs toolwire-web installed")

PAGE = """<!DOCTYPE html><html><head><title>Intranet notes</title></head><body><main><article>
<h1>Intranet notes</h1><p>The build machine is rebooted every Sunday night, and the backups run
right after it comes back, so Monday mornings are slow on the shared drives for an hour.</p>
<p>Ask the operations desk before moving a rack: the floor plan on the wall is out of date.</p>
</article></main></body></html>"""


async def _site() -> tuple[web.AppRunner, int]:
    app = web.Application()

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    app.router.add_get("/notes", page)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, int(runner.addresses[0][1])


def _config(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "toolwire.toml"
    path.write_text(
        '[plugins]\nenable = ["web"]\n[ledger]\nenabled = false\n'
        f'[tools.web]\nprivate_hosts = ["127.0.0.1:{port}"]\nallowed_ports = [{port}]\n'
        'search_backend = "none"\n',
        encoding="utf-8",
    )
    return path


async def test_a_direct_call_reads_an_allowlisted_private_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    runner, port = await _site()
    try:
        config = _config(tmp_path, port)  # [provider] trust stays the default, medium
        arguments = json.dumps({"url": f"http://127.0.0.1:{port}/notes"})
        code = await asyncio.to_thread(
            main, ["--config", str(config), "tools", "call", "read_web_page", "--args", arguments]
        )
        shown = capsys.readouterr()
        assert code == 0, shown.err
        assert "rebooted every Sunday night" in shown.out
        # A model's call under the same config is still held to the provider's trust.
        host = Host.load(config)
        async with host:
            result = await ToolCallingLoop(host).call(
                "read_web_page", {"url": f"http://127.0.0.1:{port}/notes"}
            )
        assert not result.is_ok
        assert "self_hosted" in result.model_text()
    finally:
        await runner.cleanup()


async def test_a_person_reaches_the_loopback_host_they_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    runner, port = await _site()
    try:
        config = tmp_path / "toolwire.toml"  # no private_hosts, no allowed port: only typed
        config.write_text(
            '[plugins]\nenable = ["web"]\n[ledger]\nenabled = false\n'
            '[tools.web]\nsearch_backend = "none"\n',
            encoding="utf-8",
        )
        url = f"http://127.0.0.1:{port}/notes"
        arguments = json.dumps({"url": url})
        code = await asyncio.to_thread(
            main, ["--config", str(config), "tools", "call", "read_web_page", "--args", arguments]
        )
        shown = capsys.readouterr()
        assert code == 0, shown.err
        assert "rebooted every Sunday night" in shown.out
        # A model may not: the same address in a run's call is blocked.
        host = Host.load(config)
        async with host:
            result = await ToolCallingLoop(host).call("read_web_page", {"url": url})
        assert result.status.value == "blocked"
    finally:
        await runner.cleanup()
