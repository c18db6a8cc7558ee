"""Safe arithmetic: an expression parsed with ``ast`` and walked over a whitelist of nodes."""

from __future__ import annotations

import ast
import difflib
import io
import math
import re
import tokenize
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeAlias

from ._problems import read_word_problem
from ._words import from_words

Number: TypeAlias = int | float

MAX_EXPRESSION_LENGTH = 500
"""The longest expression accepted, in characters (a word problem too): with the limits below it
bounds the work of any evaluation to a few milliseconds, which lets the tool run on the event
loop's thread."""

MAX_NODES = 300
"""The most syntax nodes an expression may have (numbers, operators, calls)."""

MAX_INTEGER_DIGITS = 300
"""Integers (intermediate or final) may have at most this many digits."""

_INTEGER_LIMIT = 10**MAX_INTEGER_DIGITS

MAX_EXPONENT = 10_000
"""The largest absolute exponent of ``**``."""

MAX_FACTORIAL = 170
"""The largest argument of ``factorial`` (170! is the last that fits a float)."""


class CalculationError(ValueError):
    """An expression was refused or could not be evaluated; the message names the offending part."""


class _Function(NamedTuple):
    """A callable the calculator offers, with its arity and a line of help for refusals."""

    call: Callable[..., Number]
    min_args: int
    max_args: int | None
    usage: str


def _round(x: Number, digits: Number = 0) -> Number:
    if isinstance(digits, float):
        if not digits.is_integer():
            raise CalculationError(f"round() takes a whole number of digits, got {_show(digits)}")
        digits = int(digits)
    if abs(digits) > 100:
        raise CalculationError(f"round() takes at most 100 digits, got {digits}")
    result = round(x, digits)
    return int(result) if digits <= 0 and isinstance(x, int) else result


def _log(x: Number, base: Number | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


def _factorial(n: Number) -> int:
    if isinstance(n, float):
        if not n.is_integer():
            raise CalculationError(f"factorial() takes a whole number, got {_show(n)}")
        n = int(n)
    if n < 0:
        raise CalculationError(f"factorial() takes a number of at least 0, got {n}")
    if n > MAX_FACTORIAL:
        raise CalculationError(f"factorial() takes a number of at most {MAX_FACTORIAL}, got {n}")
    return math.factorial(n)


def _integer_function(name: str, fn: Callable[..., int]) -> Callable[..., int]:
    def call(*args: Number) -> int:
        whole = []
        for arg in args:
            if isinstance(arg, float):
                if not arg.is_integer():
                    raise CalculationError(f"{name}() takes whole numbers, got {_show(arg)}")
                arg = int(arg)
            whole.append(arg)
        return fn(*whole)

    return call


FUNCTIONS: dict[str, _Function] = {
    "abs": _Function(abs, 1, 1, "abs(x)"),
    "round": _Function(_round, 1, 2, "round(x) or round(x, digits)"),
    "min": _Function(min, 1, None, "min(a, b, …)"),
    "max": _Function(max, 1, None, "max(a, b, …)"),
    "sqrt": _Function(math.sqrt, 1, 1, "sqrt(x)"),
    "cbrt": _Function(math.cbrt, 1, 1, "cbrt(x)"),
    "exp": _Function(math.exp, 1, 1, "exp(x)"),
    "log": _Function(_log, 1, 2, "log(x) (natural) or log(x, base)"),
    "ln": _Function(math.log, 1, 1, "ln(x)"),
    "log10": _Function(math.log10, 1, 1, "log10(x)"),
    "log2": _Function(math.log2, 1, 1, "log2(x)"),
    "sin": _Function(math.sin, 1, 1, "sin(x) (x in radians)"),
    "cos": _Function(math.cos, 1, 1, "cos(x) (x in radians)"),
    "tan": _Function(math.tan, 1, 1, "tan(x) (x in radians)"),
    "asin": _Function(math.asin, 1, 1, "asin(x)"),
    "acos": _Function(math.acos, 1, 1, "acos(x)"),
    "atan": _Function(math.atan, 1, 1, "atan(x)"),
    "atan2": _Function(math.atan2, 2, 2, "atan2(y, x)"),
    "sinh": _Function(math.sinh, 1, 1, "sinh(x)"),
    "cosh": _Function(math.cosh, 1, 1, "cosh(x)"),
    "tanh": _Function(math.tanh, 1, 1, "tanh(x)"),
    "degrees": _Function(math.degrees, 1, 1, "degrees(radians)"),
    "radians": _Function(math.radians, 1, 1, "radians(degrees)"),
    "hypot": _Function(math.hypot, 1, None, "hypot(x, y, …)"),
    "floor": _Function(math.floor, 1, 1, "floor(x)"),
    "ceil": _Function(math.ceil, 1, 1, "ceil(x)"),
    "trunc": _Function(math.trunc, 1, 1, "trunc(x)"),
    "factorial": _Function(_factorial, 1, 1, "factorial(n)"),
    "gcd": _Function(_integer_function("gcd", math.gcd), 1, None, "gcd(a, b, …)"),
    "lcm": _Function(_integer_function("lcm", math.lcm), 1, None, "lcm(a, b, …)"),
}
"""Every function an expression may call, by name."""

CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}
"""Every named constant an expression may use."""

_BINARY: dict[type[ast.operator], tuple[str, Callable[[Any, Any], Number]]] = {
    ast.Add: ("+", lambda a, b: a + b),
    ast.Sub: ("-", lambda a, b: a - b),
    ast.Mult: ("*", lambda a, b: a * b),
    ast.Div: ("/", lambda a, b: a / b),
    ast.FloorDiv: ("//", lambda a, b: a // b),
    ast.Mod: ("%", lambda a, b: a % b),
}

_NODE_NAMES: dict[type[ast.AST], str] = {
    ast.Compare: "comparisons",
    ast.BoolOp: "and/or",
    ast.Attribute: "attribute access",
    ast.Subscript: "indexing",
    ast.Lambda: "lambda",
    ast.IfExp: "if/else",
    ast.List: "lists",
    ast.Tuple: "tuples",
    ast.Dict: "dicts",
    ast.Set: "sets",
    ast.ListComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.JoinedStr: "strings",
    ast.NamedExpr: "assignment",
    ast.Starred: "unpacking",
}

SYNTAX_HELP = "numbers, + - * / ^ %, parentheses and the functions of the tool's description"
"""What an expression may contain, as told to the model in refusals: short, since a small model
reads every refusal of a question again at each retry (the functions are listed once, in the
calculator's description)."""


def _quoted(text: str, limit: int) -> str:
    """``text`` quoted, cut to about ``limit`` characters (a refusal is read again at each try)."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _near(name: str, known: Iterable[str]) -> str:
    """A hint naming the known name that ``name`` was probably meant to be (or "")."""
    lowered = name.lower()
    names = list(known)
    if lowered in names:
        return f" (names are lowercase: {lowered!r})"
    close = difflib.get_close_matches(lowered, names, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def evaluate(expression: str) -> Number:
    """Evaluate an arithmetic ``expression`` without ``eval``; text that is not arithmetic by
    itself is read as an everyday word problem when it has that shape (see
    :func:`~toolwire_basics._problems.read_word_problem`).

    :raises CalculationError: for anything outside the whitelist, a domain error, a division by
        zero or a result beyond the bounds; the message names the offending part.
    """
    _check_length(expression.strip())  # before any reading, a word problem's too
    try:
        tree, source = parse(expression)
        return _Evaluator(source).visit(tree.body)
    except CalculationError as refused:
        # Words that are not arithmetic by themselves: an everyday word problem of a known
        # shape, or the refusal.
        problem = read_word_problem(expression) if _has_words(expression) else None
        if problem is None:
            raise
        try:
            tree, source = parse(problem)
            return _Evaluator(source).visit(tree.body)
        except CalculationError:
            raise refused from None


def _has_words(text: str) -> bool:
    """True when ``text`` holds a word that is no name of the calculator's (not notation)."""
    return any(
        word.lower() not in FUNCTIONS and word.lower() not in CONSTANTS
        for word in re.findall(r"[^\W\d_]{2,}", text)
    )


def parse(expression: str) -> tuple[ast.Expression, str]:
    """Parse ``expression`` (after rewriting words of arithmetic, ``^``, ``×``, ``÷`` and percent)
    into an AST.

    :returns: the tree and the rewritten source, for naming parts in refusals.
    :raises CalculationError: when the text is empty, too long, or not an expression.
    """
    text = expression.strip()
    if not text:
        raise CalculationError(f"the expression is empty; write arithmetic using {SYNTAX_HELP}")
    _check_length(text)
    source = _rewrite(from_words(_without_currency(text)))
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        if re.search(r"(?<![=<>!])=(?!=)", source):
            raise CalculationError(
                "the expression contains '=': give only the arithmetic to evaluate, without a "
                "result or an assignment"
            ) from None
        where = ""
        if exc.offset and 0 < exc.offset <= len(source):
            rest = _quoted(source[exc.offset - 1 :], 24)
            where = f" (the problem is near column {exc.offset}: {rest})"
        raise CalculationError(
            f"{_quoted(expression, 48)} is not a valid arithmetic expression{where}; "
            f"use {SYNTAX_HELP}"
        ) from None
    except (ValueError, RecursionError, MemoryError):
        raise CalculationError(
            f"{expression!r} cannot be parsed (too deeply nested or malformed)"
        ) from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise CalculationError(
            f"the expression has {nodes} parts; at most {MAX_NODES} are accepted: split the "
            "calculation into steps"
        )
    return tree, source


def _check_length(text: str) -> None:
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise CalculationError(
            f"the expression is {len(text)} characters long; at most {MAX_EXPRESSION_LENGTH} "
            "are accepted: split the calculation into steps"
        )


_CURRENCY = re.compile(
    r"[$€£¥]\s*(?=[\d.])|(?<=\d)\s*(?:dollars?|euros?|bucks|usd|eur|gbp)\b", re.IGNORECASE
)


def _without_currency(text: str) -> str:
    """``$12.50`` and ``12.50 dollars`` as ``12.50``: money is counted as plain numbers."""
    return _CURRENCY.sub("", text)


_PERCENT_FOLLOWERS = frozenset({"*", "/", "//", ")", ",", "**"})


def _rewrite(text: str) -> str:
    """Turn calculator notation into Python syntax, token by token.

    ``^`` becomes ``**``; a ``%`` that ends an operand (followed by an operator that needs a left
    operand, a closing parenthesis, the end, or the word ``of``) becomes ``/100`` (and ``of``
    becomes ``*``). Any other ``%`` stays the remainder operator.
    """
    text = text.replace("×", "*").replace("÷", "/").replace("−", "-")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return text.replace("^", "**")
    significant = [
        t
        for t in tokens
        if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT)
    ]
    out: list[str] = []
    changed = False
    percent_before = False
    for index, tok in enumerate(significant):
        following = significant[index + 1] if index + 1 < len(significant) else None
        if tok.type == tokenize.OP and tok.string == "^":
            out.append("**")
            changed = True
        elif (
            tok.type == tokenize.OP
            and tok.string == "%"
            and (
                following is None
                or following.string in _PERCENT_FOLLOWERS
                or (following.type == tokenize.NAME and following.string == "of")
            )
        ):
            out.append("/100")
            changed = percent_before = True
            continue
        elif (
            tok.type == tokenize.OP
            and tok.string == "%"
            and following
            and following.string in ("+", "-")
        ):
            raise CalculationError(
                f"'%' followed by {following.string!r} is ambiguous: for a percentage write "
                f"it as a fraction (50/100 + 10), for a remainder put the signed number in "
                f"parentheses (7 % ({following.string}3))"
            )
        elif tok.type == tokenize.NAME and tok.string == "of" and percent_before:
            out.append("*")
        else:
            out.append(tok.string)
        percent_before = False
    # Untouched text keeps its spelling, so refusals quote exactly what the model wrote.
    return " ".join(out) if changed else text


def _show(value: Number) -> str:
    return format_number(value)


def format_number(value: Number) -> str:
    """A number as people read it: integers exact, floats to 12 significant digits."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = format(value, ".12g")
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{int(exponent)}"
    return text


class _Evaluator:
    """Walks a parsed expression, allowing only whitelisted nodes."""

    def __init__(self, source: str) -> None:
        self.source = source

    def part(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ast.unparse(node)

    def visit(self, node: ast.AST) -> Number:
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        what = _NODE_NAMES.get(type(node), type(node).__name__)
        if isinstance(node, ast.Tuple):
            what += " (commas only separate function arguments: write 2480, not 2,480)"
        raise CalculationError(
            f"{self.part(node)!r} uses {what}, which the calculator does not support; "
            f"use {SYNTAX_HELP}"
        )

    def constant(self, node: ast.Constant) -> Number:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            kind = "a string" if isinstance(value, str) else f"the value {value!r}"
            raise CalculationError(
                f"{self.part(node)!r} is {kind}, not a number; the calculator works with real "
                "numbers only"
            )
        return self.checked(value, node)

    def name(self, node: ast.Name) -> Number:
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        if node.id in FUNCTIONS:
            raise CalculationError(
                f"{node.id!r} is a function: call it with parentheses, {FUNCTIONS[node.id].usage}"
            )
        raise CalculationError(
            f"unknown name {node.id!r}{_near(node.id, [*CONSTANTS, *FUNCTIONS])}; write numbers "
            f"instead of names (the constants are {', '.join(CONSTANTS)}; the functions are "
            "those of the tool's description)"
        )

    def unary(self, node: ast.UnaryOp) -> Number:
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return +operand
        symbol = "not" if isinstance(node.op, ast.Not) else "~"
        raise CalculationError(
            f"the operator {symbol!r} in {self.part(node)!r} is not supported; use {SYNTAX_HELP}"
        )

    def binary(self, node: ast.BinOp) -> Number:
        left = self.visit(node.left)
        right = self.visit(node.right)
        if isinstance(node.op, ast.Pow):
            return self.checked(self.power(left, right, node), node)
        entry = _BINARY.get(type(node.op))
        if entry is None:
            raise CalculationError(
                f"the operator in {self.part(node)!r} is not supported (bitwise and matrix "
                f"operators are not arithmetic); use {SYNTAX_HELP}"
            )
        symbol, apply = entry
        if symbol in ("/", "//", "%") and right == 0:
            raise CalculationError(f"division by zero in {self.part(node)!r}")
        try:
            result = apply(left, right)
        except OverflowError:
            raise CalculationError(
                f"{self.part(node)!r} overflows (the result is too large)"
            ) from None
        return self.checked(result, node)

    def power(self, base: Number, exponent: Number, node: ast.BinOp) -> Number:
        if abs(exponent) > MAX_EXPONENT:
            raise CalculationError(
                f"the exponent {_show(exponent)} in {self.part(node)!r} is too large; at most "
                f"{MAX_EXPONENT} in absolute value is accepted"
            )
        if base == 0 and exponent < 0:
            raise CalculationError(
                f"division by zero in {self.part(node)!r} (0 to a negative power)"
            )
        if base < 0 and isinstance(exponent, float) and not exponent.is_integer():
            raise CalculationError(
                f"{self.part(node)!r} raises a negative number to a fractional power, which has no "
                "real result"
            )
        if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
            digits = exponent * math.log10(abs(base))
            if digits > MAX_INTEGER_DIGITS:
                raise CalculationError(
                    f"{self.part(node)!r} would have about {int(digits) + 1} digits; at most "
                    f"{MAX_INTEGER_DIGITS} are accepted"
                )
        try:
            result: Number = base**exponent
        except OverflowError:
            raise CalculationError(
                f"{self.part(node)!r} overflows (the result is too large)"
            ) from None
        return result

    def call(self, node: ast.Call) -> Number:
        if not isinstance(node.func, ast.Name):
            raise CalculationError(
                f"{self.part(node.func)!r} cannot be called; call a function of the tool's "
                "description by its name"
            )
        name = node.func.id
        function = FUNCTIONS.get(name)
        if function is None:
            raise CalculationError(
                f"unknown function {name!r}{_near(name, FUNCTIONS)}; the functions are those of "
                "the tool's description"
            )
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            raise CalculationError(
                f"{self.part(node)!r}: pass plain positional arguments, {function.usage}"
            )
        count = len(node.args)
        if count < function.min_args or (
            function.max_args is not None and count > function.max_args
        ):
            raise CalculationError(
                f"{self.part(node)!r} passes {count} argument{'s' if count != 1 else ''}; "
                f"usage: {function.usage}"
            )
        args = [self.visit(arg) for arg in node.args]
        try:
            result = function.call(*args)
        except CalculationError as exc:
            raise CalculationError(f"{self.part(node)!r}: {exc}") from None
        except ValueError:
            raise CalculationError(
                f"{self.part(node)!r} is outside the domain of {name}() (usage: {function.usage})"
            ) from None
        except ZeroDivisionError:
            raise CalculationError(f"division by zero in {self.part(node)!r}") from None
        except OverflowError:
            raise CalculationError(
                f"{self.part(node)!r} overflows (the result is too large)"
            ) from None
        return self.checked(result, node)

    def checked(self, value: Number, node: ast.AST) -> Number:
        if isinstance(value, complex):
            raise CalculationError(f"{self.part(node)!r} has no real result")
        if isinstance(value, float) and not math.isfinite(value):
            raise CalculationError(
                f"{self.part(node)!r} overflows or is undefined (the result is not a finite number)"
            )
        if isinstance(value, int) and abs(value) >= _INTEGER_LIMIT:
            raise CalculationError(
                f"{self.part(node)!r} has more than {MAX_INTEGER_DIGITS} digits, the most the "
                "calculator keeps"
            )
        return value
