"""One conversation while the server runs: its turn, the approvals it waits for, its watchers."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolwire import Approve, AssistantMessage, Deny, Retry, SideEffect, UserMessage
from toolwire.chat import Grant, GrantError, Grants, GrantStore, tool_server
from toolwire.elicitation import eliciting
from toolwire.loop import Decision, DeferredRequest, Run, RunEvents
from toolwire.tools import ArgumentsInvalid

from ._elicit import PageElicitor
from ._store import ConversationStore
from ._view import View, ViewTranslator, compact

if TYPE_CHECKING:
    from toolwire import Host, Tool
    from toolwire.messages import Message

WATCHER_BACKLOG = 20_000
"""View messages a page may fall behind by before its stream is closed (it reconnects and
gets a fresh snapshot, so a stalled tab never holds the server's memory)."""

REDACTED = "[redacted]"
"""What the page shows for a sensitive argument (as in the run's own JSON)."""

_DECISION_MESSAGE_LIMIT = 10_000
_SIDE_EFFECTS = frozenset(e.value for e in SideEffect)
_CATCH_UP_TURNS = 1000


class ConversationBusy(Exception):
    """The conversation cannot take this request now (a turn runs, or none does)."""


class DecisionError(ValueError):
    """A decision that names no waiting call, or is malformed; the message says which."""


def parse_grant(payload: Any) -> tuple[Grant, bool] | None:
    """A decision's ``grant``: ``{"scope": "tool"|"server"|"side_effect", "value", "lasting"}``
    (None when the decision has none).

    :raises DecisionError: naming what is wrong.
    """
    if payload is None:
        return None
    try:
        grant = Grant.from_json(payload)
    except GrantError as exc:
        raise DecisionError(f"decision.grant: {exc}") from None
    lasting = payload.get("lasting", False)
    if not isinstance(lasting, bool):
        raise DecisionError(f"decision.grant.lasting must be true or false; got {lasting!r:.40}")
    return grant, lasting


def parse_decision(payload: Any) -> Decision:
    """A page's decision ``{"action": "approve"|"deny"|"retry", "message"?, "arguments"?}``
    (``retry``: the model reads the message and may call again).

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
        return Deny(_decision_message(payload, "The user denied this tool call."))
    if action == "retry":
        return Retry(_decision_message(payload, "The user asks you to call it differently."))
    raise DecisionError(f"decision.action is {action!r}; valid actions: 'approve', 'deny', 'retry'")


def _decision_message(payload: Mapping[str, Any], default: str) -> str:
    message = payload.get("message") or default
    if not isinstance(message, str) or len(message) > _DECISION_MESSAGE_LIMIT:
        raise DecisionError(
            f"decision.message must be a text of at most {_DECISION_MESSAGE_LIMIT} "
            f"characters; got {type(message).__name__} of length {len(str(message))}"
        )
    return message


class LiveConversation:
    """A stored conversation with its running turn, if any.

    Views of the running turn are kept in memory and sent to every watching page; the log kept
    in the store gets the compact views when the turn waits for a person or ends. A page that
    connects gets the log, then the running turn's views, then the live ones, in that order.
    """

    def __init__(
        self,
        conversation_id: str,
        host: Host,
        store: ConversationStore,
        grants: GrantStore | None = None,
    ) -> None:
        self.id = conversation_id
        self._host = host
        self._store = store
        self.grants = Grants.restore(grants, store.grants(conversation_id), config=host.config)
        self._translator = ViewTranslator(
            host.tools.get, title_of=lambda tool: host.tool_display(tool).title
        )
        self._watchers: set[asyncio.Queue[list[View] | None]] = set()
        self._live: list[View] = []
        self._task: asyncio.Task[None] | None = None
        self._stream: RunEvents | None = None
        self._waiting: dict[str, asyncio.Future[Decision]] = {}
        self._requests: dict[str, DeferredRequest] = {}
        self._run_id = ""
        self._ended = False  # the running turn's "finished" view went out (its task may still end)
        self.elicitor = PageElicitor(self._publish)

    @property
    def running(self) -> bool:
        """True while a turn runs."""
        return self._task is not None and not self._task.done()

    @property
    def turn_open(self) -> bool:
        """True while a turn runs and has not yet told the page it finished: what a page that
        connects now must wait for (the turn's task may go on a little after its "finished"
        view, writing the run to the store)."""
        return self.running and not self._ended

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
        if any(view.get("kind") == "finished" for view in views):
            self._ended = True
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

    async def ended(self) -> None:
        """Wait for a turn that has told the page it finished to end here too (its run being
        written): a message the page sends once it shows the turn's end then starts a new turn
        instead of finding this one still running."""
        task = self._task
        if task is not None and not task.done() and self._ended:
            await asyncio.wait([task])

    def _idle(self) -> None:
        if self.running:
            raise ConversationBusy(
                f"conversation {self.id} is running a turn; wait for it, or stop it first"
            )

    def _messages(self) -> list[Message]:
        record = self._store.get(self.id)
        previous = record.run if record is not None else None
        return list(Run.from_json(previous).messages) if previous is not None else []

    def check_tool_choice(self, tool_choice: str) -> str:
        """``tool_choice`` when the host can honour it: ``auto``, ``none``, ``required`` or the
        name of a registered tool.

        :raises ValueError: naming the value and what would be valid.
        """
        if tool_choice in ("auto", "none", "required") or tool_choice in self._host.tools:
            return tool_choice
        names = ", ".join(sorted(self._host.tools)) or "no tools are registered"
        raise ValueError(
            f"tool_choice {tool_choice!r:.80} is not auto, none, required or a tool's name "
            f"({names})"
        )

    def send(self, text: str, tool_choice: str = "auto") -> None:
        """Start a turn with the user's ``text``, continuing the conversation's messages.

        :param tool_choice: ``auto``, ``none``, ``required`` or a tool's name, for this turn.
        :raises ConversationBusy: when a turn is already running.
        :raises ValueError: for a tool choice the host cannot honour.
        """
        self._idle()
        tool_choice = self.check_tool_choice(tool_choice)
        messages = self._messages()
        self._store.retitle_if_new(self.id, text)
        messages.append(UserMessage(text))
        view: View = {"kind": "user", "text": text}
        if tool_choice != "auto":
            view["tool_choice"] = tool_choice
        self._start(messages, [view], tool_choice)

    def retry(self) -> None:
        """Run the last turn again from where it stopped (after a provider error, a limit or a
        stop): the conversation's messages go to the model as they are.

        :raises ConversationBusy: when a turn runs, or the last turn was answered (regenerate
            that one instead).
        """
        self._idle()
        messages = self._messages()
        if not messages or isinstance(messages[-1], AssistantMessage):
            raise ConversationBusy(
                f"conversation {self.id} has no unanswered turn to retry; regenerate the last "
                "answer instead"
            )
        self._start(messages, [{"kind": "retry"}], "auto")

    def regenerate(self) -> None:
        """Ask the model again for the last answer: it is left out of the conversation (the
        tool results it read stay, so no tool runs again).

        :raises ConversationBusy: when a turn runs, or the conversation has no answer yet.
        """
        self._idle()
        messages = self._messages()
        if not messages or not isinstance(messages[-1], AssistantMessage):
            raise ConversationBusy(
                f"conversation {self.id} has no answer to regenerate; send a message first"
            )
        while messages and isinstance(messages[-1], AssistantMessage):
            messages.pop()
        self._start(messages, [{"kind": "regenerate"}], "auto")

    def _start(self, messages: list[Message], views: list[View], tool_choice: str) -> None:
        self._ended = False
        self._publish(views)
        self._persist_live()
        loop = self._host.new_loop()
        self._stream = loop.stream(messages, approval=self._ask, tool_choice=tool_choice)
        with eliciting(self.elicitor):  # a tool's questions to the person go to the page
            self._task = asyncio.ensure_future(self._drive(self._stream))

    async def _drive(self, stream: RunEvents) -> None:
        try:
            async for event in stream:
                self._run_id = event.run_id
                self._publish(self._translator.translate(event))
        except Exception as exc:  # the provider or a plugin failed outside the loop's answers
            self._publish(
                [
                    {
                        "kind": "finished",
                        "stop_reason": "error",
                        "detail": f"The turn failed: {type(exc).__name__}: {exc}",
                    },
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
        tool = self._host.tools.get(request.tool)
        granted = self.grants.covering(
            request, tool, tool_server(self._host, tool) if tool is not None else None
        )
        if granted is not None:
            grant, lasting = granted
            self._publish(
                [
                    {
                        "kind": "card_granted",
                        "card": card,
                        "label": grant.label,
                        "lasting": lasting,
                        "at": time.time(),
                    }
                ]
            )
            return Approve()
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
                    "schema": dict(tool.parameters) if tool is not None else None,
                    "grants": self._grant_choices(tool),
                }
            ]
        )
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._waiting[request.call_id] = future
        self._requests[request.call_id] = request
        self._persist_live()
        try:
            decision = await future
        finally:
            self._waiting.pop(request.call_id, None)
            self._requests.pop(request.call_id, None)
        was_edited = isinstance(decision, Approve) and decision.arguments is not None
        if isinstance(decision, Approve) and decision.arguments is not None and sensitive:
            # The page only ever saw "[redacted]" for a sensitive value: left so, it keeps the
            # value the model sent.
            edited = dict(decision.arguments)
            for key in sensitive & set(edited):
                if edited[key] == REDACTED and key in request.arguments:
                    edited[key] = request.arguments[key]
            decision = Approve(arguments=edited)
        action = (
            "approved"
            if isinstance(decision, Approve)
            else "retry"
            if isinstance(decision, Retry)
            else "denied"
        )
        self._publish(
            [
                {
                    "kind": "card_decided",
                    "card": card,
                    "action": action,
                    "edited": was_edited,
                    "at": time.time(),
                }
            ]
        )
        return decision

    def _grant_choices(self, tool: Tool | None) -> list[View]:
        """What an approval card offers to grant: this tool, its MCP server, its side effects."""
        if tool is None:
            return []
        choices: list[View] = [{"scope": "tool", "value": tool.name}]
        server = tool_server(self._host, tool)
        if server is not None:
            choices.append({"scope": "server", "value": server})
        for effect in tool.policy.risk:
            if effect in _SIDE_EFFECTS:
                choices.append({"scope": "side_effect", "value": effect})
        return choices

    def decide(
        self, call_id: str, decision: Decision, grant: tuple[Grant, bool] | None = None
    ) -> None:
        """Answer a waiting call; an approval may also grant (``(grant, lasting)``) so later
        calls it covers run without asking.

        :raises DecisionError: for a call that is not waiting, edited arguments the tool's
            schema refuses, or a grant that cannot be made.
        """
        future = self._waiting.get(call_id)
        request = self._requests.get(call_id)
        if future is None or future.done() or request is None:
            waiting = ", ".join(self._waiting) or "none"
            raise DecisionError(
                f"conversation {self.id} has no call {call_id!r} waiting for a decision; "
                f"waiting calls: {waiting}"
            )
        if isinstance(decision, Approve) and decision.arguments is not None:
            self.check_arguments(request, decision.arguments)
        if grant is not None and isinstance(decision, Approve):
            self.allow(*grant)
        future.set_result(decision)

    def check_arguments(self, request: DeferredRequest, arguments: Mapping[str, Any]) -> None:
        """Edited arguments checked against the tool's schema, as the model's own are.

        :raises DecisionError: with the schema's refusals.
        """
        tool = self._host.tools.get(request.tool)
        if tool is None:
            return
        restored = dict(arguments)
        for key in self._sensitive(request.tool) & set(restored):
            if restored[key] == REDACTED and key in request.arguments:
                restored[key] = request.arguments[key]
        try:
            tool.validate(restored)
        except ArgumentsInvalid as exc:
            raise DecisionError(str(exc)) from None

    # -- grants ---------------------------------------------------------------------------------

    def allow(self, grant: Grant, lasting: bool) -> None:
        """Grant for this conversation (kept with it) or for good (the grants file).

        :raises DecisionError: for a grant the config locks, or a file that cannot be written.
        """
        try:
            self.grants.allow(grant, lasting=lasting)
        except (GrantError, OSError) as exc:
            raise DecisionError(str(exc)) from None
        if not lasting:
            self._store.set_grants(self.id, self.grants.pairs())

    def revoke(self, grant: Grant, lasting: bool) -> bool:
        """Withdraw a grant; False when there was none."""
        try:
            done = self.grants.revoke(grant, lasting=lasting)
        except (GrantError, OSError) as exc:
            raise DecisionError(str(exc)) from None
        if not lasting:
            self._store.set_grants(self.id, self.grants.pairs())
        return done

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
