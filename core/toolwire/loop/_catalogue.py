"""Large catalogues: which of a round's tools go to the model directly, and ``tool_search`` for
the rest.

When ``[tools] max_direct`` or ``max_direct_bytes`` is exceeded, or tools are set ``deferred``
in ``[tools.exposure]``, the round offers the tools most relevant to the last user message (its
words against each tool's name and description), a built-in ``tool_search`` over the rest, and
the built-in bridge ``tool_call(name, arguments)``, through which the model calls a deferred
tool at once: right after ``tool_search`` gave its parameters, or by a name ``tool_call`` lists,
without searching. Admission takes a bridge call as a call of the tool it names
(:attr:`Arranged.reachable`), so every check applies to that tool. What ``tool_search`` finds is
also promoted: the conversation holds its results, so every later round (also after a resume, or
in a run continuing the conversation) offers those tools directly.
"""

from __future__ import annotations

import json
import re
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final

import attrs

from ..messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from ..tools._names import CALL_TOOL as CALL_TOOL_NAME
from ..tools._names import SEARCH_TOOL as SEARCH_TOOL_NAME
from ..tools._result import ToolResult
from ..tools._spec import FunctionSpec

if TYPE_CHECKING:
    from ..config import ToolsConfig
    from ..tools import Tool

SEARCH_TOOL: Final = SEARCH_TOOL_NAME
"""The name of the built-in search over deferred tools."""
CALL_TOOL: Final = CALL_TOOL_NAME
"""The name of the built-in bridge to deferred tools."""

_MAX_FOUND = 5
_MAX_LISTED = 60  # deferred names tool_call's description lists (the rest: tool_search)

NOTHING_REACHABLE: Mapping[str, Tool] = types.MappingProxyType({})
_WORD = re.compile(r"[^\W_]+")


@attrs.define
class Arranged:
    """A round's offer after the catalogue budget: the functions the model sees (sorted by
    name, ``tool_search`` among them when anything is deferred) and the tools behind them."""

    functions: tuple[FunctionSpec, ...]
    tools: Mapping[str, Tool]
    deferred: tuple[str, ...] = ()
    reason: str = ""
    promoted: tuple[str, ...] = ()
    reachable: Mapping[str, Tool] = NOTHING_REACHABLE
    """The deferred tools by function name: not offered, called through ``tool_call``."""


class SearchTools:
    """What the catalogue keeps between rounds: the sizes of specs and the ``tool_search`` and
    ``tool_call`` built for one set of deferred tools (the same objects while that set holds, so
    a kept offer stays the same)."""

    def __init__(self) -> None:
        self._sizes: dict[int, tuple[FunctionSpec, int]] = {}
        self._tools: dict[Callable[..., Tool], tuple[tuple[str, ...], Tool, FunctionSpec]] = {}
        self._words: dict[int, tuple[FunctionSpec, frozenset[str], frozenset[str]]] = {}
        # The last arrangement and what it was made from: a kept offer's functions and tools
        # (the same objects round after round), the last user text and the promotions.
        self.last: tuple[object, object, str, frozenset[str], Arranged] | None = None

    def words_of(self, spec: FunctionSpec) -> tuple[frozenset[str], frozenset[str]]:
        """The words of ``spec``'s name and of its description, worked out once per spec."""
        kept = self._words.get(id(spec))
        if kept is not None and kept[0] is spec:
            return kept[1], kept[2]
        name, described = words(spec.name), words(spec.description or "")
        if len(self._words) > 4096:
            self._words.clear()
        self._words[id(spec)] = (spec, name, described)
        return name, described

    def size(self, spec: FunctionSpec) -> int:
        """The bytes of JSON a provider receives for ``spec`` (name, description, parameters)."""
        kept = self._sizes.get(id(spec))
        if kept is not None and kept[0] is spec:
            return kept[1]
        body = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
        size = len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())
        if len(self._sizes) > 4096:
            self._sizes.clear()
        self._sizes[id(spec)] = (spec, size)
        return size

    def search_for(self, deferred: Sequence[FunctionSpec]) -> tuple[Tool, FunctionSpec]:
        """The ``tool_search`` tool over ``deferred`` and its spec."""
        return self._built(search_tool, deferred)

    def bridge_for(self, deferred: Sequence[FunctionSpec]) -> tuple[Tool, FunctionSpec]:
        """The ``tool_call`` bridge to ``deferred`` and its spec."""
        return self._built(bridge_tool, deferred)

    def _built(
        self, make: Callable[[Sequence[FunctionSpec]], Tool], deferred: Sequence[FunctionSpec]
    ) -> tuple[Tool, FunctionSpec]:
        """The built-in tool ``make`` makes for ``deferred``, and its spec: the same objects
        while the deferred set is the same."""
        key = tuple(spec.name for spec in deferred)
        kept = self._tools.get(make)
        if kept is not None and kept[0] == key:
            return kept[1], kept[2]
        tool = make(deferred)
        spec = attrs.evolve(tool.function_spec(), tool=tool)
        self._tools[make] = (key, tool, spec)
        return tool, spec


def words(text: str) -> frozenset[str]:
    """The lower-cased words of ``text`` (``read_web_page`` is three words)."""
    return frozenset(_WORD.findall(text.lower()))


def relevance(query: frozenset[str], spec: FunctionSpec, kept: SearchTools | None = None) -> int:
    """How many words of ``query`` the tool's name and description hold (name words count
    twice: a name is what the tool is)."""
    name, described = (
        kept.words_of(spec)
        if kept is not None
        else (words(spec.name), words(spec.description or ""))
    )
    return sum(2 if word in name else 1 for word in query if word in name or word in described)


def last_user_text(messages: Sequence[Message]) -> str:
    """The text of the last user turn of the conversation, or ''."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.text
    return ""


def promotions(messages: Sequence[Message]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The tools that ``tool_search`` found in this conversation, and those it found in the
    results after the last assistant turn (promoted by the latest round)."""
    found: set[str] = set()
    latest: list[str] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            latest = []
        if not isinstance(message, ToolResultMessage) or message.name != SEARCH_TOOL:
            continue
        data = message.result.data
        listed = data.get("tools") if isinstance(data, dict) else None
        for entry in listed if isinstance(listed, list) else ():
            name = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(name, str) and name not in found:
                found.add(name)
                latest.append(name)
    return frozenset(found), tuple(latest)


def budgeted(config: ToolsConfig) -> bool:
    """True when the catalogue may defer anything (a budget or a ``deferred`` exposure)."""
    return (
        config.max_direct is not None
        or config.max_direct_bytes is not None
        or "deferred" in config.exposure.values()
    )


def arrange(
    functions: Sequence[FunctionSpec],
    tools: Mapping[str, Tool],
    messages: Sequence[Message],
    config: ToolsConfig,
    kept: SearchTools,
) -> Arranged:
    """Split a round's resolved functions into those offered directly and those deferred to
    ``tool_search`` (see the module's docstring). Without anything deferred, ``functions`` and
    ``tools`` come back as they are."""
    unchanged = Arranged(functions=tuple(functions), tools=tools)
    if not budgeted(config) or SEARCH_TOOL in tools or CALL_TOOL in tools:
        return unchanged
    found, latest = promotions(messages)
    text = last_user_text(messages)
    last = kept.last
    if (
        last is not None
        and last[0] is functions
        and last[1] is tools
        and last[2:4] == (text, found)
    ):
        return attrs.evolve(last[4], promoted=tuple(n for n in latest if n in tools))
    arranged = _arranged(functions, tools, text, found, config, kept)
    kept.last = (functions, tools, text, found, arranged)
    return attrs.evolve(arranged, promoted=tuple(n for n in latest if n in tools))


def _arranged(
    functions: Sequence[FunctionSpec],
    tools: Mapping[str, Tool],
    text: str,
    found: frozenset[str],
    config: ToolsConfig,
    kept: SearchTools,
) -> Arranged:
    """:func:`arrange` for one last user text and one set of promoted tools."""
    unchanged = Arranged(functions=tuple(functions), tools=tools)
    promoted = [spec for spec in functions if spec.name in found]
    marked = [
        spec
        for spec in functions
        if spec.name not in found and config.exposure.get(spec.name) == "deferred"
    ]
    marked_ids = {id(spec) for spec in marked}
    rest = [spec for spec in functions if spec.name not in found and id(spec) not in marked_ids]
    direct, over = _within_budget(rest, text, config, kept)
    deferred = sorted([*marked, *over], key=lambda spec: spec.name)
    if not deferred:
        return unchanged
    search, search_spec = kept.search_for(deferred)
    bridge, bridge_spec = kept.bridge_for(deferred)
    offered = sorted([*promoted, *direct, search_spec, bridge_spec], key=lambda spec: spec.name)
    reasons = []
    if over:
        reasons.append(_budget_text(config))
    if marked:
        reasons.append("[tools.exposure] sets them deferred")
    built = {SEARCH_TOOL: search, CALL_TOOL: bridge}
    return Arranged(
        functions=tuple(offered),
        tools={s.name: built[s.name] if s.name in built else tools[s.name] for s in offered},
        deferred=tuple(spec.name for spec in deferred),
        reason="; ".join(reasons),
        reachable=types.MappingProxyType({spec.name: tools[spec.name] for spec in deferred}),
    )


def _budget_text(config: ToolsConfig) -> str:
    limits = []
    if config.max_direct is not None:
        limits.append(f"[tools] max_direct = {config.max_direct}")
    if config.max_direct_bytes is not None:
        limits.append(f"[tools] max_direct_bytes = {config.max_direct_bytes}")
    return "over the catalogue budget (" + ", ".join(limits) + ")"


def _within_budget(
    specs: list[FunctionSpec],
    text: str,
    config: ToolsConfig,
    kept: SearchTools,
) -> tuple[list[FunctionSpec], list[FunctionSpec]]:
    """The specs offered directly (the most relevant that fit both budgets) and those left."""
    count, size = config.max_direct, config.max_direct_bytes
    total = sum(kept.size(spec) for spec in specs) if size is not None else 0
    if (count is None or len(specs) <= count) and (size is None or total <= size):
        return specs, []
    query = words(text)
    # The most relevant first; ties keep name order, so the choice is stable for prompt caches.
    ranked = sorted(specs, key=lambda spec: -relevance(query, spec, kept))
    direct: list[FunctionSpec] = []
    used = 0
    for spec in ranked:
        if count is not None and len(direct) >= count:
            break
        cost = kept.size(spec) if size is not None else 0
        if size is not None and used + cost > size:
            continue
        direct.append(spec)
        used += cost
    chosen = {id(spec) for spec in direct}
    return direct, [spec for spec in specs if id(spec) not in chosen]


def search_tool(deferred: Sequence[FunctionSpec]) -> Tool:
    """The built-in ``tool_search`` over ``deferred``: the best matches for a query, with their
    descriptions; the tools it returns are offered from the next round on."""
    from ..tools import tool

    catalogue = tuple(deferred)

    def tool_search(
        query: Annotated[str, "Words describing the tool you need (what it does, its subject)."],
    ) -> dict[str, Any]:
        asked = words(query)
        scored = sorted(
            ((relevance(asked, spec), spec) for spec in catalogue),
            key=lambda pair: -pair[0],
        )
        hits = [spec for score, spec in scored if score > 0][:_MAX_FOUND]
        if not hits:
            return {
                "tools": [],
                "note": "No tool matches these words; try other words for what the tool does.",
            }
        return {
            "tools": [
                {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": spec.parameters,
                }
                for spec in hits
            ],
            "note": (
                f"Call them now through {CALL_TOOL} (their name and arguments), or directly "
                "from your next turn on, when they are offered."
            ),
        }

    return tool(
        name=SEARCH_TOOL,
        description=(
            f"Find tools by what they do. {len(catalogue)} more tools are available than are "
            f"offered now; the ones found can be called at once through {CALL_TOOL}, and are "
            "offered from the next turn on."
        ),
        side_effects="read_only",
        idempotent=True,
    )(tool_search)


def bridge_tool(deferred: Sequence[FunctionSpec]) -> Tool:
    """The built-in ``tool_call``: a call of a deferred tool by name. Admission takes each of
    its calls as a call of the tool it names, so its own function only answers a call that
    reached it anyway (there is none: it says so)."""
    from ..tools import tool

    names = [spec.name for spec in deferred]
    listed = ", ".join(names[:_MAX_LISTED])
    if len(names) > _MAX_LISTED:
        listed += f" and {len(names) - _MAX_LISTED} more ({SEARCH_TOOL} finds them)"

    def tool_call(
        name: Annotated[str, "The name of the tool to call."],
        arguments: Annotated[
            dict[str, Any] | None, "Its arguments, as its parameters (from tool_search) say."
        ] = None,
    ) -> ToolResult:
        return ToolResult.error(f"{CALL_TOOL} calls another tool: name one ({listed}).")

    return tool(
        name=CALL_TOOL,
        description=(
            "Call a tool that is not offered directly, now: give its name and its arguments. "
            f"Use {SEARCH_TOOL} first to learn a tool's parameters. Tools it calls: {listed}."
        ),
        side_effects="read_only",
        idempotent=True,
    )(tool_call)
