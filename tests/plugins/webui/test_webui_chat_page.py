"""The chat page as people use it, at a phone's width and a laptop's, light and dark.

Each test runs in Debian's headless Chromium (Playwright) at 390 and 1280 px wide, with the
system asking for a light and a dark theme, against a real server and a fake provider; it keeps
a screenshot of what it checked in ``build/test-artifacts/webui``. The accessibility check runs
axe-core, fetched from the npm registry into a cache on first use (never committed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from webui.conftest import CHROMIUM, CHROMIUM_FLAGS, HANG

import toolwire
from toolwire.messages import AssistantMessage, TextPart, ToolCall
from toolwire.testing import ErrorReply, Reply, ScriptedModel, tool_call

WIDTHS = (390, 1280)
SCHEMES = ("light", "dark")
LONG_TEXT = "".join(f"line {i:04d} of a long streamed argument. " for i in range(120))
AXE_VERSION = "4.14.1"
ANSWER = (
    "# Findings\n\n"
    "The page says **two** things [2], and `code` too [1].\n\n"
    "- first point\n- second point\n\n"
    "```python\nprint('hi')\n```\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    '<img src=x onerror="window.__pwned=1"> stays text.'
)


@pytest.fixture(params=[(w, s) for w in WIDTHS for s in SCHEMES], ids=lambda p: f"{p[0]}-{p[1]}")
def look(request: pytest.FixtureRequest) -> tuple[int, str]:
    """(width, colour scheme) of the page."""
    return request.param


@pytest.fixture
async def page(look: tuple[int, str]) -> AsyncIterator[Any]:
    """A page of Debian's headless chromium at the width and colour scheme of ``look``."""
    playwright_api = pytest.importorskip("playwright.async_api")
    if not os.path.exists(CHROMIUM):  # noqa: ASYNC240 (one stat before the browser starts)
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)")
    width, scheme = look
    async with playwright_api.async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True
        )
        try:
            context = await browser.new_context(
                viewport={"width": width, "height": 844 if width < 600 else 860},
                color_scheme=scheme,
                permissions=["clipboard-read", "clipboard-write"],
            )
            context.set_default_timeout(HANG * 1000)
            opened = await context.new_page()
            opened.errors = []
            opened.on("pageerror", lambda exc: opened.errors.append(str(exc)))
            yield opened
        finally:
            await browser.close()


@pytest.fixture
def shots(look: tuple[int, str]) -> Any:
    """``await shot(page, name)`` keeps a screenshot named after the test's look."""
    folder = Path(__file__).resolve().parents[3] / "build" / "test-artifacts" / "webui"
    folder.mkdir(parents=True, exist_ok=True)

    async def shot(page: Any, name: str, *, full_page: bool = False) -> Path:
        path = folder / f"{name}-{look[0]}-{look[1]}.png"
        await page.screenshot(path=str(path), full_page=full_page)
        return path

    return shot


async def ask(page: Any, server: Any, text: str) -> None:
    await page.goto(server.url)
    await send(page, text)


async def send(page: Any, text: str) -> None:
    """Type ``text`` and send it once the page takes a message: while a turn is still ending
    (its answer shown, its end not yet read) the send button is disabled and Enter does
    nothing."""
    await page.wait_for_selector("#send:not([disabled])")
    await page.fill("#prompt", text)
    await page.press("#prompt", "Enter")


async def background(page: Any, selector: str = "body") -> tuple[int, ...]:
    color = await page.eval_on_selector(selector, "e => getComputedStyle(e).backgroundColor")
    return tuple(int(n) for n in re.findall(r"\d+", color)[:3])


def dark(rgb: tuple[int, ...]) -> bool:
    return sum(rgb) / 3 < 80


# -- 1. every width, a dark theme with a switch -------------------------------------------------


async def test_every_width_fits_and_the_theme_follows_the_system_with_a_switch(
    chat: Any, page: Any, look: tuple[int, str], shots: Any
):
    width, scheme = look
    server, _ = await chat(["Hello there."])
    await ask(page, server, "Say hello")
    await page.wait_for_selector("text=Hello there.")
    # Nothing scrolls sideways; the composer takes the width; Send and Stop are on screen.
    overflow = await page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    box = await page.locator("#prompt").bounding_box()
    assert box["width"] >= 0.8 * min(width, 900) - 260 * (width > 760)
    for button in ("#send", "#stop"):
        found = await page.locator(button).bounding_box()
        assert found["x"] >= 0
        assert found["x"] + found["width"] <= width
    sidebar = page.locator("#sidebar")
    if width < 760:
        # The list of conversations is a drawer, opened by its button and closed by Escape.
        assert not await sidebar.is_visible()
        await page.click("#open-drawer")
        await page.wait_for_function(
            "() => getComputedStyle(document.getElementById('sidebar')).visibility === 'visible'"
        )
        assert await page.get_attribute("#open-drawer", "aria-expanded") == "true"
        await shots(page, "drawer")
        focused = await page.evaluate("() => document.activeElement.dataset.id || ''")
        assert focused  # the conversation list has the focus
        await page.keyboard.press("Escape")
        await page.wait_for_function("() => !document.getElementById('sidebar').matches('.open')")
    else:
        assert await sidebar.is_visible()
        assert not await page.locator("#open-drawer").is_visible()
    assert dark(await background(page)) == (scheme == "dark")
    await shots(page, "layout")
    # The switch: the system's choice, then light, then dark, kept across a reload.
    await page.click("#theme")
    assert await page.get_attribute("html", "data-theme") == "light"
    assert not dark(await background(page))
    await page.click("#theme")
    assert await page.get_attribute("html", "data-theme") == "dark"
    assert dark(await background(page))
    await page.reload()
    await page.wait_for_selector("text=Hello there.")
    assert await page.get_attribute("html", "data-theme") == "dark"
    assert page.errors == []


# -- 2. collapsed cards show that they are alive ------------------------------------------------


async def test_a_collapsed_card_shows_the_value_being_written_its_progress_and_time(
    chat: Any, page: Any, shots: Any
):
    server, _ = await chat(
        [Reply(turn=tool_call("slow_echo", {"text": LONG_TEXT}), pace=0.01), "Echoed."]
    )
    await ask(page, server, "Echo a long text, please.")
    card = page.locator(".card").first
    await card.wait_for()
    assert "open" not in (await card.get_attribute("class") or "")  # collapsed by default
    # The live line follows the value past its first characters while it streams.
    await page.wait_for_function(
        "() => { const t = document.querySelector('.card-preview')?.textContent || '';"
        " return t.includes('line 0030') && "
        "document.querySelector('.card').dataset.status === 'streaming'; }"
    )
    assert (await card.locator(".preview-key").text_content()) == "text: "
    await shots(page, "collapsed-streaming")
    # While the tool runs, the collapsed card shows the bar, its percent and message, the time.
    await page.wait_for_function(
        "() => /^\\d+%$/.test(document.querySelector('.card .percent')?.textContent || '')"
    )
    assert await card.locator(".progress").is_visible()
    assert "step" in (await card.locator(".progress .message").text_content() or "")
    assert await card.locator(".progress").get_attribute("role") == "status"
    await page.wait_for_function(
        "() => /\\d s$/.test(document.querySelector('.card .card-time')?.textContent || '')"
    )
    await shots(page, "collapsed-progress")
    await page.wait_for_selector('.card[data-status="ok"]')
    await page.wait_for_selector("text=Echoed.")
    assert (await card.locator(".percent").text_content()) == "100%"
    took = await card.locator(".card-time").text_content()
    # After a reload the preview shows the values, and the time the call took stays.
    await page.reload()
    await page.wait_for_selector('.card[data-status="ok"]')
    preview = await page.locator(".card-preview").first.text_content() or ""
    assert preview.startswith("text=line 0000 of a long")
    assert await page.locator(".card .card-time").first.text_content() == took
    assert page.errors == []


# -- 3. readable answers ------------------------------------------------------------------------


async def test_an_answer_is_markdown_with_citations_sources_and_copy_buttons(
    chat: Any, page: Any, shots: Any
):
    server, _ = await chat([tool_call("fetch_page", {"url": "https://example.org/a"}), ANSWER])
    await ask(page, server, "Read the page and sum it up.")
    answer = page.locator(".message.assistant").last
    await answer.locator("h1").wait_for()
    assert await answer.locator("h1").text_content() == "Findings"
    assert await answer.locator("strong").text_content() == "two"
    assert await answer.locator("li:not(.answer-sources li)").count() >= 2
    assert await answer.locator("td").all_text_contents() == ["1", "2"]
    assert await answer.locator("pre code").text_content() == "print('hi')\n"
    assert await page.evaluate("() => window.__pwned ?? null") is None
    assert await page.locator("#transcript img").count() == 0
    assert "<img src=x" in (await answer.text_content() or "")
    # [2] links to the second source under the answer (the one with an http address).
    cite = answer.locator("a.cite", has_text="[2]")
    target = (await cite.get_attribute("href") or "")[1:]
    source = page.locator(f"#{target}")
    assert "example.org/a?b=<c>" in (await source.text_content() or "")
    assert await source.locator("a").get_attribute("href") == "https://example.org/a?b=%3Cc%3E"
    first = page.locator(f"#{target[:-2]}-1")  # the javascript: source: text, never a link
    assert await first.locator("a").count() == 0
    await cite.click()
    assert await page.evaluate("() => location.hash") == f"#{target}"
    # Copy buttons: the code block, and on the card its arguments and its result.
    await answer.locator("pre button.copy").click()
    assert await page.evaluate("() => navigator.clipboard.readText()") == "print('hi')\n"
    card = page.locator(".card").first
    await card.locator(".card-toggle").click()
    await card.locator(".card-body h4", has_text="Arguments").locator("button.copy").click()
    copied = await page.evaluate("() => navigator.clipboard.readText()")
    assert json.loads(copied) == {"url": "https://example.org/a"}
    await card.locator(".result-box button.copy").click()
    assert "bold" in await page.evaluate("() => navigator.clipboard.readText()")
    await shots(page, "markdown", full_page=True)
    assert page.errors == []


# -- 4. keyboard and screen readers -------------------------------------------------------------


async def test_cards_and_conversations_work_from_the_keyboard(
    chat: Any, page: Any, look: tuple[int, str], shots: Any
):
    server, _ = await chat([tool_call("slow_echo", {"text": "hi"}), "Said hi.", "Again."])
    await ask(page, server, "Say hi through the tool.")
    await page.wait_for_selector("text=Said hi.")
    toggle = page.locator(".card-toggle").first
    assert await toggle.get_attribute("aria-expanded") == "false"
    # Tab reaches the card's header; Enter opens it.
    for _ in range(40):
        await page.keyboard.press("Tab")
        if await page.evaluate("() => document.activeElement.matches('.card-toggle')"):
            break
    else:
        pytest.fail("Tab never reached a card header")
    await page.keyboard.press("Enter")
    assert await toggle.get_attribute("aria-expanded") == "true"
    await page.keyboard.press("Enter")
    assert await toggle.get_attribute("aria-expanded") == "false"
    # One key expands or collapses every card (outside a text field), and the choice is kept.
    await page.keyboard.press("e")
    assert await toggle.get_attribute("aria-expanded") == "true"
    assert await page.get_attribute("#toggle-cards", "aria-pressed") == "true"
    await shots(page, "keyboard")
    await page.keyboard.press("e")
    assert await toggle.get_attribute("aria-expanded") == "false"
    # Live regions for the status line, each card's progress, and announcements.
    assert await page.get_attribute("#status", "role") == "status"
    assert await page.get_attribute("#announcer", "aria-live") == "polite"
    assert await page.text_content("#announcer") == "Every card collapsed"
    # A second conversation, then back to the first one from the keyboard.
    await page.click("#new-conversation") if look[0] >= 760 else await _new_from_drawer(page)
    await page.fill("#prompt", "Another one")
    await page.press("#prompt", "Enter")
    await page.wait_for_selector("text=Again.")
    if look[0] < 760:
        await page.click("#open-drawer")
    first = page.locator("#conversations button", has_text="Say hi through the tool.")
    await first.focus()
    await page.keyboard.press("Enter")
    await page.wait_for_selector("text=Said hi.")
    assert await first.get_attribute("aria-current") == "true"
    assert page.errors == []


async def _new_from_drawer(page: Any) -> None:
    await page.click("#open-drawer")
    await page.click("#new-conversation")


# -- 5. approvals people do not tire of ---------------------------------------------------------


async def test_edited_arguments_are_checked_first_and_a_grant_spares_the_next_question(
    chat: Any, page: Any, shots: Any
):
    server, provider = await chat(
        [
            tool_call("write_note", {"path": "a.txt", "body": "one"}),
            tool_call("write_note", {"path": "b.txt", "body": "two"}),
            tool_call("write_note", {"path": "c.txt", "body": "three"}),
            "Wrote three.",
        ]
    )
    await ask(page, server, "Write three notes.")
    first = page.locator('.card[data-status="awaiting"]').first
    await first.wait_for()
    await first.locator("button.edit").click()
    editor = first.locator("textarea.edit-arguments")
    assert json.loads(await editor.input_value()) == {"path": "a.txt", "body": "one"}
    assert "\n  " in await editor.input_value()  # formatted, one argument a line
    # Arguments the schema refuses are said so before anything is sent.
    await editor.fill('{"path": 5, "body": "one"}')
    await first.locator(".check .error").wait_for()
    assert "path must be string" in (await first.locator(".check").text_content() or "")
    await first.locator("button.approve").click()
    assert "nothing was sent" in (await first.locator(".error[role=alert]").text_content() or "")
    assert len(provider.requests) == 1
    await shots(page, "approval-editor")
    await editor.fill('{"path": "edited.txt", "body": "one"}')
    await first.locator(".check .check-ok").wait_for()
    await first.locator("button.approve").click()
    done = page.locator('.card[data-status="ok"]').first
    await done.wait_for()
    assert "edited" in (await done.locator(".chips").text_content() or "")
    assert "arguments you edited" in (await done.locator(".card-notes").text_content() or "")
    # The second call: allowed for the rest of this conversation; the third runs unasked.
    second = page.locator('.card[data-status="awaiting"]').first
    await second.wait_for()
    scopes = await second.locator("select.grant-scope option").all_text_contents()
    assert scopes[0] == "this tool (write_note)"
    assert any("writes_files" in s for s in scopes)
    await second.locator("button.allow-conversation").click()
    await page.wait_for_selector("text=Wrote three.")
    third = page.locator(".card").nth(2)
    assert "Ran without asking" in (await third.locator(".card-notes").text_content() or "")
    assert await third.get_attribute("data-status") == "ok"
    # Listed, and revocable, in the settings.
    await page.click("#open-settings")
    grant = page.locator("#grant-list li")
    await grant.wait_for()
    assert "tool write_note" in (await grant.text_content() or "")
    assert "in this conversation" in (await grant.text_content() or "")
    await shots(page, "settings")
    await grant.locator("button").click()
    await page.wait_for_selector("#grant-empty:not([hidden])")
    assert page.errors == []


# -- 6. the controls people expect --------------------------------------------------------------


async def test_tool_choice_retry_regenerate_and_a_cancelled_call(chat: Any, page: Any, shots: Any):
    server, provider = await chat(
        [
            "No tools used.",
            ErrorReply(status=400, message="the provider is having a bad day"),
            "Recovered.",
            "Another take.",
            tool_call("wait_forever", {"seconds": 600}),
        ]
    )
    await page.goto(server.url)
    await page.wait_for_function(
        "() => document.querySelectorAll('#tool-options option').length > 0"
    )
    # The count of the message being written, with the instructions sent along.
    await page.fill("#prompt", "Answer without tools, please.")
    await page.wait_for_function(
        "() => /^≈ [1-9]\\d* tokens/.test(document.getElementById('token-count').textContent)"
    )
    await page.select_option("#tool-choice", "none")
    await page.press("#prompt", "Enter")
    await page.wait_for_selector("text=No tools used.")
    assert provider.bodies[0]["tool_choice"] == "none"
    assert await page.input_value("#tool-choice") == "auto"  # for one message only
    # A provider error ends the turn with a Retry button.
    await send(page, "And now?")
    error = page.locator(".note.error")
    await error.wait_for()
    assert "bad day" in (await error.text_content() or "")
    await shots(page, "provider-error")
    await error.locator("button.retry").click()
    await page.wait_for_selector("text=Recovered.")
    assert provider.bodies[2]["messages"][-1] == {"role": "user", "content": "And now?"}
    # Regenerate the last answer: asked again without it, and it is replaced on the page.
    await page.click("button.regenerate")
    await page.wait_for_selector("text=Another take.")
    assert await page.locator("text=Recovered.").count() == 0
    assert provider.bodies[3]["messages"][-1] == {"role": "user", "content": "And now?"}
    # A stopped call is labelled cancelled, not failed.
    await send(page, "Wait a long time.")
    await page.wait_for_selector('.card[data-status="running"]')
    await page.click("#stop")
    card = page.locator('.card[data-status="cancelled"]')
    await card.wait_for()
    assert await card.locator(".card-state").text_content() == "cancelled"
    assert page.errors == []


# -- accessibility ------------------------------------------------------------------------------


def axe_source() -> str:
    """axe-core's script, from the npm registry into a cache on first use."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolwire-tests"
    script = cache / f"axe-core-{AXE_VERSION}" / "axe.min.js"
    if not script.is_file():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is missing: it fetches axe-core for the accessibility check")
        folder = script.parent
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "pack", f"axe-core@{AXE_VERSION}", "--silent"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"npm pack axe-core@{AXE_VERSION} failed: {done.stderr.strip()}")
        with tarfile.open(folder / done.stdout.strip().splitlines()[-1]) as archive:
            member = archive.getmember("package/axe.min.js")
            extracted = archive.extractfile(member)
            assert extracted is not None
            script.write_bytes(extracted.read())
    return script.read_text(encoding="utf-8")


async def test_axe_finds_no_serious_accessibility_violation(chat: Any, page: Any, shots: Any):
    server, _ = await chat(
        [
            tool_call("fetch_page", {"url": "https://example.org/a"}),
            ANSWER,
            tool_call("write_note", {"path": "a.txt", "body": "hello"}),
        ]
    )
    await ask(page, server, "Read the page and sum it up.")
    await page.wait_for_selector(".answer-sources")
    await send(page, "Now write a note.")
    await page.wait_for_selector('.card[data-status="awaiting"]')
    await page.locator(".card-toggle").first.click()  # an open card with its result too
    source = axe_source()
    # Evaluated through the DevTools protocol: the page's CSP still forbids inline scripts.
    await page.evaluate(f"() => {{ {source}\n; window.__axe = axe; }}")
    report = await page.evaluate(
        "async () => (await window.__axe.run(document, {resultTypes: ['violations']}))"
        ".violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}))"
    )
    await shots(page, "axe", full_page=True)
    serious = [v for v in report if v["impact"] in ("serious", "critical")]
    assert serious == [], json.dumps(serious, indent=2)


class _ProviderSearch(ScriptedModel):
    """A model whose provider runs a web search itself (a provider-side tool), then answers."""

    api = "provider-search"

    def __init__(self, config: Any = None, transport: Any = None) -> None:
        search = ToolCall(
            id="ws_1",
            name="web_search",
            arguments={"query": "tool cards"},
            provider_executed=True,
        )
        answer = AssistantMessage(parts=(search, TextPart("The provider searched for me.")))
        super().__init__(config, transport, script=[answer])


class _ProviderPlugin:
    @toolwire.hookimpl
    def toolwire_provider_adapters(self, settings: Any) -> list[type]:
        return [_ProviderSearch]


async def test_a_tool_the_provider_runs_is_shown_as_such(
    page: Any, shots: Any, tmp_path: Path
) -> None:
    from toolwire import Host, load_config
    from toolwire_webui import WebServer

    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[provider]\nadapter = "provider-search"\nstream = true\n'
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    host = Host.load(load_config(config), plugins=[_ProviderPlugin()])
    server = WebServer(host, port=0, database=":memory:", grants=tmp_path / "grants.toml")
    await server.start()
    try:
        await ask(page, server, "Search the web.")
        await page.wait_for_selector("text=The provider searched for me.")
        card = page.locator(".card")
        await page.wait_for_selector('.card[data-status="provider"]')
        assert await card.locator(".chip.provider").text_content() == "run by the provider"
        assert "unknown tool" not in (await card.text_content() or "")
        assert await card.locator(".card-state").text_content() == "run by the provider"
        await shots(page, "provider-tool")
    finally:
        await server.close()
        server.store.close()
        await host.aclose()
    assert page.errors == []
