"""A loopback provider host that answers with whatever body a test sets, well-formed or not."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

ANY_PATH = "*"


class CannedProvider:
    """Answers every POST with the body set for its path (or for :data:`ANY_PATH`).

    A body set with ``json`` is sent as ``application/json`` (a string as it is, so it may be
    broken; anything else dumped); one set with ``sse`` is written as an event stream, as it is.
    With both set, the request's ``"stream": true`` chooses. Each request's headers are kept.
    Use it as an async context manager; :attr:`url` is the host root (``http://127.0.0.1:PORT``).
    """

    def __init__(self) -> None:
        self.url = ""
        self.headers: list[CIMultiDict[str]] = []
        self._answers: dict[str, tuple[Any, str | None]] = {}
        self._runner: web.AppRunner | None = None

    def answer(self, path: str = ANY_PATH, *, json: Any = None, sse: str | None = None) -> None:
        """Answer requests to ``path`` with this JSON body, this event stream, or either."""
        if json is None and sse is None:
            raise ValueError(f"answer({path!r}): set json=, sse= or both")
        self._answers[path] = (json, sse)

    async def __aenter__(self) -> CannedProvider:
        app = web.Application()
        app.router.add_post("/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.headers.append(request.headers.copy())
        raw = await request.read()
        body, stream = self._answers.get(request.path) or self._answers[ANY_PATH]
        if stream is not None and (body is None or _asks_to_stream(raw)):
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write(stream.encode())
            await response.write_eof()
            return response
        text = body if isinstance(body, str) else json.dumps(body)
        return web.Response(text=text, content_type="application/json")


def _asks_to_stream(raw: bytes) -> bool:
    try:
        request = json.loads(raw)
    except ValueError:
        return False
    return isinstance(request, Mapping) and request.get("stream") is True
