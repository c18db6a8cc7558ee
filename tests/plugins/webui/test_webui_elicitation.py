"""A tool's question to the person (toolwire.elicitation) as a form on the chat page, in a real
headless Chromium: fields from the question's schema, outside text kept inert, the answer
reaching the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import toolwire
from toolwire import Host
from toolwire.config import load_config
from toolwire.elicitation import ElicitationRequest, elicit
from toolwire.testing import FakeOpenAIChatServer, tool_call
from toolwire_webui import ConversationStore, WebServer

HOSTILE = '<img src=x onerror="window.__pwned=1">Which day?'


@toolwire.tool(side_effects="read_only")
async def book_table() -> str:
    """Book a table, asking the person for the day and the party."""
    answer = await elicit(
        ElicitationRequest(
            source="the booking service",
            message=HOSTILE,
            schema={
                "type": "object",
                "properties": {
                    "day": {"type": "string", "title": "Day"},
                    "guests": {"type": "integer", "title": "Guests"},
                    "terrace": {"type": "boolean", "title": "Terrace"},
                    "time": {"type": "string", "enum": ["19:00", "21:00"]},
                },
                "required": ["day", "guests"],
            },
        )
    )
    if answer.action != "accept" or answer.content is None:
        return f"not booked: {answer.action}"
    content = answer.content
    return (
        f"booked {content['day']} for {content['guests']} at {content.get('time')}, "
        f"terrace {content.get('terrace')}"
    )


class _Tools:
    @toolwire.hookimpl
    def toolwire_tools(self) -> list[toolwire.Tool]:
        return [book_table]


async def test_the_page_shows_a_form_and_the_answer_reaches_the_tool(
    browser_page: Any, tmp_path: Path
):
    page = browser_page
    provider = FakeOpenAIChatServer([tool_call("book_table", {}), "Booked."])
    await provider.start()
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["openai", "webui"]\n[provider]\nadapter = "openai-chat"\n'
        f'base_url = "{provider.base_url}"\nmodel = "fake"\n'
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    host = Host.load(load_config(config), plugins=[_Tools()])
    server = WebServer(host, port=0, database=ConversationStore(tmp_path / "chats.sqlite3"))
    await server.start()
    try:
        await page.goto(server.url)
        await page.fill("#prompt", "Book a table")
        await page.press("#prompt", "Enter")
        form = page.locator("form.elicitation")
        await form.wait_for()
        assert HOSTILE in (await form.text_content() or "")
        assert await page.evaluate("() => window.__pwned === undefined")
        assert await form.locator("img").count() == 0
        await form.get_by_label("Day *").fill("2026-12-24")
        await form.get_by_label("Guests *").fill("4")
        await form.get_by_label("Terrace").check()
        await form.get_by_label("time").select_option("21:00")
        await form.locator("button[type=submit]").click()
        await page.wait_for_function(
            "() => document.getElementById('transcript').textContent.includes('Booked.')"
        )
        await page.wait_for_function(
            "() => document.querySelector('form.elicitation .elicit-status')"
            ".textContent.includes('accept')"
        )
        assert page.errors == []
        record = server.store.get(next(iter(server.store.list())).id)
        assert record is not None
        assert "booked 2026-12-24 for 4 at 21:00, terrace True" in str(record.run)
    finally:
        await server.close()
        server.store.close()
        await host.aclose()
        await provider.close()
