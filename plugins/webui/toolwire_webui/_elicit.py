"""A tool's question to the person (:mod:`toolwire.elicitation`), shown on the page as a form.

The question goes to every page watching the conversation as an ``elicitation`` view: who asks,
its message, and the form's fields (name, type, title, description, choices, default, required)
made from the question's schema; the page's answer comes back through
``POST /api/conversations/{id}/elicitations/{eid}`` as ``{"action": "accept"|"decline"|"cancel",
"content": {…}}``. An ``elicitation_done`` view closes the form on every page. A question still
open when the turn ends or stops is cancelled.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from toolwire.elicitation import ElicitationAnswer, ElicitationRequest, check_answer, form_fields

View = dict[str, Any]


class ElicitationError(ValueError):
    """An answer that names no open question, or is malformed; the message says which."""


class PageElicitor:
    """The elicitor of one conversation: each question published with ``publish``, answered by
    :meth:`answer`."""

    def __init__(self, publish: Callable[[list[View]], None]) -> None:
        self._publish = publish
        self._open: dict[str, tuple[ElicitationRequest, asyncio.Future[ElicitationAnswer]]] = {}

    async def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        eid = secrets.token_hex(8)
        future: asyncio.Future[ElicitationAnswer] = asyncio.get_running_loop().create_future()
        self._open[eid] = (request, future)
        self._publish(
            [
                {
                    "kind": "elicitation",
                    "id": eid,
                    "source": request.source,
                    "tool": request.tool,
                    "message": request.message,
                    "url": request.url,
                    "fields": [attrs.asdict(f) for f in form_fields(request.schema)],
                }
            ]
        )
        try:
            answer = await future
        finally:
            self._open.pop(eid, None)
        self._publish([{"kind": "elicitation_done", "id": eid, "action": answer.action}])
        return answer

    def answer(self, eid: str, payload: Any) -> None:
        """Answer the open question ``eid`` with the page's ``payload``.

        :raises ElicitationError: for a question that is not open, an unknown action, or content
            that does not fit the form (each problem named).
        """
        found = self._open.get(eid)
        if found is None or found[1].done():
            raise ElicitationError(f"there is no open question {eid!r}")
        request, future = found
        if not isinstance(payload, Mapping):
            raise ElicitationError("an answer must be a JSON object")
        action = payload.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise ElicitationError(
                f"answer.action = {action!r}: expected 'accept', 'decline' or 'cancel'"
            )
        content = payload.get("content")
        if action == "accept":
            if content is None:
                content = {}
            if not isinstance(content, Mapping):
                raise ElicitationError("answer.content must be a JSON object of the form's values")
            if request.schema is not None:
                problems = check_answer(request.schema, content)
                if problems:
                    raise ElicitationError("; ".join(problems))
        future.set_result(
            ElicitationAnswer(action, dict(content) if action == "accept" and content else None)
        )

    def cancel_all(self) -> None:
        """Cancel every open question (the turn ended or stopped)."""
        for _request, future in self._open.values():
            if not future.done():
                future.set_result(ElicitationAnswer("cancel"))
