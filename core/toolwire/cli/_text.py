"""Text from outside made safe to print on a terminal: the one sanitizer every command uses.

Model output, tool results and descriptions, MCP servers' stderr, file names: any of them may
carry escape sequences that move the cursor, clear the screen, retitle the terminal or write
the clipboard (OSC 52). :func:`inert` shows every such control character as a visible
replacement. It imports nothing, so the lightest command can use it.
"""

from __future__ import annotations

# Every C0 and C1 control character but newline and tab, and DEL.
_INERT = {c: "\ufffd" for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)) if c not in (9, 10)}
_INERT_LINE = {**_INERT, 10: "\ufffd"}


def inert(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control character but newline and tab replaced by U+FFFD.

    :param one_line: replace newlines too (for text that must stay on its line: a name, a
        list entry).
    """
    return text.translate(_INERT_LINE if one_line else _INERT)
