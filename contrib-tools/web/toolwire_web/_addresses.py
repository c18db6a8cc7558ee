"""Whether an address the model asks for appears word for word in the conversation."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from toolwire.messages import Message, SystemMessage, ToolResultMessage, UserMessage

# Characters that continue an address: anything that is not a space, a quote or a bracket that
# commonly encloses one in prose, Markdown or JSON.
_ADDRESS_CHAR = re.compile(r"[^\s<>\"'`(){}\[\]|\\^]")
# What may follow an address in prose without being part of it: "see https://a.example/x)."
_TRAILING = frozenset(".,;:!?)]}>'\"*_`’”»")
_SCHEME = re.compile(r"https?://", re.IGNORECASE)


def conversation_texts(messages: Sequence[Message]) -> Iterable[str]:
    """The texts that came into the conversation from outside the model: the system prompt,
    user turns, and the successful results of tools that ran.

    The model's own turns are left out: an address it wrote itself was chosen by it. So are the
    results the host wrote (``by_host``: a refusal of an unknown tool quotes the arguments the
    model sent) and failed results, whose text says what went wrong with the model's own call
    (a blocked read names the address it refused).
    """
    for message in messages:
        if isinstance(message, UserMessage):
            yield message.text
        elif isinstance(message, SystemMessage):
            yield message.content
        elif isinstance(message, ToolResultMessage):
            result = message.result
            if message.by_host or not result.is_ok:
                continue
            yield result.model_text()
            for source in result.sources:
                yield source.url


def _ends_cleanly(text: str, end: int) -> bool:
    """True when nothing but closing punctuation follows ``end`` up to the next space."""
    for index in range(end, len(text)):
        char = text[index]
        if char.isspace():
            return True
        if char not in _TRAILING:
            return False
    return True


def _starts_cleanly(text: str, start: int, *, after_scheme: bool) -> bool:
    if start == 0:
        return True
    if after_scheme and text[max(0, start - 3) : start] == "://":
        return True
    return _ADDRESS_CHAR.match(text[start - 1]) is None


def _occurs(needle: str, text: str, *, schemeless: bool) -> bool:
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        if _starts_cleanly(text, start, after_scheme=schemeless) and _ends_cleanly(text, end):
            return True
        start = text.find(needle, start + 1)
    return False


def _forms(url: str) -> list[tuple[str, bool]]:
    """The spellings of ``url`` that count as the same address, each with whether it lacks a
    scheme: as written, without a trailing ``/``, with ``&amp;`` for ``&``, and without its
    ``http(s)://`` (a person often writes ``example.org/page``)."""
    bases = [url]
    scheme = _SCHEME.match(url)
    if url.endswith("/") and not url.endswith("://"):
        bases.append(url[:-1])
    elif scheme is not None and "/" not in url[scheme.end() :]:
        bases.append(url + "/")
    if "&" in url:
        bases.extend(base.replace("&", "&amp;") for base in list(bases))
    forms = [(base, False) for base in bases]
    for base in bases:
        match = _SCHEME.match(base)
        if match is not None and len(base) > match.end():
            forms.append((base[match.end() :], True))
    return forms


def address_given(url: str, messages: Sequence[Message]) -> bool:
    """True when ``url`` appears word for word in a user message or a tool result.

    "Word for word" means the whole address, bounded: it may be followed only by closing
    punctuation (``https://a.example/x).``), never by more address characters, so a prefix of a
    longer address does not count, and nothing may be appended to a given one. A trailing ``/``
    more or less and a missing ``http://`` or ``https://`` in the conversation are tolerated.
    """
    url = url.strip()
    if not url:
        return False
    forms = _forms(url)
    for text in conversation_texts(messages):
        for form, schemeless in forms:
            if _occurs(form, text, schemeless=schemeless):
                return True
    return False
