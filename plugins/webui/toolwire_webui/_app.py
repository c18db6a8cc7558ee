"""The aiohttp application: the page, the conversation API, the event stream, and its guards.

Guards, in order: the ``Host`` header must name this server (a page on another site cannot
reach a loopback server through DNS rebinding); with a token, every request must carry it
(``Authorization: Bearer``, or the cookie set by opening ``/?token=…``); every state-changing
request must carry the page's CSRF token in ``X-CSRF-Token``, send JSON, and come from this
origin when the browser says where it comes from.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from importlib import resources
from typing import TYPE_CHECKING, Any

import attrs
from aiohttp import web

from toolwire.chat import GrantError, GrantStore, count_message
from toolwire.utf8 import utf8_json

from ._conversation import (
    ConversationBusy,
    DecisionError,
    LiveConversation,
    parse_decision,
    parse_grant,
)
from ._store import ConversationStore

if TYPE_CHECKING:
    from toolwire import Host

TOKEN_COOKIE = "toolwire_token"
CSRF_HEADER = "X-CSRF-Token"
_PROMPT_LIMIT = 100_000
_BODY_LIMIT = 1024 * 1024
_HEARTBEAT_SECONDS = 15.0

_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
_STATIC = {
    "app.js": "text/javascript",
    "app.css": "text/css",
    "elicit.js": "text/javascript",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@attrs.frozen(kw_only=True)
class PageSettings:
    """How the page behaves: ``cards_collapsed`` opens tool cards collapsed."""

    cards_collapsed: bool = True


@attrs.define
class _State:
    host: Host
    store: ConversationStore
    token: str | None
    csrf: str
    allowed_hosts: frozenset[str] | None
    settings: PageSettings
    grants: GrantStore | None = None
    conversations: dict[str, LiveConversation] = attrs.Factory(dict)

    def live(self, conversation_id: str) -> LiveConversation:
        live = self.conversations.get(conversation_id)
        if live is None:
            if self.store.get(conversation_id) is None:
                raise web.HTTPNotFound(
                    text=_error_text(f"there is no conversation with id {conversation_id!r}"),
                    content_type="application/json",
                )
            live = LiveConversation(conversation_id, self.host, self.store, self.grants)
            self.conversations[conversation_id] = live
        return live


_STATE = web.AppKey("toolwire_webui_state", _State)


def _error_text(message: str) -> str:
    return json.dumps({"error": message}, ensure_ascii=False)


def _refuse(status: type[web.HTTPException], message: str) -> web.HTTPException:
    return status(text=_error_text(message), content_type="application/json")


def create_app(
    host: Host,
    store: ConversationStore,
    *,
    token: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
    settings: PageSettings = PageSettings(),
    grants: GrantStore | None = None,
) -> web.Application:
    """The web chat application for ``host``, keeping conversations in ``store``.

    :param token: when set, every request must carry it (see the module documentation).
    :param allowed_hosts: the ``Host`` header values this server answers to (``name:port``);
        None answers any (a server with a token, or behind a proxy that rewrites it).
    :param settings: how the page behaves.
    :param grants: where "always allow" grants are kept (None: the chat offers only grants
        for one conversation).
    """
    state = _State(
        host=host,
        store=store,
        token=token,
        csrf=secrets.token_urlsafe(32),
        allowed_hosts=None
        if allowed_hosts is None
        else frozenset(h.lower() for h in allowed_hosts),
        settings=settings,
        grants=grants,
    )
    app = web.Application(middlewares=[_guard], client_max_size=_BODY_LIMIT)
    app[_STATE] = state
    set_allowed_hosts(app, allowed_hosts)
    app.router.add_get("/", _page)
    app.router.add_get("/static/{name}", _static)
    app.router.add_get("/api/tools", _tools)
    app.router.add_post("/api/count", _count)
    app.router.add_get("/api/grants", _grants)
    app.router.add_post("/api/grants/revoke", _revoke)
    app.router.add_get("/api/conversations", _list)
    app.router.add_post("/api/conversations", _create)
    app.router.add_get("/api/conversations/{id}/events", _events)
    app.router.add_post("/api/conversations/{id}/messages", _send)
    app.router.add_post("/api/conversations/{id}/retry", _retry)
    app.router.add_post("/api/conversations/{id}/regenerate", _regenerate)
    app.router.add_post("/api/conversations/{id}/decisions/{call_id}", _decide)
    app.router.add_post("/api/conversations/{id}/stop", _stop)
    app.router.add_post("/api/conversations/{id}/elicitations/{eid}", _elicitation)
    app.router.add_get("/api/conversations/{id}/grants", _grants)
    app.router.add_post("/api/conversations/{id}/grants/revoke", _revoke)
    app.on_shutdown.append(_shutdown)
    return app


def set_allowed_hosts(app: web.Application, hosts: Iterable[str] | None) -> None:
    """Answer only requests whose ``Host`` header is one of ``hosts`` (None: any host)."""
    state = app[_STATE]
    state.allowed_hosts = None if hosts is None else frozenset(h.lower() for h in hosts)


async def _shutdown(app: web.Application) -> None:
    state = app[_STATE]
    for live in list(state.conversations.values()):
        await live.aclose()


def _same(given: str | None, expected: str) -> bool:
    # A token is ASCII: anything else (a cookie or query value decoded from other bytes) is
    # simply not it.
    if given is None or not given.isascii():
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def _ascii_header(request: web.Request, name: str) -> str | None:
    """The header's value, refused (400) unless it is ASCII: tokens are ASCII, and a value
    aiohttp decoded from other bytes cannot be compared as one."""
    value = request.headers.get(name)
    if value is not None and not value.isascii():
        raise _refuse(
            web.HTTPBadRequest,
            f"the {name} header must be ASCII text; got {len(value)} characters that are not",
        )
    return value


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    state = request.app[_STATE]
    host_header = (request.headers.get("Host") or "").lower()
    if state.allowed_hosts is not None and host_header not in state.allowed_hosts:
        raise _refuse(
            web.HTTPMisdirectedRequest,
            f"this server does not answer to Host {host_header!r}; it answers to "
            f"{', '.join(sorted(state.allowed_hosts)) or 'nothing yet'}",
        )
    set_cookie = False
    if state.token is not None:
        authorization = _ascii_header(request, "Authorization") or ""
        given = authorization.removeprefix("Bearer ") if authorization else None
        if given is None:
            given = request.cookies.get(TOKEN_COOKIE)
        if given is None and request.method == "GET" and request.path == "/":
            given = request.query.get("token")
            set_cookie = given is not None
        if not _same(given, state.token):
            raise _unauthorized(request)
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        _check_csrf(request, state)
    if set_cookie:
        # The token leaves the address bar: the cookie carries it from now on.
        redirect = web.HTTPSeeOther("/")
        redirect.set_cookie(
            TOKEN_COOKIE, state.token or "", httponly=True, samesite="Strict", path="/"
        )
        raise redirect
    response = await handler(request)
    for name, value in _SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


_NEEDS_TOKEN = (
    "this server needs its token: open the address it printed (…/?token=…) or send "
    "'Authorization: Bearer <token>'"
)
# What a browser shows when it opens the chat without its token: a page, not a JSON error.
_NEEDS_TOKEN_PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>toolwire: this chat needs its token</title></head>
<body>
<h1>This chat needs its token</h1>
<p>Open the address <code>toolwire serve</code> printed when it started, the one that ends in
<code>/?token=…</code>. The page keeps the token in a cookie from then on.</p>
</body>
</html>
"""


def _unauthorized(request: web.Request) -> web.HTTPException:
    """The 401 for a request without the token: a page for a browser opening the chat, else the
    JSON error the API answers with."""
    if request.method == "GET" and "text/html" in request.headers.get("Accept", ""):
        return web.HTTPUnauthorized(
            text=_NEEDS_TOKEN_PAGE, content_type="text/html", headers=_SECURITY_HEADERS
        )
    return _refuse(web.HTTPUnauthorized, _NEEDS_TOKEN)


def _check_csrf(request: web.Request, state: _State) -> None:
    if not _same(_ascii_header(request, CSRF_HEADER), state.csrf):
        raise _refuse(
            web.HTTPForbidden,
            f"a state-changing request needs the page's {CSRF_HEADER} header; reload the page",
        )
    origin = request.headers.get("Origin")
    if origin is not None and origin != "null":
        expected = f"{request.scheme}://{request.host}".lower()
        if origin.lower() != expected:
            raise _refuse(
                web.HTTPForbidden, f"request from origin {origin!r} refused; expected {expected!r}"
            )
    if request.content_type != "application/json":
        raise _refuse(
            web.HTTPUnsupportedMediaType,
            f"send JSON (Content-Type: application/json); got {request.content_type!r}",
        )


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError as exc:
        raise _refuse(web.HTTPBadRequest, f"the request body is not JSON: {exc}") from None
    except RecursionError:
        raise _refuse(
            web.HTTPBadRequest, "the request body is nested too deeply to be read as JSON"
        ) from None
    if not isinstance(body, dict):
        raise _refuse(
            web.HTTPBadRequest, f"the request body must be a JSON object; got {type(body).__name__}"
        )
    return body


# -- the page -----------------------------------------------------------------------------------


def _resource(name: str) -> str:
    return (resources.files(__package__) / "static" / name).read_text(encoding="utf-8")


async def _page(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    page = _resource("index.html")
    # Both values are plain ASCII made here (URL-safe token, a boolean): nothing to escape.
    page = page.replace("{{csrf}}", state.csrf)
    page = page.replace("{{collapsed}}", "true" if state.settings.cards_collapsed else "false")
    return web.Response(text=page, content_type="text/html", charset="utf-8")


async def _static(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    content_type = _STATIC.get(name)
    if content_type is None:
        raise _refuse(web.HTTPNotFound, f"no static file {name!r}")
    return web.Response(text=_resource(name), content_type=content_type, charset="utf-8")


# -- the API ------------------------------------------------------------------------------------


async def _list(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    items = []
    for record in state.store.list():
        summary = record.summary()
        live = state.conversations.get(record.id)
        summary["running"] = bool(live and live.running)
        items.append(summary)
    return web.json_response({"conversations": items})


async def _create(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    body = await _json_body(request)
    title = body.get("title", "New conversation")
    if not isinstance(title, str) or not title.strip() or len(title) > 200:
        raise _refuse(
            web.HTTPBadRequest,
            f"title must be a non-empty text of at most 200 characters; got {title!r:.80}",
        )
    record = state.store.create(title.strip())
    return web.json_response(record.summary(), status=201)


async def _send(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    live = state.live(request.match_info["id"])
    body = await _json_body(request)
    text = _prompt_text(body)
    tool_choice = body.get("tool_choice", "auto")
    if not isinstance(tool_choice, str):
        raise _refuse(web.HTTPBadRequest, f"tool_choice must be a text; got {tool_choice!r:.80}")
    await live.ended()
    try:
        live.send(text, tool_choice)
    except ConversationBusy as exc:
        raise _refuse(web.HTTPConflict, str(exc)) from None
    except ValueError as exc:
        raise _refuse(web.HTTPBadRequest, str(exc)) from None
    return web.json_response({"started": True}, status=202)


def _prompt_text(body: dict[str, Any], *, empty: bool = False) -> str:
    text = body.get("text")
    if not isinstance(text, str) or (not empty and not text.strip()) or len(text) > _PROMPT_LIMIT:
        shown = f"{type(text).__name__} of length {len(text)}" if isinstance(text, str) else text
        raise _refuse(
            web.HTTPBadRequest,
            f"text must be a non-empty message of at most {_PROMPT_LIMIT} characters; "
            f"got {shown!r}",
        )
    return text


async def _retry(request: web.Request) -> web.StreamResponse:
    return await _restart(request, "retry")


async def _regenerate(request: web.Request) -> web.StreamResponse:
    return await _restart(request, "regenerate")


async def _restart(request: web.Request, how: str) -> web.StreamResponse:
    state = request.app[_STATE]
    live = state.live(request.match_info["id"])
    await _json_body(request)
    await live.ended()
    try:
        live.retry() if how == "retry" else live.regenerate()
    except ConversationBusy as exc:
        raise _refuse(web.HTTPConflict, str(exc)) from None
    return web.json_response({"started": True}, status=202)


async def _tools(request: web.Request) -> web.StreamResponse:
    """The registered tools as people see them (a tool choice names one)."""
    host = request.app[_STATE].host
    rows = []
    for name, tool in sorted(host.tools.items()):
        display = host.tool_display(tool)
        rows.append({"name": name, "title": display.title or name, "icon": tool.icon})
    return web.json_response({"tools": rows})


async def _count(request: web.Request) -> web.StreamResponse:
    """About how many tokens the message being written takes, with the instructions."""
    state = request.app[_STATE]
    body = await _json_body(request)
    text = _prompt_text(body, empty=True)
    tool_choice = body.get("tool_choice", "auto")
    if not isinstance(tool_choice, str):
        raise _refuse(web.HTTPBadRequest, f"tool_choice must be a text; got {tool_choice!r:.80}")
    return web.json_response(count_message(state.host, text, tool_choice=tool_choice).to_json())


def _lasting(state: _State) -> list[dict[str, Any]]:
    if state.grants is None:
        return []
    try:
        grants = state.grants.grants()
    except GrantError as exc:
        raise _refuse(web.HTTPInternalServerError, str(exc)) from None
    return [{**g.to_json(), "label": g.label, "lasting": True} for g in grants]


async def _grants(request: web.Request) -> web.StreamResponse:
    """The grants in force: the conversation's own (with an id) and the lasting ones."""
    state = request.app[_STATE]
    if "id" in request.match_info:
        grants = state.live(request.match_info["id"]).grants.listing()
    else:
        grants = _lasting(state)
    return web.json_response({"grants": grants, "lasting": state.grants is not None})


async def _revoke(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    body = await _json_body(request)
    try:
        parsed = parse_grant(body)
    except DecisionError as exc:
        raise _refuse(web.HTTPBadRequest, str(exc)) from None
    assert parsed is not None
    grant, lasting = parsed
    try:
        if "id" in request.match_info:
            done = state.live(request.match_info["id"]).revoke(grant, lasting)
        elif lasting and state.grants is not None:
            done = state.grants.remove(grant)
        else:
            done = False
    except (DecisionError, GrantError, OSError) as exc:
        raise _refuse(web.HTTPConflict, str(exc)) from None
    if not done:
        raise _refuse(web.HTTPNotFound, f"there is no {grant.label} grant to revoke")
    return web.json_response({"revoked": True})


async def _decide(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    live = state.live(request.match_info["id"])
    body = await _json_body(request)
    try:
        decision = parse_decision(body)
        grant = parse_grant(body.get("grant"))
    except DecisionError as exc:
        raise _refuse(web.HTTPBadRequest, str(exc)) from None
    call_id = request.match_info["call_id"]
    if call_id not in live.waiting:
        waiting = ", ".join(live.waiting) or "none"
        raise _refuse(
            web.HTTPConflict,
            f"conversation {live.id} has no call {call_id!r} waiting for a decision; "
            f"waiting calls: {waiting}",
        )
    try:
        live.decide(call_id, decision, grant)
    except DecisionError as exc:
        raise _refuse(web.HTTPBadRequest, str(exc)) from None
    return web.json_response({"decided": True})


async def _elicitation(request: web.Request) -> web.StreamResponse:
    from ._elicit import ElicitationError

    live = request.app[_STATE].live(request.match_info["id"])
    body = await _json_body(request)
    try:
        live.elicitor.answer(request.match_info["eid"], body)
    except ElicitationError as exc:
        raise _refuse(web.HTTPConflict, str(exc)) from None
    return web.json_response({"answered": True})


async def _stop(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    live = state.live(request.match_info["id"])
    await _json_body(request)
    try:
        await live.stop()
    except ConversationBusy as exc:
        raise _refuse(web.HTTPConflict, str(exc)) from None
    return web.json_response({"stopped": True})


def _sse_data(views: list[Any]) -> bytes:
    # One message per batch: a burst of argument pieces costs one write and one page callback.
    return b"data: " + utf8_json(json.dumps(views, ensure_ascii=False)).encode("utf-8") + b"\n\n"


async def _events(request: web.Request) -> web.StreamResponse:
    state = request.app[_STATE]
    live = state.live(request.match_info["id"])
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}
    )
    for name, value in _SECURITY_HEADERS.items():
        response.headers[name] = value
    await response.prepare(request)
    snapshot, queue = live.watch()
    try:
        hello = {"kind": "hello", "running": live.turn_open, "now": time.time()}
        await response.write(_sse_data([hello, *snapshot]))
        open_ = True
        while open_:
            try:
                batch = await asyncio.wait_for(queue.get(), _HEARTBEAT_SECONDS)
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            if batch is None:
                break
            views = list(batch)
            while open_ and not queue.empty():
                more = queue.get_nowait()
                if more is None:
                    open_ = False
                else:
                    views.extend(more)
            await response.write(_sse_data(views))
        await response.write_eof()
    except ConnectionResetError:
        pass  # the page went away
    finally:
        live.unwatch(queue)
    return response
