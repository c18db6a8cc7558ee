"""The chat page in a real headless Chromium, against a real server and a fake provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolwire.testing import Reply, tool_call

LONG_TEXT = "".join(f"line {i:04d} of a long streamed argument. " for i in range(160))


RECORD_PROGRESS = """() => {
  window.__fractions = [];
  new MutationObserver((changes) => {
    for (const change of changes) {
      if (change.target.tagName === "PROGRESS" && change.target.hasAttribute("value")) {
        window.__fractions.push(change.target.value);
      }
    }
  }).observe(document.getElementById("transcript"),
             {attributes: true, subtree: true, attributeFilter: ["value"]});
}"""


async def ask(page: Any, server: Any, text: str) -> None:
    await page.goto(server.url)
    await page.fill("#prompt", text)
    await page.press("#prompt", "Enter")


async def test_a_card_fills_in_while_its_arguments_stream_then_moves_its_progress_bar(
    chat: Any, browser_page: Any, artifacts: Path
):
    page = browser_page
    server, _ = await chat(
        [Reply(turn=tool_call("slow_echo", {"text": LONG_TEXT}), pace=0.005), "Echoed."]
    )
    await ask(page, server, "Echo a long text, please.")
    card = page.locator(".card").first
    await card.wait_for()
    await page.evaluate(RECORD_PROGRESS)
    # Cards start collapsed (the default setting): the one-line preview shows, the body does not.
    assert "open" not in (await card.get_attribute("class") or "")
    await card.locator(".card-head").click()
    assert await card.locator(".card-title").text_content() == "Slow echo"
    assert await card.locator(".card-icon").text_content() == "🐢"
    assert await card.locator(".chip").first.text_content() == "read_only"
    value = card.locator('.arg-value[data-key="text"]')
    await page.wait_for_function(
        "() => { const v = document.querySelector('.arg-value[data-key=text]');"
        " return v && v.textContent.length > 200; }"
    )
    partial = await value.text_content()
    status = await card.get_attribute("data-status")
    assert status == "streaming"  # the call is not complete yet
    assert partial is not None
    assert 200 < len(partial) < len(LONG_TEXT)
    assert LONG_TEXT.startswith(partial)
    # The progress bar moves while the tool runs: every value it takes is recorded.
    await page.wait_for_selector('.card[data-status="ok"]')
    fractions = await page.evaluate("() => window.__fractions")
    assert fractions == sorted(fractions)
    assert len(set(fractions)) >= 4, fractions
    await page.wait_for_selector('.card[data-status="ok"]')
    assert await value.text_content() == LONG_TEXT
    result = await card.locator("pre.result").text_content()
    assert result == f"echo: {len(LONG_TEXT)} characters"
    await page.wait_for_selector(".message.assistant")
    assert await page.locator(".message.assistant").last.text_content() == "Echoed."
    await page.screenshot(path=str(artifacts / "webui-card.png"), full_page=True)
    assert page.errors == []


async def test_approve_resumes_the_run_with_edits_and_deny_tells_the_model(
    chat: Any, browser_page: Any, artifacts: Path
):
    page = browser_page
    server, provider = await chat(
        [
            tool_call("write_note", {"path": "a.txt", "body": "hello"}),
            tool_call("write_note", {"path": "b.txt", "body": "bye"}),
            "Wrote one, skipped one.",
        ]
    )
    await ask(page, server, "Write two notes.")
    first = page.locator('.card[data-status="awaiting"]').first
    await first.wait_for()
    assert await first.locator(".card-title").text_content() == "Write note"
    assert "writes_files" in await first.locator(".card-head").text_content()
    await first.locator("button.edit").click()
    await first.locator("textarea.edit-arguments").fill('{"path": "edited.txt", "body": "hello"}')
    await first.locator("button.approve").click()
    await page.wait_for_selector('.card[data-status="ok"]')
    done = page.locator('.card[data-status="ok"]')
    assert await done.locator("pre.result").text_content() == "wrote 5 characters to edited.txt"
    # The card shows the arguments the call ran with: the edited ones.
    assert await done.locator('.arg-value[data-key="path"]').text_content() == "edited.txt"
    second = page.locator('.card[data-status="awaiting"]')
    await second.wait_for()
    await second.locator("input.deny-message").fill("Not b.txt, please.")
    await page.screenshot(path=str(artifacts / "webui-approval.png"))
    await second.locator("button.deny").click()
    await page.wait_for_selector('.card[data-status="denied"] pre.result')
    await page.wait_for_selector("text=Wrote one, skipped one.")
    tool_messages = [m for m in provider.bodies[2]["messages"] if m["role"] == "tool"]
    assert "wrote 5 characters to edited.txt" in tool_messages[0]["content"]
    assert "Not b.txt, please." in tool_messages[1]["content"]
    assert page.errors == []


async def test_ask_for_another_call_sends_the_call_back_with_the_message(
    chat: Any, browser_page: Any
):
    page = browser_page
    server, provider = await chat(
        [
            tool_call("write_note", {"path": "/etc/motd", "body": "hi"}),
            tool_call("write_note", {"path": "notes/motd.txt", "body": "hi"}),
            "Wrote it under notes/.",
        ]
    )
    await ask(page, server, "Write a note.")
    first = page.locator('.card[data-status="awaiting"]').first
    await first.wait_for()
    await first.locator("input.deny-message").fill("Write under notes/ instead.")
    await first.locator("button.retry").click()
    await page.wait_for_selector('.card[data-status="error"] pre.result')
    sent_back = page.locator('.card[data-status="error"]')
    assert await sent_back.locator("pre.result").text_content() == "Write under notes/ instead."
    second = page.locator('.card[data-status="awaiting"]')
    await second.wait_for()
    assert await second.locator('.arg-value[data-key="path"]').text_content() == "notes/motd.txt"
    await second.locator("button.approve").click()
    await page.wait_for_selector("text=Wrote it under notes/.")
    tool_messages = [m for m in provider.bodies[1]["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["content"].endswith("Write under notes/ instead.")
    assert page.errors == []


async def test_stop_cancels_the_turn_and_answers_the_running_call(chat: Any, browser_page: Any):
    page = browser_page
    server, provider = await chat([tool_call("wait_forever", {"seconds": 600}), "never"])
    await ask(page, server, "Wait a long time.")
    await page.wait_for_selector('.card[data-status="running"]')
    assert await page.is_enabled("#stop")
    assert not await page.is_enabled("#send")
    await page.click("#stop")
    await page.wait_for_selector('.note.finished[data-stop="cancelled"]')
    card = page.locator(".card")
    await page.wait_for_selector('.card[data-status="cancelled"]')
    assert await card.locator(".card-state").text_content() == "cancelled"
    assert "Cancelled" in (await card.locator("pre.result").text_content() or "")
    assert await page.is_enabled("#send")
    assert len(provider.requests) == 1
    assert page.errors == []


async def test_a_hostile_result_arguments_and_answer_stay_inert_text(
    chat: Any, browser_page: Any, hostile: str
):
    page = browser_page
    server, _ = await chat(
        [tool_call("fetch_page", {"url": hostile}), f"Here it is: {hostile}"],
        cards_collapsed=False,
    )
    await ask(page, server, hostile)
    await page.wait_for_selector('.card[data-status="ok"]')
    await page.wait_for_selector(".message.assistant")
    await page.wait_for_timeout(300)  # give an injected handler every chance to fire
    injected = await page.evaluate(
        "() => ({pwned: window.__pwned ?? null,"
        " imgs: document.querySelectorAll('#transcript img').length,"
        " scripts: document.querySelectorAll('#transcript script').length,"
        " bold: document.querySelectorAll('#transcript b, #injected').length,"
        " links: [...document.querySelectorAll('#transcript a')].map(a => a.href)})"
    )
    assert injected == {
        "pwned": None,
        "imgs": 0,
        "scripts": 0,
        "bold": 0,
        # The card's source, and the same source listed under the answer.
        "links": ["https://example.org/a?b=%3Cc%3E", "https://example.org/a?b=%3Cc%3E"],
    }
    card = page.locator(".card")
    assert await card.locator("pre.result").text_content() == hostile
    assert await card.locator('.arg-value[data-key="url"]').text_content() == hostile
    assert await page.locator(".message.user").text_content() == hostile
    answer = page.locator(".message.assistant")
    assert await answer.locator("p").text_content() == f"Here it is: {hostile}"
    assert hostile in (await answer.locator(".answer-sources").text_content() or "")
    sources = await card.locator(".sources").text_content()
    assert hostile in (sources or "")  # the javascript: source is shown as text, not a link
    assert page.errors == []


async def test_conversations_are_listed_and_open_again_from_the_log(chat: Any, browser_page: Any):
    page = browser_page
    server, _ = await chat(
        [
            Reply(turn=tool_call("slow_echo", {"text": "hi"}), delay=1.0),
            "Said hi.",
            "Second conversation.",
        ]
    )
    await ask(page, server, "Say hi through the tool.")
    # While the model decides, a status line says so; the call's card then takes its place.
    await page.wait_for_selector("#status:not([hidden])")
    assert await page.text_content("#status-text") == "The model is deciding…"
    await page.wait_for_selector(".card")
    await page.wait_for_selector("text=Said hi.")
    assert await page.is_hidden("#status")
    await page.click("#new-conversation")
    await page.fill("#prompt", "Another one")
    await page.press("#prompt", "Enter")
    await page.wait_for_selector("text=Second conversation.")
    await page.goto(server.url)  # a fresh page: the list comes from SQLite
    titles = page.locator("#conversations li")
    await page.wait_for_function("() => document.querySelectorAll('#conversations li').length == 2")
    assert await titles.all_text_contents() == ["Another one", "Say hi through the tool."]
    await titles.nth(1).click()
    await page.wait_for_selector("text=Said hi.")
    card = page.locator(".card")
    assert await card.get_attribute("data-status") == "ok"
    assert await page.locator(".message.user").text_content() == "Say hi through the tool."
    assert page.errors == []


async def test_a_page_opened_in_the_middle_of_a_turn_catches_up_and_follows_it(
    chat: Any, browser_page: Any
):
    page = browser_page
    server, _ = await chat(
        [Reply(turn=tool_call("slow_echo", {"text": LONG_TEXT}), pace=0.004), "Echoed."],
        cards_collapsed=False,
    )
    await ask(page, server, "Echo it.")
    await page.wait_for_function(
        "() => { const v = document.querySelector('.arg-value[data-key=text]');"
        " return v && v.textContent.length > 100; }"
    )
    await page.reload()
    # The reloaded page rebuilds the card so far from the server, then follows the live stream.
    await page.wait_for_selector(".card")
    assert await page.locator(".message.user").text_content() == "Echo it."
    assert await page.is_enabled("#stop")
    await page.wait_for_selector('.card[data-status="ok"]')
    value = await page.locator('.arg-value[data-key="text"]').text_content()
    assert value == LONG_TEXT
    await page.wait_for_selector("text=Echoed.")
    assert await page.locator(".card").count() == 1
    assert page.errors == []
