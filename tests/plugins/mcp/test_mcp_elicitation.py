"""A server's elicitation put to the person: asked on the terminal in `toolwire chat`, answered
by whatever elicitor the surface set, refused clearly in batch (nobody to ask)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from toolwire import Host, ToolCallingLoop
from toolwire.elicitation import ElicitationAnswer, ElicitationRequest, eliciting

SCRIPT = (
    '\n[provider]\nadapter = "scripted"\n[provider.options]\nscript = [\n'
    '  { tool_calls = [{ name = "notes_book", arguments = {} }] },\n'
    '  "Done.",\n]\n'
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
