"""``BracketScanner``: where a bracketed call text ends, with a dialect's strings skipped.

Each dialect that reads calls written in brackets (Python, TypeScript, JSON) says only how its
strings are quoted; finding the closing bracket is the same walk for all of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["BracketScanner"]


class BracketScanner:
    """Finds the bracket closing an opening one, skipping quoted strings.

    Brackets are counted, not matched by kind: the text is read properly afterwards, and a
    mismatch is reported there.

    :param strings: for each opening quote (single, double, triple or back quote), a regular
        expression matching the rest of such a string, closing quote included (it may also stop
        at the end of a line, for a one-line string the reader then reports as open). It is
        compiled with ``re.DOTALL``.
    :param brackets: the bracket characters, each opening one followed by its closing one.
    """

    def __init__(self, strings: Mapping[str, str], brackets: str = "()[]{}") -> None:
        longest_first = sorted(strings, key=len, reverse=True)  # ''' before '
        self._strings = {quote: re.compile(rest, re.S) for quote, rest in strings.items()}
        self._tokens = re.compile(
            "|".join([*map(re.escape, longest_first), f"[{re.escape(brackets)}]"])
        )
        self._opening = frozenset(brackets[0::2])

    def end(self, text: str, start: int) -> int | None:
        """The index after the bracket closing the one at ``start``, or None if the text ends
        first (or inside a string)."""
        strings, opening, tokens = self._strings, self._opening, self._tokens
        depth = 0
        i = start
        while True:
            found = tokens.search(text, i)
            if found is None:
                return None
            token = found.group()
            i = found.end()
            string = strings.get(token)
            if string is not None:
                rest = string.match(text, i)
                if rest is None:
                    return None
                i = rest.end()
            elif token in opening:
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    return i
