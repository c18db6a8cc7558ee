"""The chat's HTTP API against a real server, a real host and a loopback fake provider."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from toolwire.testing import Reply, tool_call
from toolwire_webui import ConversationStore, WebServer, check_bind

LONG_TEXT = "".join(f"line {i:04d} of a long streamed argument. " for i in range(300))


def csrf_of(page: str) -> str:
    marker = '<meta name="csrf-token" content="'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


async def session_for(client: aiohttp.ClientSession, server: WebServer) -> dict[str, str]:
    async with client.get(server.url) as response:
        assert response.status == 200
        page = await response.text()
    return {"X-CSRF-Token": csrf_of(page)}


async def post(
    client: aiohttp.ClientSession, url: str, headers: dict[str, str], body: Any = None
) -> tuple[int, Any]:
    async with client.post(url, json=body or {}, headers=headers) as response:
        return response.status, await response.json()


async def new_conversation(
    client: aiohttp.ClientSession, server: WebServer, headers: dict[str, str]
) -> str:
    status, made = await post(client, server.url + "api/conversations", headers)
    assert status == 201, made
    return str(made["id"])


async def test_a_streamed_call_fills_its_card_key_by_key_then_runs_with_progress(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, _provider = await chat(
        [
            Reply(turn=tool_call("slow_echo", {"text": LONG_TEXT}), pace=0.002),
            "Echoed it.",
        ]
    )
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await stream.wait_kind("hello")
        status, _ = await post(client, url + "messages", headers, {"text": "echo a long text"})
        assert status == 202
        opened = await stream.wait_kind("card_open")
        assert (opened["title"], opened["icon"], opened["risk"]) == (
            "Slow echo",
            "🐢",
            ["read_only"],
        )
        first = await stream.wait_kind("arg_append", card=opened["card"])
        finished = await stream.wait_kind("finished")
    kinds = stream.kinds()
    # Pieces of the argument arrived before the call was complete, and add up to it.
    assert kinds.index("arg_append") < kinds.index("card_args")
    pieces = [v["text"] for v in stream.views if v["kind"] == "arg_append"]
    assert len(pieces) > 50
    assert "".join(pieces) == LONG_TEXT
    assert first["key"] == "text"
    fractions = [v["fraction"] for v in stream.views if v["kind"] == "card_progress"]
    assert fractions == sorted(fractions)
    assert fractions[-1] == 1.0
    assert len(fractions) == 5
    [result] = [v for v in stream.views if v["kind"] == "card_result"]
    assert result["status"] == "ok"
    assert result["text"] == f"echo: {len(LONG_TEXT)} characters"
    assert finished["stop_reason"] == "answered"
    assert any(v["kind"] == "text_final" and v["text"] == "Echoed it." for v in stream.views)
    assert "status" in kinds  # the model was shown deciding


async def test_a_second_message_continues_the_conversation(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, provider = await chat(["First answer.", "Second answer."])
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await post(client, url + "messages", headers, {"text": "one"})
        await stream.wait_kind("finished")
        await post(client, url + "messages", headers, {"text": "two"})
        await stream.wait_for(lambda v: v.get("kind") == "text_final" and "Second" in v["text"])
    second = provider.bodies[1]["messages"]
    assert [(m["role"], m.get("content")) for m in second] == [
        ("user", "one"),
        ("assistant", "First answer."),
        ("user", "two"),
    ]
    async with client.get(server.url + "api/conversations") as response:
        listed = (await response.json())["conversations"]
    assert [c["title"] for c in listed] == ["one"]


async def test_approve_runs_the_call_and_deny_tells_the_model(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, provider = await chat(
        [
            tool_call("write_note", {"path": "a.txt", "body": "hello"}),
            tool_call("write_note", {"path": "b.txt", "body": "bye"}),
            "Done.",
        ]
    )
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await post(client, url + "messages", headers, {"text": "write two notes"})
        first = await stream.wait_kind("card_awaiting")
        assert first["arguments"] == {"path": "a.txt", "body": "hello"}
        status, answer = await post(
            client, url + f"decisions/{first['call_id']}", headers, {"action": "maybe"}
        )
        assert status == 400
        assert "'maybe'" in answer["error"]
        assert "'approve', 'deny'" in answer["error"]
        status, _ = await post(
            client,
            url + f"decisions/{first['call_id']}",
            headers,
            {"action": "approve", "arguments": {"path": "edited.txt", "body": "hello"}},
        )
        assert status == 200
        result = await stream.wait_kind("card_result", card=first["card"])
        assert result["text"] == "wrote 5 characters to edited.txt"
        second = await stream.wait_for(
            lambda v: v.get("kind") == "card_awaiting" and v["card"] != first["card"]
        )
        status, answer = await post(client, url + "decisions/nope", headers, {"action": "deny"})
        assert status == 409
        assert second["call_id"] in answer["error"]
        await post(
            client,
            url + f"decisions/{second['call_id']}",
            headers,
            {"action": "deny", "message": "Not b.txt, please."},
        )
        denied = await stream.wait_kind("card_result", card=second["card"])
        assert denied["status"] == "denied"
        await stream.wait_kind("finished")
    tool_messages = [m for m in provider.bodies[2]["messages"] if m["role"] == "tool"]
    assert "Not b.txt, please." in tool_messages[1]["content"]


async def test_stop_cancels_the_running_tool_and_answers_the_call(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, provider = await chat([tool_call("wait_forever", {"seconds": 600}), "never sent"])
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await post(client, url + "messages", headers, {"text": "wait"})
        running = await stream.wait_kind("card_running")
        status, _ = await post(client, url + "stop", headers)
        assert status == 200
        finished = await stream.wait_kind("finished")
        result = await stream.wait_kind("card_result", card=running["card"])
    assert finished["stop_reason"] == "cancelled"
    assert result["status"] == "error"
    assert "Cancelled" in result["text"]
    assert len(provider.requests) == 1
    status, answer = await post(client, url + "stop", headers)
    assert status == 409
    assert "no running turn" in answer["error"]


async def test_the_log_is_kept_and_replayed_after_a_restart(
    chat: Any, client: aiohttp.ClientSession, views: Any, tmp_path: Path
):
    store = ConversationStore(tmp_path / "kept.sqlite3")
    server, _provider = await chat(
        [tool_call("slow_echo", {"text": "hi"}), "All done."], database=store
    )
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await post(client, url + "messages", headers, {"text": "echo hi"})
        await stream.wait_kind("finished")
    store.close()
    reopened = ConversationStore(tmp_path / "kept.sqlite3")
    kinds = [v["kind"] for v in reopened.views(cid)]
    assert kinds[0] == "user"
    assert "card_open" in kinds
    assert "card_result" in kinds
    assert "arg_append" not in kinds  # streaming pieces are not kept; their end state is
    record = reopened.get(cid)
    assert record is not None
    assert record.run is not None
    assert record.run["text"] == "All done."
    reopened.close()


async def test_state_changes_need_the_csrf_token_json_and_this_origin(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, _ = await chat([])
    headers = await session_for(client, server)
    url = server.url + "api/conversations"
    status, answer = await post(client, url, {})
    assert status == 403
    assert "X-CSRF-Token" in answer["error"]
    status, _ = await post(client, url, {"X-CSRF-Token": "forged"})
    assert status == 403
    status, answer = await post(client, url, {**headers, "Origin": "http://evil.example"})
    assert status == 403
    assert "evil.example" in answer["error"]
    async with client.post(url, data="title=x", headers=headers) as response:
        assert response.status == 415
    status, _ = await post(client, url, headers)
    assert status == 201


async def test_a_loopback_server_answers_only_to_its_own_host_name(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, _ = await chat([])
    async with client.get(server.url, headers={"Host": "rebound.example:80"}) as response:
        assert response.status == 421
        assert "rebound.example" in (await response.json())["error"]
    async with client.get(server.url) as response:
        assert response.status == 200
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
        assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_a_token_server_needs_the_token_and_moves_it_into_a_cookie(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    token = "t0ken-for-the-tests-only"
    server, _ = await chat([], token=token)
    base = server.url.split("?")[0]
    async with client.get(base) as response:
        assert response.status == 401
    async with client.get(base + "api/conversations") as response:
        assert response.status == 401
    async with client.get(base + "?token=wrong-token-of-some-length") as response:
        assert response.status == 401
    async with client.get(server.url, allow_redirects=False) as response:
        assert response.status == 303
        assert response.headers["Location"] == "/"
        assert "HttpOnly" in response.headers["Set-Cookie"]
    async with client.get(base + "api/conversations") as response:
        assert response.status == 200
    async with aiohttp.ClientSession() as bare:
        bearer = {"Authorization": f"Bearer {token}"}
        async with bare.get(base + "api/conversations", headers=bearer) as response:
            assert response.status == 200


@pytest.mark.parametrize(
    ("host", "token", "message"),
    [
        ("0.0.0.0", None, "not a loopback address"),
        ("192.168.1.5", None, "exposes the chat"),
        ("::", None, "token"),
        ("127.0.0.1", "short", "at least 16 characters"),
    ],
)
def test_binds_that_would_expose_the_chat_are_refused(host: str, token: str | None, message: str):
    with pytest.raises(ValueError, match=message):
        check_bind(host, token)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.0.1", "::1", "localhost"])
def test_loopback_binds_need_no_token(host: str):
    check_bind(host, None)


async def test_bad_requests_name_what_is_wrong(chat: Any, client: aiohttp.ClientSession):
    server, _ = await chat([])
    headers = await session_for(client, server)
    status, answer = await post(client, server.url + "api/conversations/nope/messages", headers)
    assert status == 404
    assert "'nope'" in answer["error"]
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/messages"
    status, answer = await post(client, url, headers, {"text": ""})
    assert status == 400
    assert "text must be a non-empty message" in answer["error"]
    async with client.post(
        url, data=b"{not json", headers={**headers, "Content-Type": "application/json"}
    ) as response:
        assert response.status == 400
        assert "not JSON" in json.loads(await response.text())["error"]


async def test_content_filter_reports_reach_the_page_as_warnings(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, _ = await chat([tool_call("read_mail", {"folder": "inbox"}), "Read it."])
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await post(client, url + "messages", headers, {"text": "read my mail"})
        warning = await stream.wait_kind("warning", filter=True)
        await stream.wait_kind("finished")
    assert warning["text"].startswith("read_mail mail in inbox: ")
    assert "ignore all previous instructions" in warning["text"]


async def test_stop_while_the_model_streams_a_call_ends_the_turn_with_the_call_not_run(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, provider = await chat(
        [Reply(turn=tool_call("slow_echo", {"text": LONG_TEXT}), pace=0.01), "Again, then."]
    )
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await post(client, url + "messages", headers, {"text": "echo"})
        piece = await stream.wait_kind("arg_append")
        status, _ = await post(client, url + "stop", headers)
        assert status == 200
        finished = await stream.wait_kind("finished")
        result = await stream.wait_kind("card_result", card=piece["card"])
        status, _ = await post(client, url + "messages", headers, {"text": "try again"})
        assert status == 202
        await stream.wait_kind("text_final", text="Again, then.")
    assert finished["stop_reason"] == "cancelled"
    assert result["status"] == "not_run"
    assert "card_running" not in stream.kinds()
    # The next turn starts from a conversation without a dangling call.
    messages = provider.bodies[1]["messages"]
    assert messages[-1] == {"role": "user", "content": "try again"}
    called = {c["id"] for m in messages for c in m.get("tool_calls") or ()}
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert called == answered


@pytest.mark.parametrize("name", ["log_in", "Log_In"])
async def test_a_sensitive_argument_is_never_shown_and_survives_an_edit(
    chat: Any, client: aiohttp.ClientSession, views: Any, name: str
):
    """Also when the model changed the case of the tool's name (the call runs as ``log_in``)."""
    server, _ = await chat([tool_call(name, {"user": "ann", "password": "s3cret-42"}), "In."])
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await post(client, url + "messages", headers, {"text": "log in"})
        waiting = await stream.wait_kind("card_awaiting")
        assert waiting["arguments"] == {"user": "ann", "password": "[redacted]"}
        edited = {"user": "bob", "password": "[redacted]"}
        await post(
            client,
            url + f"decisions/{waiting['call_id']}",
            headers,
            {"action": "approve", "arguments": edited},
        )
        result = await stream.wait_kind("card_result")
        await stream.wait_kind("finished")
    assert result["text"] == "logged in bob with a password ending in 42"
    assert "s3cret" not in json.dumps(stream.views)
    assert "s3cret" not in json.dumps(list(server.store.views(cid)))
    record = server.store.get(cid)
    assert record is not None
    assert "s3cret" not in json.dumps(record.run)


def test_a_new_store_opened_while_another_process_holds_the_file_waits(
    tmp_path: Path, hold_new_sqlite_file: Callable[[Path], None]
) -> None:
    """Two servers opening one new conversations file together: the second waits for the
    file instead of failing with "database is locked" at the switch to WAL."""
    path = tmp_path / "shared.sqlite3"
    hold_new_sqlite_file(path)
    store = ConversationStore(path)
    try:
        created = store.create("first")
        assert [c.id for c in store.list()] == [created.id]
        assert store._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        store.close()
