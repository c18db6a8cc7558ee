"""Text the ledger stores that UTF-8 cannot encode as it is: a file name that is not UTF-8."""

from __future__ import annotations

import json
import os
from pathlib import Path

from loop_support import make_host, scripted_loop

import toolwire
from toolwire.loop._codec import stored_json
from toolwire.testing import tool_call


def test_a_lone_surrogate_is_stored_as_its_escape_and_reads_back_the_same() -> None:
    name = os.fsdecode(b"report-\xff.txt")
    text = stored_json({"files": [name], name: 1})
    text.encode("utf-8")  # what SQLite and PostgreSQL need
    assert json.loads(text) == {"files": [name], name: 1}


async def test_a_file_name_that_is_not_utf8_does_not_poison_the_run(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / os.fsdecode(b"report-\xff.txt")).write_bytes(b"x")
    charged: list[int] = []

    @toolwire.tool(side_effects="read_only", idempotent=True)
    def listing() -> list[str]:
        """Name the files."""
        return sorted(os.listdir(folder))

    @toolwire.tool(side_effects="external_spend", idempotent=False)
    def charge(amount: int) -> str:
        """Charge an amount."""
        charged.append(amount)
        return f"charged {amount}"

    host = make_host(tmp_path, [listing, charge])
    script = [[tool_call("listing", {})], [tool_call("charge", {"amount": 5})], "done"]
    loop, _ = scripted_loop(host, script)
    run = await loop.run("list, then charge")
    assert run.stop_reason == "answered", run.error
    assert charged == [5]
    saved = loop.load(run.id)
    assert saved.stop_reason == "answered"
    results = [m for m in saved.messages if isinstance(m, toolwire.ToolResultMessage)]
    assert results[0].result.data == [os.fsdecode(b"report-\xff.txt")]
    assert results[1].result.status == toolwire.ToolStatus.OK
