"""The ``ptype`` dialect: Python-style calls read with ``ast`` (never evaluated), and written.

The ``python`` dialect shares the reader and the writer, with Python's own literals only.
"""

from __future__ import annotations

import ast
import json
import keyword
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, Final

from ._brackets import BracketScanner
from ._found import Found

_NAME_AT_START: Final = re.compile(r"\s*\[?\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_NAMED_LITERALS: Final = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
PYTHON_LITERALS: Final = {"True": True, "False": False, "None": None}
"""The bare words that are values in Python."""
_PYTHON_SPELLING: Final = {"true": "True", "false": "False", "null": "None"}


class _NotLiteral(ValueError):
    pass


find_bracket_end: Final = BracketScanner(
    {
        "'": r"(?:[^'\\\n]|\\.)*(?:'|(?=\n))",
        '"': r'(?:[^"\\\n]|\\.)*(?:"|(?=\n))',
        "'" * 3: r"(?:[^\\]|\\.)*?" + "'" * 3,
        '"' * 3: r"(?:[^\\]|\\.)*?" + '"' * 3,
    }
).end
"""The index after the bracket closing the one at ``start`` of a Python call text, or None if
the text ends first. Python strings (single, double and triple quoted, with escapes) are
skipped; a one-line string still open at the end of its line ends there (``ast`` reports it)."""


def name_at_start(source: str) -> str:
    """The name a call text begins with (``""`` when there is none)."""
    match = _NAME_AT_START.match(source)
    return match.group(1) if match else ""


def read_calls(
    source: str,
    order_of: Callable[[str], tuple[str, ...] | None],
    names: Mapping[str, Any] = _NAMED_LITERALS,
) -> list[Found]:
    """The calls in ``name(…)`` or ``[a(…), b(…)]``, arguments mapped through ``order_of``.

    ``order_of`` gives a known function's parameters in positional order. Values must be
    literals, with ``names`` the bare words that are values (Python's and JSON's by default);
    anything else makes that call invalid, with the reason.
    """
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        where = f" (line {exc.lineno}, column {exc.offset})" if exc.lineno else ""
        return [Found(name_at_start(source), None, f"not a valid call: {exc.msg}{where}")]
    node = tree.body
    nodes = node.elts if isinstance(node, ast.List | ast.Tuple) else [node]
    if not nodes:
        return [Found("", None, "an empty list of calls")]
    return [_read_call(call, order_of, names) for call in nodes]


def _dotted_name(node: ast.expr) -> str | None:
    """``math.factorial`` for the callee of ``math.factorial(…)``: a dotted tool name is
    Python attribute syntax, so the dialect calls it by its own name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _read_call(
    node: ast.expr,
    order_of: Callable[[str], tuple[str, ...] | None],
    names: Mapping[str, Any],
) -> Found:
    name = _dotted_name(node.func) if isinstance(node, ast.Call) else None
    if not isinstance(node, ast.Call) or name is None:
        return Found(
            "", None, f"expected a call like name(value, key=value), got {ast.unparse(node)!r}"
        )
    order = order_of(name)
    arguments: dict[str, Any] = {}
    try:
        if node.args:
            if order is None:
                raise _NotLiteral(
                    f"positional arguments need a known tool; call {name} with keyword arguments"
                )
            if len(node.args) > len(order):
                raise _NotLiteral(
                    f"{name} takes at most {len(order)} positional arguments "
                    f"({', '.join(order)}), got {len(node.args)}"
                )
            for parameter, value in zip(order, node.args, strict=False):
                if isinstance(value, ast.Starred):
                    raise _NotLiteral("*arguments are not accepted; write the values out")
                arguments[parameter] = literal(value, names)
        for item in node.keywords:
            values: dict[str, Any]
            if item.arg is None:
                spread = literal(item.value, names)
                if not isinstance(spread, dict):
                    raise _NotLiteral("** must be followed by a dict of arguments")
                values = spread
            else:
                values = {item.arg: literal(item.value, names)}
            for key, value in values.items():
                if key in arguments:
                    raise _NotLiteral(f"the argument {key!r} is given more than once")
                arguments[key] = value
    except _NotLiteral as exc:
        return Found(name, None, str(exc))
    return Found(name, arguments, None)


def literal(node: ast.expr, names: Mapping[str, Any] = _NAMED_LITERALS) -> Any:
    """The JSON value of a literal node (``names``: the bare words that are values); raises
    for anything else."""
    if isinstance(node, ast.Constant):
        constant = node.value
        if constant is None or isinstance(constant, bool | int | str):
            return constant
        if isinstance(constant, float) and math.isfinite(constant):
            return constant
        raise _NotLiteral(f"{ast.unparse(node)} is not a JSON value")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = literal(node.operand, names)
        if isinstance(operand, int | float) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.List | ast.Tuple):
        return [literal(item, names) for item in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise _NotLiteral("** inside a dict is not accepted; write the entries out")
            key_value = literal(key, names)
            if not isinstance(key_value, str):
                raise _NotLiteral(f"dict keys must be strings, got {ast.unparse(key)}")
            out[key_value] = literal(value, names)
        return out
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        if node.id in _PYTHON_SPELLING:
            raise _NotLiteral(f"{node.id} is not a Python value; write {_PYTHON_SPELLING[node.id]}")
        raise _NotLiteral(f'{node.id} is not a value; put text in quotes: "{node.id}"')
    if isinstance(node, ast.JoinedStr):
        raise _NotLiteral("f-strings are not accepted; write the text out in quotes")
    raise _NotLiteral(f"{ast.unparse(node)} is not a literal value (expressions are not run)")


def _double_quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def render_value(value: Any, quote: Callable[[str], str] = _double_quoted) -> str:
    """``value`` as a Python literal (``True``, ``None``), strings written by ``quote``
    (double quotes by default; ``repr`` for Python's own quoting)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render_value(v, quote) for v in value) + "]"
    if isinstance(value, Mapping):
        items = (f"{quote(k)}: {render_value(v, quote)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def is_keyword_name(name: str) -> bool:
    """Whether ``name`` can be written as a keyword argument (``name=value``).

    Python reads identifiers in NFKC form (``ﬁle`` is ``file``), so a name that form changes is
    written in a ``**{…}`` spread instead.
    """
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and unicodedata.normalize("NFKC", name) == name
    )


def render_call(
    name: str,
    arguments: Mapping[str, Any],
    order: tuple[str, ...],
    quote: Callable[[str], str] = _double_quoted,
) -> str:
    """``name(…)``: the leading parameters of ``order`` positionally, the others by keyword
    (strings written by ``quote``, see :func:`render_value`)."""
    parts: list[str] = []
    used: set[str] = set()
    for parameter in order:
        if parameter not in arguments:
            break
        parts.append(render_value(arguments[parameter], quote))
        used.add(parameter)
    spread: dict[str, Any] = {}
    for key, value in arguments.items():
        if key in used:
            continue
        if is_keyword_name(key):
            parts.append(f"{key}={render_value(value, quote)}")
        else:
            spread[key] = value
    if spread:
        parts.append("**" + render_value(spread, quote))
    return f"{name}({', '.join(parts)})"


def read_python_calls(
    source: str, order_of: Callable[[str], tuple[str, ...] | None]
) -> list[Found]:
    """The calls of the ``python`` dialect: :func:`read_calls` with Python's literals only."""
    return read_calls(source, order_of, PYTHON_LITERALS)


def render_python_call(name: str, arguments: Mapping[str, Any], order: tuple[str, ...]) -> str:
    """A call of the ``python`` dialect: :func:`render_call` with strings quoted as Python
    quotes them (``repr``)."""
    return render_call(name, arguments, order, repr)
