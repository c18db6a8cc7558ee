"""Cutting a result down to ``max_result_bytes`` of model text, saying that it was cut."""

from __future__ import annotations

import json

import attrs

from ._result import ToolResult


def truncation_note(shown: int, total: int) -> str:
    """The line appended to a cut result."""
    return f"\n[Result truncated: showing the first {shown} of {total} bytes.]"


def truncate_result(result: ToolResult, max_bytes: int) -> ToolResult:
    """``result`` with its model text cut to at most ``max_bytes`` UTF-8 bytes, note included.

    The text is cut at a character boundary and a note saying so is appended; JSON ``data`` that
    does not fit is turned into (cut) text. Artifacts, which never reach the model, are kept
    whole. ``metadata`` records ``truncated`` and ``original_bytes``. A result that fits is
    returned unchanged.
    """
    if max_bytes <= 0:
        raise ValueError(f"max_bytes must be positive; got {max_bytes!r}")
    content = result.content or ""
    data_text = (
        json.dumps(result.data, ensure_ascii=False, default=str) if result.data is not None else ""
    )
    text = "\n".join(part for part in (content, data_text) if part)
    encoded = text.encode("utf-8")
    total = len(encoded)
    if total <= max_bytes:
        return result
    budget = max_bytes - len(truncation_note(max_bytes, total).encode("utf-8"))
    budget = max(budget, min(max_bytes, 16))
    # Dropping the incomplete last character: the prefix of valid UTF-8 is valid up to it.
    kept = encoded[:budget].decode("utf-8", errors="ignore")
    shown = len(kept.encode("utf-8"))
    return attrs.evolve(
        result,
        content=kept + truncation_note(shown, total),
        data=None,
        metadata={**result.metadata, "truncated": True, "original_bytes": total},
    )
