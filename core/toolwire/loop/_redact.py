"""Redaction of the model's calls before they are shown: the arguments a tool marks sensitive.

The arguments themselves are redacted by :func:`~toolwire.loop._codec.redact_arguments`; this
module applies it to a call and to an answer of the model, as events carry them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

from ..messages import AssistantMessage, ToolCall
from ._codec import REDACTED, redact_arguments

if TYPE_CHECKING:
    from ..tools import Tool


def sensitive(tools: Mapping[str, Tool], name: str) -> frozenset[str]:
    """The sensitive arguments of the tool ``name`` (none for a tool the host does not know)."""
    tool = tools.get(name)
    return tool.sensitive_arguments if tool is not None else frozenset()


def redacted_call(tools: Mapping[str, Tool], call: ToolCall) -> ToolCall:
    """``call`` with its sensitive arguments and its raw argument text redacted (itself when
    its tool has none)."""
    names = sensitive(tools, call.name)
    if not names:
        return call
    return attrs.evolve(
        call,
        arguments=redact_arguments(call.arguments, names) if call.arguments is not None else None,
        raw_arguments=REDACTED if call.raw_arguments is not None else None,
    )


def redacted_message(tools: Mapping[str, Tool], message: AssistantMessage) -> AssistantMessage:
    """The model's answer with each call redacted (itself when nothing needed it)."""
    parts = tuple(redacted_call(tools, p) if isinstance(p, ToolCall) else p for p in message.parts)
    if all(a is b for a, b in zip(parts, message.parts, strict=True)):
        return message
    return attrs.evolve(message, parts=parts)
