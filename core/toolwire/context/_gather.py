"""Asking every plugin for context passages, and putting them into the request."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from .._contain import bounded, is_cancellation
from .._trust import TrustLevel
from ..events import Event, PluginFailed
from ..messages import Message, TextPart, UserMessage
from ..tools._result import Source
from ._records import ContextRequest, RequestContext


@attrs.frozen(kw_only=True)
class GatheredContext:
    """Every plugin's context for one request, merged: texts in plugin order, sources without
    repeats, and the strictest trust requirement."""

    texts: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()
    required_trust: TrustLevel | None = None

    def apply(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        """``messages`` with the texts put before the latest user message's own text.

        The conversation itself is not changed: the context goes into this request only.
        """
        if not self.texts:
            return messages
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, UserMessage):
                own = (
                    (TextPart(message.content),)
                    if isinstance(message.content, str)
                    else message.content
                )
                parts = (*(TextPart(text + "\n\n") for text in self.texts), *own)
                return (*messages[:index], UserMessage(parts), *messages[index + 1 :])
        return messages


NOTHING = GatheredContext()


async def gather_request_context(
    hook: Any,
    request: ContextRequest,
    emit: Callable[[Event], None],
    *,
    bound: float = 30.0,
) -> GatheredContext:
    """Ask each ``toolwire_request_context`` implementation alone, and merge the answers.

    An implementation that raises, answers something other than a :class:`RequestContext` (or an
    awaitable of one, or None), takes longer than ``bound`` seconds to answer, or answers
    context requiring more trust than the provider has, costs only itself: a ``PluginFailed``
    event names it.
    """
    hook_name = "toolwire_request_context"
    caller = getattr(hook, hook_name)
    impls: Sequence[Any] = caller.get_hookimpls()
    if not impls:
        return NOTHING
    texts: list[str] = []
    sources: dict[str, Source] = {}
    trust: TrustLevel | None = None
    # pluggy calls the last registered implementation first; keep that order.
    for impl in reversed(impls):
        try:
            answer: Any = impl.function(*(_argument(request, name) for name in impl.argnames))
            if inspect.isawaitable(answer):
                answer = await bounded(
                    answer, "toolwire_request_context", bound, "[loop] hook_timeout"
                )
            if answer is not None and not isinstance(answer, RequestContext):
                raise TypeError(
                    f"returned a {type(answer).__name__}; expected a "
                    "toolwire.context.RequestContext or None"
                )
            needed = answer.required_trust if answer is not None else None
            if not request.provider_trust.satisfies(needed):
                assert needed is not None
                # Fail closed: the text would reach a provider its sources do not allow.
                raise PermissionError(
                    f"its context requires a provider trusted at least {needed.label!r} and "
                    f"the provider is {request.provider_trust.label!r}; it was left out"
                )
        except BaseException as exc:
            # SystemExit, KeyboardInterrupt and the like cost only this plugin's context.
            if is_cancellation(exc):
                raise
            emit(hook_failed(request.run_id, request.round, impl.plugin_name, hook_name, exc))
            continue
        if answer is None or not answer.text.strip():
            continue
        texts.append(answer.text)
        for source in answer.sources:
            sources.setdefault(source.url, source)
        if answer.required_trust is not None:
            trust = answer.required_trust.strictest(trust)
    if not texts:
        return NOTHING
    return GatheredContext(
        texts=tuple(texts), sources=tuple(sources.values()), required_trust=trust
    )


def hook_failed(
    run_id: str, round: int | None, plugin: str, hook: str, exc: BaseException
) -> PluginFailed:
    """The event reporting that ``plugin``'s implementation of ``hook`` failed with ``exc``."""
    text = str(exc)
    return PluginFailed(
        run_id=run_id,
        round=round,
        plugin=plugin,
        hook=hook,
        error=f"{type(exc).__name__}: {text}" if text else type(exc).__name__,
    )


def _argument(request: ContextRequest, name: str) -> Any:
    if name != "request":
        raise TypeError(f"toolwire_request_context has no argument {name!r}; it takes 'request'")
    return request
