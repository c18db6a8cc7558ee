"""A small GBNF reader for the tests: parse a grammar, tell whether it accepts a text, and sample
texts from it — so the grammar builder is checked without a model."""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterator
from typing import Any, TypeAlias

Node: TypeAlias = tuple[Any, ...]
# ("alt", [node, ...]) | ("seq", [node, ...]) | ("lit", text) | ("cls", negated, [(lo, hi), ...])
# | ("ref", name) | ("rep", node, low, high | None)

_ESCAPES = {
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "\\": "\\",
    '"': '"',
    "[": "[",
    "]": "]",
    "-": "-",
    "^": "^",
    "/": "/",
}


class GrammarSyntaxError(ValueError):
    """The text is not GBNF this reader understands."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, what: str) -> GrammarSyntaxError:
        return GrammarSyntaxError(f"{what} at {self.pos}: {self.text[self.pos : self.pos + 30]!r}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos : self.pos + 1]

    def alternatives(self) -> Node:
        options = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else ("alt", options)

    def sequence(self) -> Node:
        items: list[Node] = []
        while True:
            ch = self.peek()
            if ch in ("", "|", ")", "\n"):
                break
            items.append(self.postfix(self.atom()))
        return items[0] if len(items) == 1 else ("seq", items)

    def atom(self) -> Node:
        ch = self.peek()
        if ch == '"':
            return ("lit", self.literal())
        if ch == "[":
            return self.char_class()
        if ch == "(":
            self.pos += 1
            inner = self.alternatives()
            if self.peek() != ")":
                raise self.error("expected ')'")
            self.pos += 1
            return inner
        match = re.compile(r"[a-zA-Z0-9-]+").match(self.text, self.pos)
        if match is None:
            raise self.error("unexpected text")
        self.pos = match.end()
        return ("ref", match.group())

    def char(self) -> str:
        ch = self.text[self.pos]
        self.pos += 1
        if ch != "\\":
            return ch
        esc = self.text[self.pos]
        self.pos += 1
        if esc in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[esc]
            code = int(self.text[self.pos : self.pos + size], 16)
            self.pos += size
            return chr(code)
        if esc not in _ESCAPES:
            raise self.error(f"unknown escape \\{esc}")
        return _ESCAPES[esc]

    def literal(self) -> str:
        self.pos += 1
        out = []
        while self.text[self.pos] != '"':
            out.append(self.char())
        self.pos += 1
        return "".join(out)

    def char_class(self) -> Node:
        self.pos += 1
        negated = self.text[self.pos] == "^"
        if negated:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        while self.text[self.pos] != "]":
            low = self.char()
            high = low
            if self.text[self.pos] == "-" and self.text[self.pos + 1] != "]":
                self.pos += 1
                high = self.char()
            ranges.append((ord(low), ord(high)))
        self.pos += 1
        return ("cls", negated, ranges)

    def postfix(self, node: Node) -> Node:
        while True:
            ch = self.text[self.pos : self.pos + 1]
            if ch == "*":
                node = ("rep", node, 0, None)
            elif ch == "+":
                node = ("rep", node, 1, None)
            elif ch == "?":
                node = ("rep", node, 0, 1)
            elif ch == "{":
                end = self.text.index("}", self.pos)
                body = self.text[self.pos + 1 : end]
                low_text, _, high_text = body.partition(",")
                low = int(low_text)
                high = low if "," not in body else (int(high_text) if high_text else None)
                node = ("rep", node, low, high)
                self.pos = end
            else:
                return node
            self.pos += 1


def parse(text: str) -> dict[str, Node]:
    """The rules of a grammar written one rule per line (as the builder writes them)."""
    rules: dict[str, Node] = {}
    for line in text.split("\n"):
        if not line.strip():
            continue
        name, sep, body = line.partition(" ::= ")
        if not sep:
            raise GrammarSyntaxError(f"not a rule: {line!r}")
        if name in rules:
            raise GrammarSyntaxError(f"rule {name!r} defined twice")
        parser = _Parser(body)
        rules[name] = parser.alternatives()
        if parser.peek() != "":
            raise parser.error("trailing text")
    for name in _references(rules):
        if name not in rules:
            raise GrammarSyntaxError(f"rule {name!r} is used but not defined")
    return rules


def _references(rules: dict[str, Node]) -> Iterator[str]:
    def walk(node: Node) -> Iterator[str]:
        kind = node[0]
        if kind == "ref":
            yield node[1]
        elif kind in ("alt", "seq"):
            for child in node[1]:
                yield from walk(child)
        elif kind == "rep":
            yield from walk(node[1])

    for node in rules.values():
        yield from walk(node)


def _in_class(node: Node, ch: str) -> bool:
    inside = any(lo <= ord(ch) <= hi for lo, hi in node[2])
    return inside != node[1]


class Grammar:
    """A parsed grammar: :meth:`accepts` a whole text, :meth:`sample` random texts."""

    def __init__(self, text: str) -> None:
        self.rules = parse(text)
        self.shortest = self._shortest_lengths()

    # -- recognition ---------------------------------------------------------------------------

    def accepts(self, text: str) -> bool:
        """True when ``root`` derives exactly ``text``."""

        @functools.cache
        def rule_ends(name: str, pos: int) -> frozenset[int]:
            return frozenset(ends(self.rules[name], pos))

        def ends(node: Node, pos: int) -> set[int]:
            kind = node[0]
            if kind == "lit":
                return {pos + len(node[1])} if text.startswith(node[1], pos) else set()
            if kind == "cls":
                return {pos + 1} if pos < len(text) and _in_class(node, text[pos]) else set()
            if kind == "ref":
                return set(rule_ends(node[1], pos))
            if kind == "alt":
                out: set[int] = set()
                for child in node[1]:
                    out |= ends(child, pos)
                return out
            if kind == "seq":
                current = {pos}
                for child in node[1]:
                    current = {e for p in current for e in ends(child, p)}
                    if not current:
                        break
                return current
            _, child, low, high = node

            def step(positions: set[int]) -> set[int]:
                return {e for p in positions for e in ends(child, p)}

            current = {pos}
            for _ in range(low):
                current = step(current)
            out = set(current)
            if high is None:
                frontier = current
                while frontier:
                    frontier = step(frontier) - out
                    out |= frontier
            else:
                for _ in range(high - low):
                    current = step(current)
                    if not current:
                        break
                    out |= current
            return out

        return len(text) in rule_ends("root", 0)

    # -- sampling ------------------------------------------------------------------------------

    def _shortest_lengths(self) -> dict[str, int]:
        inf = 10**9
        best = dict.fromkeys(self.rules, inf)

        def length(node: Node) -> int:
            kind = node[0]
            if kind == "lit":
                return len(node[1])
            if kind == "cls":
                return 1
            if kind == "ref":
                return best[node[1]]
            if kind == "alt":
                return min(length(child) for child in node[1])
            if kind == "seq":
                return min(inf, sum(length(child) for child in node[1]))
            return min(inf, node[2] * length(node[1]))

        changed = True
        while changed:
            changed = False
            for name, node in self.rules.items():
                value = length(node)
                if value < best[name]:
                    best[name] = value
                    changed = True
        return best

    def _length(self, node: Node) -> int:
        kind = node[0]
        if kind == "lit":
            return len(node[1])
        if kind == "cls":
            return 1
        if kind == "ref":
            return self.shortest[node[1]]
        if kind == "alt":
            return min(self._length(child) for child in node[1])
        if kind == "seq":
            return sum(self._length(child) for child in node[1])
        return node[2] * self._length(node[1])

    def sample(self, rng: random.Random, *, budget: int = 60) -> str:
        """A random text of the grammar; past ``budget`` steps it takes the shortest ways out."""
        steps = [0]
        out: list[str] = []

        def emit(node: Node) -> None:
            steps[0] += 1
            late = steps[0] > budget
            kind = node[0]
            if kind == "lit":
                out.append(node[1])
            elif kind == "cls":
                out.append(_pick_char(node, rng))
            elif kind == "ref":
                emit(self.rules[node[1]])
            elif kind == "alt":
                options = node[1]
                if late:
                    emit(min(options, key=self._length))
                else:
                    emit(rng.choice(options))
            elif kind == "seq":
                for child in node[1]:
                    emit(child)
            else:
                _, child, low, high = node
                top = low if late else min(high if high is not None else low + 3, low + 3)
                for _ in range(rng.randint(low, max(low, top))):
                    emit(child)

        emit(self.rules["root"])
        return "".join(out)


_POOL = [chr(c) for c in range(0x20, 0x7F)] + [
    "\t",
    "\n",
    "é",
    "ß",
    "€",
    "中",
    "😀",
    "\u2028",
    "\x7f",
    "\x01",
]


def _pick_char(node: Node, rng: random.Random) -> str:
    if not node[1]:
        lo, hi = rng.choice(node[2])
        return chr(rng.randint(lo, hi))
    allowed = [ch for ch in _POOL if _in_class(node, ch)]
    return rng.choice(allowed)
