"""Tool names on the wire: an alias for each name an API refuses, and the way back.

A tool keeps its canonical name everywhere in toolwire (events, traces, ``Run.to_json``, the
ledger). Only the request body an API receives, and the calls it answers with, use the alias.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from ..messages import AssistantMessage, ToolCall, ToolResultMessage
from ..tools._names import wire_spelling
from ._base import NamedToolChoice
from ._history import RenderedHistory

if TYPE_CHECKING:
    from ..messages import Message
    from ..tools import FunctionSpec
    from ._base import ModelRequest

WIRE_NAME: Final = re.compile(r"[a-zA-Z0-9_-]+")
"""The characters OpenAI and Anthropic accept in a tool name (both take at most 64 of them)."""

_DIGEST_LENGTH: Final = 8


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:_DIGEST_LENGTH]


class ToolNames:
    """The aliases of one request's tool names under one API's name rule, both ways.

    A name the rule accepts is its own wire name. Any other name becomes its readable alias
    (each refused character, such as the ``.`` of ``math.factorial``, written ``_``, cut to the
    length limit); when that alias is taken by another offered name or alias, or the name was cut,
    a short digest of the canonical name is appended (``math_factorial_1f3a9c2e``). The alias of a
    name depends only on the names offered with it, so it is the same in every request that
    offers the same tools, and two names never share one.

    :param names: the canonical names offered in the request.
    :param pattern: the names the API accepts (fully matched).
    :param max_length: the longest name the API accepts.
    :param spell: the readable alias of a refused name (default: each character outside
        ``[a-zA-Z0-9_-]`` written ``_``); it must give a name ``pattern`` accepts.
    """

    __slots__ = (
        "_accepted",
        "_history",
        "_max_length",
        "_pattern",
        "_spell",
        "_taken",
        "_to_canonical",
        "_to_wire",
    )

    def __init__(
        self,
        names: Iterable[str],
        *,
        pattern: re.Pattern[str] = WIRE_NAME,
        max_length: int = 64,
        spell: Callable[[str], str] | None = None,
    ) -> None:
        self._pattern = pattern
        self._max_length = max_length
        self._spell = spell or wire_spelling
        self._accepted: dict[str, bool] = {}
        self._history: RenderedHistory[bool] | None = None
        self._to_wire: dict[str, str] = {}
        self._to_canonical: dict[str, str] = {}
        unique = list(dict.fromkeys(names))
        refused = [name for name in unique if not self.accepts(name)]
        self._taken = {name for name in unique if self.accepts(name)}
        for name in sorted(refused):
            self._alias(name)

    @classmethod
    def for_request(
        cls,
        request: ModelRequest,
        *,
        pattern: re.Pattern[str] = WIRE_NAME,
        max_length: int = 64,
        spell: Callable[[str], str] | None = None,
    ) -> ToolNames:
        """The names of the functions ``request`` offers."""
        return cls(
            (f.name for f in request.functions),
            pattern=pattern,
            max_length=max_length,
            spell=spell,
        )

    def accepts(self, name: str) -> bool:
        """True when the API takes ``name`` as it is (answered once per name: a conversation
        names the same few tools in every request)."""
        accepted = self._accepted.get(name)
        if accepted is None:
            accepted = (
                0 < len(name) <= self._max_length and self._pattern.fullmatch(name) is not None
            )
            self._accepted[name] = accepted
        return accepted

    def _alias(self, name: str) -> str:
        readable = self._spell(name) or "_"
        alias = readable[: self._max_length]
        if alias in self._taken or alias != readable or not self.accepts(alias):
            alias = f"{readable[: self._max_length - _DIGEST_LENGTH - 1]}_{_digest(name)}"
            salt = 0
            while alias in self._taken:  # a digest clash: vanishingly rare, still never shared
                salt += 1
                alias = f"{readable[: self._max_length - _DIGEST_LENGTH - 1]}_" + _digest(
                    f"{name}\x00{salt}"
                )
        self._taken.add(alias)
        self._to_wire[name] = alias
        self._to_canonical[alias] = name
        return alias

    def wire(self, name: str) -> str:
        """The name the API receives for the canonical ``name`` (an alias when it refuses it).

        A name not offered in the request (a call in the history of a tool offered earlier) gets
        an alias too, kept for the rest of this request.
        """
        alias = self._to_wire.get(name)
        if alias is not None:
            return alias
        if self.accepts(name):
            return name
        return self._alias(name)

    def refused_in(self, run_id: str, messages: Sequence[Message]) -> bool:
        """True when a call or result in ``messages`` (the conversation of the run ``run_id``
        now) names a tool the API refuses; each request of a run looks only at the messages new
        to it."""
        history = self._history
        if history is None:
            accepts, accepted = self.accepts, self._accepted
            history = self._history = RenderedHistory(lambda: _RefusedNames(accepts, accepted))
        return history.get(run_id, messages)

    def copy(self) -> ToolNames:
        """An independent copy, for another request that offers the same names (aliases that
        :meth:`wire` adds to one never show in the other)."""
        other = ToolNames.__new__(ToolNames)
        other._pattern, other._max_length, other._spell = (
            self._pattern,
            self._max_length,
            self._spell,
        )
        other._accepted = self._accepted  # the same rule: the answers hold for both
        other._history = self._history
        other._to_wire = dict(self._to_wire)
        other._to_canonical = dict(self._to_canonical)
        other._taken = set(self._taken)
        return other

    def canonical(self, wire_name: str) -> str:
        """The canonical name for a name the API sent back (unchanged when it is no alias)."""
        return self._to_canonical.get(wire_name, wire_name)

    @property
    def aliases(self) -> Mapping[str, str]:
        """Each aliased canonical name and its alias."""
        return dict(self._to_wire)


def aliased_functions(
    functions: Iterable[FunctionSpec], names: ToolNames
) -> tuple[FunctionSpec, ...]:
    """``functions`` under their wire names in ``names`` (the same objects where unchanged)."""
    return tuple(
        f if names.accepts(f.name) else attrs.evolve(f, name=names.wire(f.name)) for f in functions
    )


def wire_functions(
    functions: Iterable[FunctionSpec],
    *,
    pattern: re.Pattern[str] = WIRE_NAME,
    max_length: int = 64,
    spell: Callable[[str], str] | None = None,
) -> tuple[FunctionSpec, ...]:
    """``functions`` as an API with this name rule receives them (refused names aliased), for
    an adapter's ``render_tools``: the same aliases :func:`wire_request` gives."""
    functions = tuple(functions)
    names = ToolNames(
        (f.name for f in functions), pattern=pattern, max_length=max_length, spell=spell
    )
    return aliased_functions(functions, names) if names.aliases else functions


def wire_request(
    request: ModelRequest,
    *,
    pattern: re.Pattern[str] = WIRE_NAME,
    max_length: int = 64,
    spell: Callable[[str], str] | None = None,
    names: ToolNames | None = None,
) -> ModelRequest:
    """``request`` as an API with this name rule must receive it: every refused name aliased.

    ``names`` are the aliases of the request's functions under the same rule when the caller
    has them already (a :class:`RenderedTools` rendering); a copy is used, so it stays as it is.

    The offered functions, the calls and results in the history and a named tool choice carry
    the alias, and the request's ``tool_names`` holds the map, so that the calls of the answer
    are read back under their canonical names (:class:`CallAssembler` and
    :func:`canonical_message` do it). Unchanged (the same object) when the API accepts every
    name.
    """
    given = names
    if names is None:
        names = ToolNames.for_request(request, pattern=pattern, max_length=max_length, spell=spell)
    messages = request.messages
    history = names.refused_in(request.run_id, messages)
    if not names._to_wire and not history:  # no alias, in the offer or in the history
        return request
    if given is not None:
        names = names.copy()  # wire() may add the history's names: the caller's stay as they are
    functions = aliased_functions(request.functions, names)
    if history:
        messages = tuple(
            attrs.evolve(
                message,
                parts=[
                    attrs.evolve(p, name=names.wire(p.name))
                    if isinstance(p, ToolCall) and not names.accepts(p.name)
                    else p
                    for p in message.parts
                ],
            )
            if isinstance(message, AssistantMessage)
            else attrs.evolve(message, name=names.wire(message.name))
            if isinstance(message, ToolResultMessage) and not names.accepts(message.name)
            else message
            for message in messages
        )
    choice = request.tool_choice
    if isinstance(choice, NamedToolChoice):
        choice = NamedToolChoice(names.wire(choice.name))
    return attrs.evolve(
        request, functions=functions, messages=messages, tool_choice=choice, tool_names=names
    )


class _RefusedNames:
    """Whether a call or result of a conversation names a tool the API refuses, message by
    message (a :class:`~._history.HistoryFold`).

    :param accepts: :meth:`ToolNames.accepts`.
    :param accepted: the answers it has kept; a name found there accepted is not asked again
        (every round names the same few tools).
    """

    __slots__ = ("_accepted", "_accepts", "found")

    def __init__(self, accepts: Callable[[str], bool], accepted: Mapping[str, bool]) -> None:
        self._accepts = accepts
        self._accepted = accepted
        self.found = False

    def feed(self, message: Message) -> None:
        if self.found:
            return
        accepted, accepts = self._accepted, self._accepts
        if isinstance(message, AssistantMessage):
            for part in message.parts:
                if isinstance(part, ToolCall) and not (
                    accepted.get(part.name) or accepts(part.name)
                ):
                    self.found = True
                    return
        elif isinstance(message, ToolResultMessage):
            self.found = not (accepted.get(message.name) or accepts(message.name))

    def copy(self) -> _RefusedNames:
        # Made without __init__: a fold is copied every request.
        other = _RefusedNames.__new__(_RefusedNames)
        other._accepts, other._accepted, other.found = self._accepts, self._accepted, self.found
        return other

    def result(self) -> bool:
        return self.found


def canonical_message(message: AssistantMessage, request: ModelRequest) -> AssistantMessage:
    """``message`` with every call named by its canonical name (``request`` from
    :func:`wire_request`); the same object when nothing was aliased."""
    names = request.tool_names
    if names is None or not names._to_wire:  # no alias
        return message
    calls = [p for p in message.parts if isinstance(p, ToolCall)]
    if all(names.canonical(call.name) == call.name for call in calls):
        return message
    parts = [
        attrs.evolve(p, name=names.canonical(p.name)) if isinstance(p, ToolCall) else p
        for p in message.parts
    ]
    return attrs.evolve(message, parts=parts)


def wire_notes(
    name: str,
    rendered: object,
    *,
    pattern: re.Pattern[str] = WIRE_NAME,
    max_length: int = 64,
    spell: Callable[[str], str] | None = None,
) -> list[str]:
    """What a person reading a rendered ``tools`` array should know about the name ``name``: the
    alias it is sent under (by the API's name rule), when it is not sent as it is."""
    text = json.dumps(rendered, ensure_ascii=False)
    if json.dumps(name, ensure_ascii=False) in text:
        return []
    alias = ToolNames([name], pattern=pattern, max_length=max_length, spell=spell).wire(name)
    return [
        f"the API refuses the name {name!r}, so it is sent as {alias!r} (or with a digest when "
        "that alias is taken); its calls are mapped back to the canonical name"
    ]
