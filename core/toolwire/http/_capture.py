"""What a request body looks like once secrets are taken out: the API key and sensitive values.

The transport captures every provider request body here when ``[trace] request_bodies`` is on
(or ``toolwire run --show-wire``). A body holds the whole conversation, so the values of
sensitive arguments are in it, in whatever form the wire format gives them: plain strings
(Anthropic's ``input``), JSON text inside a string (Chat Completions ``arguments``), or a
prompted call in the model's text. Redaction therefore goes by value, not by position.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._redact import redact_body, sensitive_values_in
from ..messages import AssistantMessage, Message, ToolCall

__all__ = ["redact_body", "sensitive_values"]


def sensitive_values(
    messages: Iterable[Message], sensitive: Callable[[ToolCall], frozenset[str]]
) -> frozenset[str]:
    """The values of every sensitive argument of the calls in ``messages``, as text.

    :param messages: the conversation of one request.
    :param sensitive: the names of a call's sensitive arguments (an
        :class:`~toolwire._redact.Inside` name for those inside an argument).
    :returns: each string value, and the JSON text of each number, found under a sensitive
        argument (at any depth of it); booleans and nulls say nothing worth hiding.
    """
    found: set[str] = set()
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for part in message.parts:
            if not isinstance(part, ToolCall) or not part.arguments:
                continue
            names = sensitive(part)
            if not names:
                continue
            for value in sensitive_values_in(part.arguments, names):
                _collect(value, found)
    return frozenset(found)


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        if value:
            found.add(value)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        found.add(json.dumps(value))
    elif isinstance(value, Mapping):
        for item in value.values():
            _collect(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, found)
