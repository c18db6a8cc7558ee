"""How a final assistant turn ended: answered, cut off at the token limit, or empty."""

from __future__ import annotations

from typing import Literal

from ..messages import AssistantMessage

AnswerOutcome = Literal["answered", "truncated", "empty"]


def answer_outcome(
    message: AssistantMessage,
    *,
    api: str,
    max_tokens: int | None = None,
    hint: str | None = None,
) -> tuple[AnswerOutcome, str | None]:
    """What a turn without tool calls means for the run, with a detail for people.

    ``empty``: no text at all (an empty stream, or an answer with nothing in it); ``truncated``:
    the provider stopped at its token limit (finish reason ``length``), so the text is partial;
    else ``answered``. The detail says what happened and what to change; ``hint`` is the
    adapter's likely cause of an empty answer (:attr:`ProviderAdapter.empty_answer_hint`).
    """
    text = message.text
    if message.finish_reason == "length":
        limit = f" (now {max_tokens})" if max_tokens is not None else ""
        return (
            "truncated",
            f"the {api} answer was cut off at the token limit (finish reason 'length') after "
            f"{len(text)} characters: raise [provider] max_tokens{limit}",
        )
    if not text.strip():
        finish = message.finish_reason or "none"
        cause = hint or (
            "a host that cannot take the tools it was sent may answer nothing (then set "
            "[provider] native_tools = false)"
        )
        return (
            "empty",
            f"the {api} answer is empty: no text and no tool calls (finish reason {finish!r}); "
            f"check the server's log: {cause}",
        )
    return "answered", None
