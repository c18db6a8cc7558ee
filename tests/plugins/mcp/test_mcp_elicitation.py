"""A server's elicitation put to the person: asked on the terminal in `toolwire chat`, answered
by whatever elicitor the surface set, refused clearly in batch (nobody to ask)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolwire import Host, ToolCallingLoop
from toolwire.elicitation import ElicitationAnswer, ElicitationRequest, eliciting

SCRIPT = (
    '\n[provider]\nadapter = "scripted"\n[provider.options]\nscript = [\n'
    '  { tool_calls = [{ name = "notes_book", arguments = {} }] },\n'
    '  "Done.",\n]\n'
    # the question is the subject here, not approval: the booking tool is named and not guarded
    '[tools]\nenable = ["notes_book"]\n[policy]\nguarded = []\n'
)


async def test_the_elicitor_of_the_running_surface_answers(write_config, notes_stdio):
    asked: list[ElicitationRequest] = []

    async def person(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {"day": "2026-12-24", "guests": 4})

    host = Host.load(write_config({"notes": notes_stdio()}))
    async with host:
        with eliciting(person):
            result = await ToolCallingLoop(host).call("notes_book", {})
        declined_by_nobody = await ToolCallingLoop(host).call("notes_book", {})
    assert result.content == "booked 2026-12-24 for 4"
    (request,) = asked
    assert request.source == "MCP server 'notes'"
    assert request.tool == "notes_book"
    assert request.message == "Which day, and for how many?"
    assert set(request.schema["properties"]) == {"day", "guests"}  # type: ignore[index]
    # Without an elicitor (a script, batch, mcp serve) the server is told nobody can be asked.
    assert declined_by_nobody.status.value == "error"
    assert "nobody can be asked" in (declined_by_nobody.content or "")


async def test_an_answer_that_does_not_fit_the_form_is_not_sent(write_config, notes_stdio):
    async def careless(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("accept", {"day": "soon", "guests": "many"})

    host = Host.load(write_config({"notes": notes_stdio()}))
    async with host:
        with eliciting(careless):
            result = await ToolCallingLoop(host).call("notes_book", {})
    assert result.status.value == "error"
    assert "guests" in (result.content or "")


def test_toolwire_chat_asks_on_the_terminal(write_config, notes_stdio, tmp_path: Path):
    config = write_config({"notes": notes_stdio()}, extra=SCRIPT)
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "--config", str(config), "chat"],
        input="book a table\ny\n2026-12-24\nfour\n4\n/exit\n",
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "MCP server 'notes' asks (while running notes_book)" in out
    assert "Which day, and for how many?" in out
    assert "expected" in out  # "four" is not an integer: asked again
    assert "booked 2026-12-24 for 4" in out


def test_batch_refuses_the_question(write_config, notes_stdio, tmp_path: Path):
    config = write_config({"notes": notes_stdio()}, extra=SCRIPT)
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(json.dumps({"id": "j1", "prompt": "book a table"}) + "\n")
    out = tmp_path / "out.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolwire",
            "--config",
            str(config),
            "batch",
            str(jobs),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode in (0, 1), done.stderr
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    text = json.dumps(record)
    assert "nobody can be asked" in text
    assert "booked" not in text


async def test_the_web_chat_shows_a_form_and_sends_the_answer(
    write_config, notes_stdio, tmp_path: Path, monkeypatch
):
    import asyncio

    import aiohttp

    from toolwire.testing import FakeOpenAIChatServer, tool_call
    from toolwire_webui import ConversationStore, WebServer

    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-test")
    provider = FakeOpenAIChatServer([tool_call("notes_book", {}), "Booked."])
    views: list[dict[str, Any]] = []
    arrived = asyncio.Event()

    async def read_events(response: aiohttp.ClientResponse) -> None:
        async for line in response.content:
            if line.startswith(b"data: "):
                views.extend(json.loads(line[6:]))
                arrived.set()

    async def wait_kind(kind: str) -> dict[str, Any]:
        for _ in range(2400):
            found = [v for v in views if v.get("kind") == kind]
            if found:
                return found[-1]
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 120)
        raise AssertionError(f"no {kind} view")

    async with provider:
        provider_config = (
            f'\n[provider]\nadapter = "openai-chat"\nbase_url = "{provider.base_url}"\n'
            'model = "m"\napi_key_env = "FAKE_PROVIDER_KEY"\nstream = false\n'
            "[policy]\nguarded = []\n"
        )
        config = write_config(
            {"notes": notes_stdio()}, plugins=("mcp", "openai", "webui"), extra=provider_config
        )
        host = Host.load(config)
        server = WebServer(host, port=0, database=ConversationStore(tmp_path / "chats.sqlite3"))
        await server.start()
        try:
            async with aiohttp.ClientSession() as client:
                async with client.get(server.url) as response:
                    page = await response.text()
                marker = '<meta name="csrf-token" content="'
                start = page.index(marker) + len(marker)
                headers = {"X-CSRF-Token": page[start : page.index('"', start)]}
                async with client.get(server.url + "static/elicit.js") as script:
                    assert script.status == 200
                async with client.post(
                    server.url + "api/conversations", json={}, headers=headers
                ) as made:
                    cid = (await made.json())["id"]
                url = f"{server.url}api/conversations/{cid}/"
                async with client.get(url + "events") as events:
                    reader = asyncio.ensure_future(read_events(events))
                    await wait_kind("hello")
                    async with client.post(
                        url + "messages", json={"text": "book a table"}, headers=headers
                    ) as sent:
                        assert sent.status == 202
                    asked = await wait_kind("elicitation")
                    assert asked["source"] == "MCP server 'notes'"
                    assert [f["name"] for f in asked["fields"]] == ["day", "guests"]
                    assert asked["fields"][1]["type"] == "integer"
                    answer_url = url + f"elicitations/{asked['id']}"
                    async with client.post(
                        answer_url,
                        json={"action": "accept", "content": {"day": "x", "guests": "four"}},
                        headers=headers,
                    ) as wrong:
                        assert wrong.status == 409
                        assert "guests" in (await wrong.json())["error"]
                    async with client.post(
                        answer_url,
                        json={"action": "accept", "content": {"day": "2026-12-24", "guests": 4}},
                        headers=headers,
                    ) as right:
                        assert right.status == 200
                    await wait_kind("finished")
                    reader.cancel()
        finally:
            await server.close()
            server.store.close()
            await host.aclose()
    assert any(v.get("kind") == "elicitation_done" for v in views)
    assert "booked 2026-12-24 for 4" in json.dumps(views)
