"""``filter_untrusted``: how a tool runs one unit of outside content through the filter hook."""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .._contain import bounded, describe, is_cancellation, raised_by
from ..tools._context import FILTERED_SERVICE
from ._builtin import default_filter
from ._records import FilterContext, FilteredText, FilterOutcome

if TYPE_CHECKING:
    from ..tools import ToolContext, ToolResult


class _FilterUnusable(Exception):
    """The filter hook raised, answered nothing, or answered something unusable."""


def _checked(answer: Any, count: int) -> tuple[FilteredText, ...]:
    if answer is None:
        raise _FilterUnusable("no implementation of toolwire_filter_untrusted answered")
    if isinstance(answer, str | bytes) or not isinstance(answer, Sequence):
        raise _FilterUnusable(
            f"toolwire_filter_untrusted returned a {type(answer).__name__}, not a list of "
            "FilteredText"
        )
    results = tuple(answer)
    if len(results) != count:
        raise _FilterUnusable(
            f"toolwire_filter_untrusted returned {len(results)} text(s) for {count}; it must "
            "return one FilteredText per text, in order"
        )
    for index, result in enumerate(results):
        if not isinstance(result, FilteredText):
            raise _FilterUnusable(
                f"toolwire_filter_untrusted returned a {type(result).__name__} at position "
                f"{index}, not a FilteredText"
            )
    return results


def _report(
    context: FilterContext, texts: tuple[str, ...], results: tuple[FilteredText, ...]
) -> str | None:
    parts: list[str] = []
    for index, (text, result) in enumerate(zip(texts, results, strict=True)):
        field = context.fields[index] if index < len(context.fields) else f"text {index + 1}"
        neutralised = list(result.neutralised)
        if not neutralised and result.text != text:
            neutralised.append("changed without saying what")
        if neutralised:
            parts.append(f"neutralised in {field}: {', '.join(neutralised)}")
        if result.flagged:
            parts.append(f"flagged in {field}: {', '.join(result.flagged)}")
    if not parts:
        return None
    return f"{_origin(context)}: {'; '.join(parts)}"


def _origin(context: FilterContext) -> str:
    source = context.source or "content"
    return f"{context.tool} {source}" if context.tool else source


async def filter_untrusted(
    context: ToolContext | None,
    texts: Sequence[str],
    *,
    source: str | None = None,
    fields: Sequence[str] | None = None,
    structured: bool = False,
) -> FilterOutcome:
    """Run one unit of outside content through ``toolwire_filter_untrusted``.

    Call it after truncating, with every text of the unit that reaches the model (for a web
    page: title, description, author, date, body), so one report names the unit. The filter is
    the host's (``context.services["host"]``): the first implementation that answers, the
    built-in one last. One ``ContentFiltered`` event reports what was neutralised or flagged
    (none when nothing was), through ``context.services["emit"]`` when the loop provides it,
    else ``host.emit``.

    Filtering never drops content. When the hook raises, answers nothing, or answers something
    that is not one :class:`FilteredText` per text, the texts pass unchanged and a
    ``ContentFiltered`` event says that the filter could not run. Without a host (a tool called
    directly, outside a run) the built-in filter runs.

    :param context: the tool call's context (None outside a call: the built-in filter runs).
    :param texts: the texts of one unit, in order.
    :param source: where the content came from (a URL, or a description) for the report.
    :param fields: a name per text for the report (default ``text 1``, ``text 2`` …).
    :param structured: the texts are a structured document returned as sent (JSON, XML,
        YAML, CSV, INI): what the filter would change is reported as flagged and the texts
        pass unchanged, since rewriting ``<parameter>`` in XML or ``[system]`` in an INI file
        would change the document's meaning.
    :returns: the texts to use and what the filter did.
    :raises TypeError: a text is not a string.
    :raises ValueError: ``fields`` does not name every text.

    **Example**::

        outcome = await filter_untrusted(context, [title, body], source=url,
                                         fields=["title", "body"])
        title, body = outcome.texts
    """
    units, filter_context = _unit(context, texts, source, fields)
    host = context.services.get("host") if context is not None else None
    if context is not None:
        noted = context.services.get(FILTERED_SERVICE)
        if callable(noted):  # the loop's backstop then leaves this call's result alone
            noted(context.round, context.call_id)
    if host is None:
        results = tuple(default_filter(units))
        if structured:
            results = _flagged_only(units, results)
        return _outcome(filter_context, units, results)
    try:
        results = await _hook_results(host, context, filter_context, units)
        if structured:
            results = _flagged_only(units, results)
    except BaseException as exc:
        # A filter that raises (SystemExit and the like included) costs only the filtering; the
        # cancellation of the run still propagates.
        if is_cancellation(exc):
            raise
        reason = str(exc) if isinstance(exc, _FilterUnusable) else f"it raised {describe(exc)}"
        report = (
            f"{_origin(filter_context)}: the untrusted-content filter could not run ({reason}); "
            "the content was passed on unfiltered"
        )
        if not isinstance(exc, _FilterUnusable):
            _plugin_failed(host, context, exc)
        _emit(host, context, report)
        return FilterOutcome(texts=units, results=None, report=report, source=source)
    outcome = _outcome(filter_context, units, results)
    if outcome.report is not None:
        _emit(host, context, outcome.report)
    return outcome


def _unit(
    context: ToolContext | None,
    texts: Sequence[str],
    source: str | None,
    fields: Sequence[str] | None,
) -> tuple[tuple[str, ...], FilterContext]:
    """The texts of one unit, checked, and the context the filter hook is given for them."""
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not one string")
    units = tuple(texts)
    for index, text in enumerate(units):
        if not isinstance(text, str):
            raise TypeError(f"texts[{index}] is a {type(text).__name__}, not a string")
    default_names = (f"text {i + 1}" for i in range(len(units)))
    names = tuple(default_names if fields is None else fields)
    if len(names) != len(units):
        raise ValueError(f"fields names {len(names)} text(s) for {len(units)} text(s)")
    return units, FilterContext(
        tool=context.tool.name if context is not None else None,
        call_id=context.call_id if context is not None else None,
        run_id=context.run_id if context is not None else None,
        source=source,
        fields=names,
    )


async def _hook_results(
    host: Any, context: ToolContext | None, filter_context: FilterContext, units: tuple[str, ...]
) -> tuple[FilteredText, ...]:
    """What the host's ``toolwire_filter_untrusted`` makes of ``units``, checked.

    :raises _FilterUnusable: the hook answered nothing usable (and whatever the hook raised).
    """
    answer = host.hook.toolwire_filter_untrusted(texts=units, context=filter_context)
    if inspect.isawaitable(answer):
        answer = await bounded(
            answer, "toolwire_filter_untrusted", _hook_timeout(context), "[loop] hook_timeout"
        )
    return _checked(answer, len(units))


def _outcome(
    context: FilterContext, units: tuple[str, ...], results: tuple[FilteredText, ...]
) -> FilterOutcome:
    return FilterOutcome(
        texts=tuple(r.text for r in results),
        results=results,
        report=_report(context, units, results),
        source=context.source,
    )


async def filter_result(
    context: ToolContext | None, result: ToolResult, *, source: str | None = None
) -> ToolResult:
    """``result`` with every text the model reads run through :func:`filter_untrusted`, as one
    unit: its ``content`` and its JSON ``data``, whatever its status.

    The filter's notice for the model (:meth:`FilterOutcome.model_notice`) leads the content.
    JSON ``data`` the filter changed no longer reads as the original JSON, so it becomes text
    after the content. A result with no text is returned as it is.

    :param context: the tool call's context (None outside a call: the built-in filter runs).
    :param result: the tool's result.
    :param source: where the content came from (default: the tool's name).
    """
    texts: list[str] = []
    fields: list[str] = []
    if result.content:
        texts.append(result.content)
        fields.append("content")
    data_text = None
    if result.data is not None:
        data_text = json.dumps(result.data, ensure_ascii=False, default=str)
        texts.append(data_text)
        fields.append("data")
    if not texts:
        return result
    if source is None and context is not None:
        source = f"the result of {context.tool.name}"
    outcome = await filter_untrusted(context, texts, source=source, fields=fields)
    filtered = list(outcome.texts)
    content = filtered.pop(0) if result.content else None
    data = result.data
    if data_text is not None:
        new_data_text = filtered.pop(0)
        if new_data_text != data_text:
            content = "\n\n".join(t for t in (content, new_data_text) if t)
            data = None
    notice = outcome.model_notice()
    if notice:
        content = f"{notice}\n\n{content}" if content else notice
    if content == result.content and data is result.data:
        return result
    return attrs.evolve(result, content=content, data=data)


def _flagged_only(
    texts: tuple[str, ...], results: tuple[FilteredText, ...]
) -> tuple[FilteredText, ...]:
    """The results for a structured document: each text as sent, every change a flag."""
    kept = []
    for text, result in zip(texts, results, strict=True):
        changes = list(result.neutralised)
        if not changes and result.text != text:
            changes.append("changed without saying what")
        flagged = (
            *result.flagged,
            *(f"{change} (left as sent: a structured document)" for change in changes),
        )
        kept.append(FilteredText(text=text, neutralised=(), flagged=flagged))
    return tuple(kept)


def _hook_timeout(context: ToolContext | None) -> float:
    """``[loop] hook_timeout`` of the call's host (its default without one)."""
    from ..config import LoopConfig

    config = context.services.get("config") if context is not None else None
    loop = getattr(config, "loop", None)
    return loop.hook_timeout if isinstance(loop, LoopConfig) else LoopConfig().hook_timeout


def _plugin_failed(host: Any, context: ToolContext | None, exc: BaseException) -> None:
    """Report the filter implementation that raised, by name, as a plugin failure."""
    emit = _emitter(host, context)
    if emit is None or context is None:
        return
    from ..events import PluginFailed

    caller = host.hook.toolwire_filter_untrusted
    emit(
        PluginFailed(
            run_id=context.run_id,
            round=context.round,
            plugin=raised_by(exc, caller.get_hookimpls()) or "",
            hook="toolwire_filter_untrusted",
            error=f"the result of {context.tool.name} call {context.call_id} was passed on "
            f"unfiltered: {describe(exc)}",
        )
    )


def _emitter(host: Any, context: ToolContext | None) -> Any:
    if context is None:
        return None
    # The loop may give a call its own emitter (recording the event in the run); else the
    # host's observers get it directly.
    emit = context.services.get("emit") or getattr(host, "emit", None)
    return emit if callable(emit) else None


def _emit(host: Any, context: ToolContext | None, report: str) -> None:
    emit = _emitter(host, context)
    if emit is None or context is None:
        return
    from ..events import ContentFiltered

    emit(
        ContentFiltered(
            run_id=context.run_id,
            round=context.round,
            call_id=context.call_id,
            name=context.tool.name,
            report=report,
        )
    )
