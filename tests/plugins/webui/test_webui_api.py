"""The chat's HTTP API against a real server, a real host and a loopback fake provider."""

from __future__ import annotations

import json
import socket
import sqlite3
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


async def test_text_that_is_not_utf8_keeps_the_conversation_working(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    # A file name that is not UTF-8 reaches the page as a lone surrogate (a JSON escape).
    name = "report-\udcff.txt"
    server, _provider = await chat([f"Found {name}.", "Second answer."])
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        status, _ = await post(client, url + "messages", headers, {"text": f"open {name}"})
        assert status == 202
        await stream.wait_for(lambda v: v.get("kind") == "text_final" and name in v["text"])
        await stream.wait_kind("finished")
        status, _ = await post(client, url + "messages", headers, {"text": "two"})
        assert status == 202
        await stream.wait_for(lambda v: v.get("kind") == "text_final" and "Second" in v["text"])
    async with client.get(server.url + "api/conversations") as response:
        assert response.status == 200
        listed = (await response.json())["conversations"]
    assert [c["title"] for c in listed] == ["open report-\\xff.txt"]
    async with views(url + "events") as again:  # the stored log replays whole
        await again.wait_for(lambda v: v.get("kind") == "text_final" and "Second" in v["text"])


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


async def test_retry_sends_the_call_back_and_the_model_calls_again(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, provider = await chat(
        [
            tool_call("write_note", {"path": "/etc/motd", "body": "hi"}),
            tool_call("write_note", {"path": "notes/motd.txt", "body": "hi"}),
            "Written.",
        ]
    )
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await post(client, url + "messages", headers, {"text": "write a note"})
        first = await stream.wait_kind("card_awaiting")
        status, _ = await post(
            client,
            url + f"decisions/{first['call_id']}",
            headers,
            {"action": "retry", "message": "Write under notes/ instead."},
        )
        assert status == 200
        decided = await stream.wait_kind("card_decided", card=first["card"])
        assert decided["action"] == "retry"
        sent_back = await stream.wait_kind("card_result", card=first["card"])
        assert sent_back["status"] == "error"
        assert sent_back["text"] == "Write under notes/ instead."
        second = await stream.wait_for(
            lambda v: v.get("kind") == "card_awaiting" and v["card"] != first["card"]
        )
        assert second["arguments"]["path"] == "notes/motd.txt"
        await post(client, url + f"decisions/{second['call_id']}", headers, {"action": "approve"})
        await stream.wait_kind("finished")
    tool_messages = [m for m in provider.bodies[1]["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["content"].endswith("Write under notes/ instead.")


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
    assert result["status"] == "cancelled"  # labelled so, not "failed"
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


async def test_a_browser_without_the_token_gets_a_page_saying_what_to_open(
    chat: Any, client: aiohttp.ClientSession, views: Any
):
    server, _ = await chat([], token="t0ken-for-the-tests-only")
    base = server.url.split("?")[0]
    page = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    async with client.get(base, headers=page) as response:
        assert response.status == 401
        assert response.content_type == "text/html"
        assert "default-src 'none'" in response.headers["Content-Security-Policy"]
        text = await response.text()
        assert "This chat needs its token" in text
        assert "/?token=" in text
    # The API, and anything that does not ask for a page, still gets the JSON error.
    async with client.get(base + "api/conversations", headers={"Accept": "*/*"}) as response:
        assert response.status == 401
        assert "needs its token" in (await response.json())["error"]


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
    assert "s3cret" not in json.dumps(stream.views), [
        v for v in stream.views if "s3cret" in json.dumps(v)
    ]
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


async def raw_request(server: WebServer, head: bytes, body: bytes = b"") -> tuple[int, bytes]:
    """Send bytes as they are (headers no client would encode) and read the status line."""
    import asyncio

    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        writer.write(head + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode())
        writer.write(body)
        await writer.drain()
        answer = await reader.read()
    finally:
        writer.close()
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[-1]


async def test_malformed_requests_get_400_not_500(chat: Any, client: aiohttp.ClientSession):
    server, _ = await chat([])
    headers = await session_for(client, server)
    host = f"Host: 127.0.0.1:{server.port}\r\n".encode()
    csrf = f"X-CSRF-Token: {headers['X-CSRF-Token']}\r\n".encode()
    json_type = b"Content-Type: application/json\r\n"
    start = b"POST /api/conversations HTTP/1.1\r\n" + host
    # A JSON body nested far past what a parser's recursion takes.
    deep = b"[" * 100_000 + b"]" * 100_000
    status, body = await raw_request(server, start + csrf + json_type, deep)
    assert status == 400, body
    assert b"nested too deeply" in body
    # A CSRF header that is not UTF-8, and one that is not ASCII.
    for value in (b"\xff\xfe\xfa", "tökén".encode()):
        head = start + b"X-CSRF-Token: " + value + b"\r\n" + json_type
        status, body = await raw_request(server, head, b"{}")
        assert status == 400, body
        assert b"X-CSRF-Token header must be ASCII" in body


async def test_a_non_ascii_authorization_header_gets_400(tmp_path: Path):
    from toolwire import Host

    token = "a-token-of-enough-length"
    host = Host.load(None)
    store = ConversationStore(":memory:")
    server = WebServer(host, port=0, token=token, database=store, grants=tmp_path / "g.toml")
    await server.start()
    try:
        head = (
            b"GET /api/conversations HTTP/1.1\r\n"
            + f"Host: 127.0.0.1:{server.port}\r\n".encode()
            + "Authorization: Bearer tökén\r\n".encode()
        )
        status, body = await raw_request(server, head)
        assert status == 400, body
        head = head.replace("tökén".encode(), b"\xff\xff")
        status, _ = await raw_request(server, head)
        assert status == 400
        # A cookie that is not ASCII is simply not the token.
        head = (
            b"GET /api/conversations HTTP/1.1\r\n"
            + f"Host: 127.0.0.1:{server.port}\r\n".encode()
            + "Cookie: toolwire_token=tökén\r\n".encode()
        )
        status, _ = await raw_request(server, head)
        assert status == 401
    finally:
        await server.close()
        store.close()
        await host.aclose()


async def test_always_allow_is_kept_in_the_grants_file_and_revoked_from_it(
    chat: Any, client: aiohttp.ClientSession, views: Any, tmp_path: Path
):
    server, _ = await chat(
        [
            tool_call("write_note", {"path": "a.txt", "body": "one"}),
            tool_call("write_note", {"path": "b.txt", "body": "two"}),
            "Both written.",
        ]
    )
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    url = f"{server.url}api/conversations/{cid}/"
    async with views(url + "events") as stream:
        await post(client, url + "messages", headers, {"text": "write two"})
        waiting = await stream.wait_kind("card_awaiting")
        assert waiting["grants"][0] == {"scope": "tool", "value": "write_note"}
        assert {"scope": "side_effect", "value": "writes_files"} in waiting["grants"]
        status, answer = await post(
            client,
            url + f"decisions/{waiting['call_id']}",
            headers,
            {
                "action": "approve",
                "grant": {"scope": "side_effect", "value": "writes_files", "lasting": True},
            },
        )
        assert status == 200, answer
        granted = await stream.wait_kind("card_granted")
        await stream.wait_kind("finished")
    assert granted["label"] == "side effect writes_files"
    assert granted["lasting"] is True
    assert sum(v["kind"] == "card_awaiting" for v in stream.views) == 1
    kept = (tmp_path / "grants.toml").read_text(encoding="utf-8")
    assert 'scope = "side_effect"' in kept
    assert 'value = "writes_files"' in kept
    async with client.get(server.url + "api/grants") as response:
        listed = (await response.json())["grants"]
    assert listed == [
        {
            "scope": "side_effect",
            "value": "writes_files",
            "label": "side effect writes_files",
            "lasting": True,
        }
    ]
    status, _ = await post(
        client,
        server.url + "api/grants/revoke",
        headers,
        {"scope": "side_effect", "value": "writes_files", "lasting": True},
    )
    assert status == 200
    assert "writes_files" not in (tmp_path / "grants.toml").read_text(encoding="utf-8")
    status, answer = await post(
        client,
        server.url + "api/grants/revoke",
        headers,
        {"scope": "side_effect", "value": "writes_files", "lasting": True},
    )
    assert status == 404


async def test_a_grant_never_answers_for_a_side_effect_the_system_file_locks(tmp_path: Path):
    import attrs

    from toolwire import Config
    from toolwire.chat import Grant, GrantError, Grants, GrantStore
    from toolwire.loop import DeferredRequest

    config = attrs.evolve(
        Config(),
        policy=attrs.evolve(Config().policy, require_approval=("writes_files",)),
        locked={"$.policy.require_approval": "/etc/toolwire/toolwire.toml"},
    )
    store = GrantStore(tmp_path / "grants.toml")
    store.add(Grant("tool", "write_note"))
    grants = Grants(store, config=config)
    from webui.conftest import write_note

    request = DeferredRequest(
        call_id="c", tool="write_note", arguments={}, reason="approval", detail="", round=1
    )
    assert grants.covering(request, write_note) is None
    with pytest.raises(GrantError, match="locks"):
        grants.allow(Grant("side_effect", "writes_files"), lasting=False)
    # Without the lock the lasting grant answers; never for an interrupted call.
    free = Grants(store)
    assert free.covering(request, write_note) == (Grant("tool", "write_note"), True)
    interrupted = attrs.evolve(request, reason="interrupted")
    assert free.covering(interrupted, write_note) is None


async def test_a_page_that_connects_after_the_turn_said_finished_is_not_told_it_runs(
    chat: Any, client: aiohttp.ClientSession
):
    """The turn's task goes on briefly after its "finished" view (the run is written to the
    store); a page connecting in that window got ``running: true`` with the "finished" view in
    its replay, and waited for an end that had already been sent."""
    import asyncio

    from toolwire_webui._conversation import LiveConversation

    server, _ = await chat(["Done."])
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    live = LiveConversation(cid, server.toolwire_host, server.store)
    ending: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    live._task = ending  # type: ignore[assignment]  # the turn's task, still ending
    assert live.running
    assert live.turn_open
    live._publish([{"kind": "status_clear"}, {"kind": "finished", "stop_reason": "answered"}])
    assert live.running  # a new message still waits for the task
    assert not live.turn_open  # but a page must not wait for another "finished"
    ending.cancel()


async def test_a_message_sent_as_the_last_turn_ends_starts_the_next_turn(
    chat: Any, client: aiohttp.ClientSession
):
    """The page enables its send button on the turn's "finished" view; the turn's task may
    still be writing the run. A message then waits for that, instead of a 409."""
    import asyncio

    from toolwire_webui._conversation import LiveConversation

    server, _ = await chat(["Done."])
    headers = await session_for(client, server)
    cid = await new_conversation(client, server, headers)
    live = LiveConversation(cid, server.toolwire_host, server.store)
    release = asyncio.Event()

    async def still_ending() -> None:
        await release.wait()

    live._task = asyncio.ensure_future(still_ending())
    live._publish([{"kind": "finished", "stop_reason": "answered"}])
    waiting = asyncio.ensure_future(live.ended())
    await asyncio.sleep(0)
    assert not waiting.done()
    release.set()
    await asyncio.wait_for(waiting, 5)
    assert not live.running
    live.send("next")  # no ConversationBusy
    assert live.running
    await live.aclose()


async def test_a_server_that_cannot_listen_closes_the_store_it_opened(tmp_path: Path):
    from toolwire import Host

    host = Host.load(None)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = WebServer(host, port=port, database=tmp_path / "chats.sqlite3")
        with pytest.raises(OSError, match="address already in use"):
            async with server:
                pass
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        server.store.list()
    await host.aclose()
