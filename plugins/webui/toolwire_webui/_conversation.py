"""One conversation while the server runs: its turn, the approvals it waits for, its watchers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolwire import Approve, Deny, UserMessage
from toolwire.elicitation import eliciting
from toolwire.loop import Decision, DeferredRequest, Run, RunStream, ToolCallingLoop

from ._elicit import PageElicitor
from ._store import ConversationStore
from ._view import View, ViewTranslator, compact

if TYPE_CHECKING:
    from toolwire import Host
    from toolwire.messages import Message

WATCHER_BACKLOG = 20_000
"""View messages a page may fall behind by before its stream is closed (it reconnects and
gets a fresh snapshot, so a stalled tab never holds the server's memory)."""

REDACTED = "[redacted]"
"""What the page shows for a sensitive argument (as in the run's own JSON)."""

_DECISION_MESSAGE_LIMIT = 10_000
_CATCH_UP_TURNS = 1000


class ConversationBusy(Exception):
    """The conversation cannot take this request now (a turn runs, or none does)."""


class DecisionError(ValueError):
    """A decision that names no waiting call, or is malformed; the message says which."""


def parse_decision(payload: Any) -> Decision:
    """A page's decision ``{"action": "approve"|"deny", "message"?, "arguments"?}``.

    :raises DecisionError: naming the field, the value and what would be valid.
    """
    if not isinstance(payload, Mapping):
        raise DecisionError(f"a decision must be a JSON object; got {type(payload).__name__}")
    action = payload.get("action")
    if action == "approve":
        arguments = payload.get("arguments")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise DecisionError(
                f"decision.arguments must be a JSON object of the tool's arguments; got "
                f"{type(arguments).__name__}"
            )
        return Approve(arguments=arguments)
    if action == "deny":
        message = payload.get("message") or "The user denied this tool call."
        if not isinstance(message, str) or len(message) > _DECISION_MESSAGE_LIMIT:
            raise DecisionError(
                f"decision.message must be a text of at most {_DECISION_MESSAGE_LIMIT} "
                f"characters; got {type(message).__name__} of length {len(str(message))}"
            )
        return Deny(message)
    raise DecisionError(f"decision.action is {action!r}; valid actions: 'approve', 'deny'")


class LiveConversation:
    """A stored conversation with its running turn, if any.

    Views of the running turn are kept in memory and sent to every watching page; the log kept
    in the store gets the compact views when the turn waits for a person or ends. A page that
    connects gets the log, then the running turn's views, then the live ones, in that order.
    """

    def __init__(self, conversation_id: str, host: Host, store: ConversationStore) -> None:
        self.id = conversation_id
        self._host = host
        self._store = store
        self._translator = ViewTranslator(
            host.tools.get, title_of=lambda tool: host.tool_display(tool).title
        )
        self._watchers: set[asyncio.Queue[list[View] | None]] = set()
        self._live: list[View] = []
        self._task: asyncio.Task[None] | None = None
        self._stream: RunStream | None = None
        self._waiting: dict[str, asyncio.Future[Decision]] = {}
        self._run_id = ""
        self.elicitor = PageElicitor(self._publish)

    @property
    def running(self) -> bool:
        """True while a turn runs."""
        return self._task is not None and not self._task.done()

    @property
    def waiting(self) -> tuple[str, ...]:
        """Ids of the calls that wait for a decision."""
        return tuple(self._waiting)

    # -- watching -------------------------------------------------------------------------------

    def watch(self) -> tuple[list[View], asyncio.Queue[list[View] | None]]:
        """A snapshot of everything so far and a queue of what follows (None: stream closed)."""
        queue: asyncio.Queue[list[View] | None] = asyncio.Queue()
        self._watchers.add(queue)
        return [*self._store.views(self.id), *self._live], queue

    def unwatch(self, queue: asyncio.Queue[list[View] | None]) -> None:
        """Stop sending to ``queue``."""
        self._watchers.discard(queue)

    def _publish(self, views: list[View]) -> None:
        if not views:
            return
        self._live.extend(views)
        for queue in list(self._watchers):
            if queue.qsize() > WATCHER_BACKLOG:
                self._watchers.discard(queue)
                queue.put_nowait(None)
            else:
                queue.put_nowait(views)

    def _persist_live(self) -> None:
        self._store.append_views(self.id, compact(self._live))
        self._live = []

    def close_watchers(self) -> None:
        """End every watching stream (the server is stopping)."""
        for queue in self._watchers:
            queue.put_nowait(None)
        self._watchers.clear()

    # -- turns ----------------------------------------------------------------------------------

    def send(self, text: str) -> None:
        """Start a turn with the user's ``text``, continuing the conversation's messages.

        :raises ConversationBusy: when a turn is already running.
        """
        if self.running:
            raise ConversationBusy(
                f"conversation {self.id} is running a turn; wait for it, or stop it first"
            )
        record = self._store.get(self.id)
        previous = record.run if record is not None else None
        self._store.retitle_if_new(self.id, text)
        messages: list[Message] = []
        if previous is not None:
            messages = list(Run.from_json(previous).messages)
        messages.append(UserMessage(text))
        self._publish([{"kind": "user", "text": text}])
        self._persist_live()
        loop = ToolCallingLoop(self._host)
        self._stream = loop.stream(messages, approval=self._ask)
        with eliciting(self.elicitor):  # a tool's questions to the person go to the page
            self._task = asyncio.ensure_future(self._drive(self._stream))

    async def _drive(self, stream: RunStream) -> None:
        try:
            async for event in stream:
                self._run_id = event.run_id
                self._publish(self._translator.translate(event))
        except Exception as exc:  # the provider or a plugin failed outside the loop's answers
            self._publish(
                [
                    {"kind": "warning", "text": f"The turn failed: {type(exc).__name__}: {exc}"},
                    {"kind": "finished", "stop_reason": "error", "detail": str(exc)},
                ]
            )
        finally:
            self.elicitor.cancel_all()
            for future in self._waiting.values():
                future.cancel()
            self._waiting.clear()
            run = stream.run
            if run is not None:
                self._publish(self._translator.settle(run))
                self._store.save_run(self.id, run.to_json(redact=self._sensitive, events=False))
            self._persist_live()
            self._stream = None

    def _sensitive(self, name: str) -> frozenset[str]:
        tool = self._host.tools.get(name)
        return tool.sensitive_arguments if tool is not None else frozenset()

    async def _ask(self, request: DeferredRequest) -> Decision:
        """The run's approver: show the request on its card and wait for the page's decision."""
        card = ViewTranslator.card_key(self._run_id, request.call_id)
        # The loop asks as soon as the call is admitted; the events before it may still wait in
        # the stream. Let them through first, so the card is complete before it asks.
        for _ in range(_CATCH_UP_TURNS):
            if self._translator.completed(card):
                break
            await asyncio.sleep(0)
        sensitive = self._sensitive(request.tool)
        self._publish(
            [
                {
                    "kind": "card_awaiting",
                    "card": card,
                    "call_id": request.call_id,
                    "detail": request.detail,
                    "arguments": {
                        k: REDACTED if k in sensitive else v for k, v in request.arguments.items()
                    },
                }
            ]
        )
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._waiting[request.call_id] = future
        self._persist_live()
        try:
            decision = await future
        finally:
            self._waiting.pop(request.call_id, None)
        if isinstance(decision, Approve) and decision.arguments is not None and sensitive:
            # The page only ever saw "[redacted]" for a sensitive value: left so, it keeps the
            # value the model sent.
            edited = dict(decision.arguments)
            for key in sensitive & set(edited):
                if edited[key] == REDACTED and key in request.arguments:
                    edited[key] = request.arguments[key]
            decision = Approve(arguments=edited)
        action = "approved" if isinstance(decision, Approve) else "denied"
        self._publish([{"kind": "card_decided", "card": card, "action": action}])
        return decision

    def decide(self, call_id: str, decision: Decision) -> None:
        """Answer a waiting call.

        :raises DecisionError: for a call that is not waiting.
        """
        future = self._waiting.get(call_id)
        if future is None or future.done():
            waiting = ", ".join(self._waiting) or "none"
            raise DecisionError(
                f"conversation {self.id} has no call {call_id!r} waiting for a decision; "
                f"waiting calls: {waiting}"
            )
        future.set_result(decision)

    async def stop(self) -> None:
        """Cancel the running turn: every call is answered as cancelled, the run is kept.

        :raises ConversationBusy: when no turn runs.
        """
        stream, task = self._stream, self._task
        if stream is None or task is None or task.done():
            raise ConversationBusy(f"conversation {self.id} has no running turn to stop")
        await stream.aclose()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def aclose(self) -> None:
        """Stop the running turn (if any) and close the watchers."""
        if self.running:
            with contextlib.suppress(ConversationBusy):
                await self.stop()
        self.close_watchers()
