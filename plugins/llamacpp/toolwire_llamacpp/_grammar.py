"""GBNF grammars holding a model's output to a final answer or one valid call of an offered tool.

The calls are in the prompted ``json`` dialect:
``<tool_call>{"name": …, "arguments": {…}}</tool_call>``.
Each tool's arguments follow its JSON Schema: objects with required and optional properties,
strings (with length bounds), numbers, integers, booleans, null, enums and consts, arrays (with
item counts and tuples), maps, ``anyOf`` and local ``$ref``. Parts a grammar cannot express
(patterns, formats, most numeric bounds, ``uniqueItems``, ``not`` …) are listed in
``ToolGrammar.unconstrained``: their values are held to the JSON type only, and the loop's
validation refuses what does not fit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

import attrs

from toolwire.tools import FunctionSpec, PatternError, linear_pattern

from ._copies import Copies

Choice: TypeAlias = Literal["auto", "required", "none"] | str
"""``auto`` (answer or call), ``required`` (a call), ``none`` (an answer) or one tool's name."""

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"

# Text an answer may never contain: the opening of a call (an answer that holds one would be
# parsed as a call), of a result envelope or anything like them (small models imitate both, with
# names of their own), of any closing tag (answers ended in `</tool_result>`), and of a
# chat-template marker. An answer also never starts with "<", so
# the first character tells an answer from a call.
FORBIDDEN_IN_ANSWER: tuple[str, ...] = ("<tool", "<|", "</")

MAX_APART_LITERALS = 20_000
"""The most copied strings a grammar keeping copies apart may list (past it they are not kept
apart): the first argument's spans times each later argument's."""

MAX_ENUMERATED_INTEGERS = 256
"""An integer with both bounds whose range is at most this wide is written as the list of values."""

_JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_IGNORED_KEYWORDS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "definitions",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
    }
)
# Keywords whose constraint holds for every value the grammar produces, whatever the branch.
_HANDLED_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
    }
)
# Keywords the type handlers report themselves when they cannot enforce them.
_TYPE_KEYWORDS = frozenset(
    {
        "pattern",
        "format",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)


class GrammarError(ValueError):
    """The grammar cannot be built (no tools to call, or a choice naming a tool not offered)."""


@attrs.frozen(kw_only=True)
class ToolGrammar:
    """A GBNF grammar and what it could not constrain.

    ``unconstrained`` has one entry per schema part held only to its JSON type, as
    ``"<tool>: $.path: reason"``.
    """

    text: str
    unconstrained: tuple[str, ...] = ()
    allows_answer: bool = True
    allows_call: bool = True


def build_grammar(functions: Sequence[FunctionSpec], choice: Choice = "auto") -> str:
    """The GBNF text for answering or calling one of ``functions`` (see :func:`tool_grammar`)."""
    return tool_grammar(functions, choice).text


def tool_grammar(
    functions: Sequence[FunctionSpec],
    choice: Choice = "auto",
    *,
    max_string_length: int | None = None,
    copies: Copies | None = None,
    distinct_copies: bool = False,
    refused: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> ToolGrammar:
    """A grammar whose every string is a final answer, or one call of one of ``functions``.

    :param functions: the offered functions, their ``parameters`` being JSON Schemas.
    :param choice: ``auto`` (answer or call), ``required`` (a call of any), ``none`` (an answer
        only) or the name of the one function to call.
    :param max_string_length: the most characters of a string argument whose schema sets no
        ``maxLength`` (a budget that stops a small model rambling inside a string); None for
        no limit.
    :param copies: when given, a string argument (without ``enum``, ``const`` or ``format``)
        can only be one of ``copies.spans`` that fits its length bounds and ``pattern``, and a
        number one of ``copies.numbers`` (an integer one of the whole ones), so the model copies
        the user's words instead of inventing values; a kind of value with nothing to copy (or
        a pattern Python's ``re`` cannot read) stays free.
    :param distinct_copies: with ``copies``, a copied string argument written after the first
        one cannot copy the words that one copied: two arguments of a call carry two things the
        user said (``3 kg`` and ``pounds``, not ``3 kg`` and ``kg``).
    :param refused: with ``copies``, the arguments of calls already refused, by tool name: the
        last copied string argument cannot take a value it had in a refused call made with the
        same value of the first copied one (a tool's only copied string cannot take a refused
        value at all), so a retry changes what was refused instead of repeating it.
    :raises GrammarError: for a call choice without functions, or a name that is not offered.
    """
    if choice == "none":
        builder = _Builder()
        root = builder.answer()
        return ToolGrammar(text=builder.render(root), allows_call=False)
    if choice in ("auto", "required"):
        chosen = list(functions)
    else:
        chosen = [f for f in functions if f.name == choice]
        if not chosen:
            offered = ", ".join(f.name for f in functions) or "none"
            raise GrammarError(f"tool choice {choice!r} is not an offered tool; offered: {offered}")
    if not chosen:
        raise GrammarError(f"tool choice {choice!r} needs at least one offered tool")
    builder = _Builder(max_string_length, copies, distinct_copies, refused)
    calls: list[str] = []
    for function in chosen:
        builder.begin_tool(function.name, function.parameters)
        arguments = builder.schema(function.parameters, "$")
        if arguments is None:
            builder.note("$", "the schema accepts no value; the arguments are held to any object")
            arguments = builder.generic("object")
        calls.append(
            builder.rule(
                "call-" + function.name,
                f'{_literal(json.dumps(function.name))} "," ws '
                f'"\\"arguments\\"" ":" ws {arguments}',
            )
        )
    call = builder.rule(
        "call",
        f'{_literal(CALL_OPEN)} "\\n"? "{{" ws "\\"name\\"" ":" ws ( {" | ".join(calls)} ) ws "}}" '
        f'"\\n"? {_literal(CALL_CLOSE)}',
    )
    allows_answer = choice == "auto"
    root = f"{call} | {builder.answer()}" if allows_answer else call
    return ToolGrammar(
        text=builder.render(root),
        unconstrained=tuple(builder.notes),
        allows_answer=allows_answer,
    )


def _escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02X}"
    if code <= 0xFFFF:
        return f"\\u{code:04X}"
    return f"\\U{code:08X}"


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _literal(text: str) -> str:
    """A GBNF string literal for ``text`` (characters that are not printable escaped)."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif not ch.isprintable():
            out.append(_escape(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _class_char(ch: str) -> str:
    """One character written for use inside a GBNF character class."""
    if ch in "]\\^-[":
        return "\\" + ch
    if ch in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[ch]
    if not ch.isprintable():
        return _escape(ch)
    return ch


_PRIMITIVES = {
    "ws": '" "?',
    "json-char": '[^"\\\\\\x00-\\x1F] | "\\\\" ( ["\\\\/bfnrt] | "u" json-hex4 )',
    # \u escapes of surrogates are left out: they would make string lengths count wrong.
    "json-hex4": "( [0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} )",
    "json-string": '"\\"" json-char* "\\""',
    "json-int": '"-"? json-nat',
    "json-nat": '"0" | [1-9] [0-9]{0,19}',
    "json-number": '"-"? json-nat ( "." [0-9]{1,20} )? ( [eE] [-+]? [0-9]{1,2} )?',
    "json-boolean": '"true" | "false"',
    "json-null": '"null"',
    "json-value": (
        "json-object | json-array | json-string | json-number | json-boolean | json-null"
    ),
    "json-object": (
        '"{" ws ( json-string ":" ws json-value ( "," ws json-string ":" ws json-value )* )? ws "}"'
    ),
    "json-array": '"[" ws ( json-value ( "," ws json-value )* )? ws "]"',
}
_PRIMITIVE_DEPENDENCIES = {
    "json-char": ("json-hex4",),
    "json-string": ("json-char",),
    "json-int": ("json-nat",),
    "json-number": ("json-nat",),
    "json-value": (
        "json-object",
        "json-array",
        "json-string",
        "json-number",
        "json-boolean",
        "json-null",
    ),
    "json-object": ("ws", "json-string", "json-value"),
    "json-array": ("ws", "json-value"),
}
_GENERIC_FOR_TYPE = {
    "object": "json-object",
    "array": "json-array",
    "string": "json-string",
    "number": "json-number",
    "integer": "json-int",
    "boolean": "json-boolean",
    "null": "json-null",
}


class _Builder:
    """Collects named rules (deduplicated by body) and notes on unconstrained schema parts."""

    def __init__(
        self,
        max_string_length: int | None = None,
        copies: Copies | None = None,
        distinct: bool = False,
        refused: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    ) -> None:
        self.max_string_length = max_string_length
        self.copies = copies
        self.distinct = distinct
        self.refused = refused or {}
        self.copied_spans: dict[str, tuple[str, ...]] = {}
        self.rules: dict[str, str] = {}
        self.by_body: dict[str, str] = {}
        self.used_primitives: set[str] = set()
        self.notes: list[str] = []
        self.tool = ""
        self.root_schema: Mapping[str, Any] = {}
        self.refs: dict[str, str] = {}

    # -- rules ---------------------------------------------------------------------------------

    def rule(self, hint: str, body: str) -> str:
        """The name of a rule with ``body``, reusing an identical one."""
        if body in self.by_body:
            return self.by_body[body]
        name = self.fresh(hint)
        self.rules[name] = body
        self.by_body[body] = name
        return name

    def fresh(self, hint: str) -> str:
        base = re.sub(r"[^a-zA-Z0-9-]+", "-", hint).strip("-").lower() or "r"
        if base in _PRIMITIVES or base == "root":
            base += "-r"
        name, index = base, 1
        while name in self.rules:
            index += 1
            name = f"{base}-{index}"
        self.rules[name] = ""
        return name

    def primitive(self, name: str) -> str:
        pending = [name]
        while pending:
            current = pending.pop()
            if current not in self.used_primitives:
                self.used_primitives.add(current)
                pending.extend(_PRIMITIVE_DEPENDENCIES.get(current, ()))
        return name

    def generic(self, kind: str | None = None) -> str:
        return self.primitive(_GENERIC_FOR_TYPE.get(kind or "", "json-value"))

    def render(self, root: str) -> str:
        lines = [f"root ::= {root}"]
        lines += [f"{name} ::= {body}" for name, body in self.rules.items()]
        lines += [
            f"{name} ::= {_PRIMITIVES[name]}"
            for name in _PRIMITIVES
            if name in self.used_primitives
        ]
        return "\n".join(lines) + "\n"

    def note(self, path: str, reason: str) -> None:
        entry = f"{self.tool}: {path}: {reason}"
        if entry not in self.notes:
            self.notes.append(entry)

    def begin_tool(self, name: str, schema: Mapping[str, Any]) -> None:
        self.tool = name
        self.root_schema = schema
        self.refs = {}

    # -- answers -------------------------------------------------------------------------------

    def answer(self) -> str:
        """Text that starts with a visible character other than ``<`` and never contains a
        forbidden opening."""
        patterns = FORBIDDEN_IN_ANSWER
        if any(p[0] != "<" or "<" in p[1:] for p in patterns):
            raise AssertionError("the answer automaton assumes patterns that start with '<' only")
        prefixes = sorted({p[:i] for p in patterns for i in range(1, len(p))}, key=len)
        state_names = {prefix: f"answer-{index + 1}" for index, prefix in enumerate(prefixes)}
        state_names[""] = "answer-0"
        for name in state_names.values():
            self.rules[name] = ""

        def body(prefix: str, *, first: bool) -> str:
            nexts: dict[str, str] = {}
            for pattern in patterns:
                if pattern.startswith(prefix) and len(pattern) > len(prefix):
                    ch = pattern[len(prefix)]
                    candidate = prefix + ch
                    if candidate in patterns:
                        nexts[ch] = ""  # completing a pattern: never allowed
                    elif prefix == "" or candidate in state_names:
                        nexts[ch] = state_names[candidate]
            excluded = set(nexts) | {"<"}
            if first:
                excluded |= set(" \t\n\r")
            alternatives = [] if first else ['""']
            other = "".join(_class_char(c) for c in sorted(excluded))
            alternatives.append(f"[^{other}] answer-0")
            if not first:
                alternatives.append('"<" ' + state_names["<"])
            for ch, target in sorted(nexts.items()):
                if target and ch != "<":
                    alternatives.append(f"{_literal(ch)} {target}")
            return " | ".join(alternatives)

        for prefix, name in state_names.items():
            self.rules[name] = body(prefix, first=False)
        return self.rule("answer", body("", first=True))

    # -- schemas -------------------------------------------------------------------------------

    def schema(self, schema: Any, path: str) -> str | None:
        """A rule expression for values valid against ``schema``; None when none is valid."""
        if schema is True or schema == {}:
            return self.generic()
        if schema is False:
            return None
        if not isinstance(schema, Mapping):
            self.note(path, f"the schema {schema!r} is not an object; any JSON value is allowed")
            return self.generic()
        for key in schema:
            if key not in _HANDLED_KEYWORDS | _IGNORED_KEYWORDS | _TYPE_KEYWORDS:
                self.note(path, f"the keyword {key!r} is not enforced by the grammar")
        if "$ref" in schema:
            return self.ref(schema, path)
        if "allOf" in schema:
            branches = schema["allOf"]
            if isinstance(branches, list) and len(branches) == 1 and len(schema) == 1:
                return self.schema(branches[0], f"{path}.allOf[0]")
            self.note(path, "'allOf' is not enforced; the value is held to its type only")
        if "const" in schema:
            return self.enum([schema["const"]], schema, path)
        if "enum" in schema:
            values = schema["enum"]
            if not isinstance(values, list):
                self.note(path, "'enum' is not a list; any JSON value is allowed")
                return self.generic()
            return self.enum(values, schema, path)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.alternatives(schema, key, path)
        return self.typed(schema, path)

    def ref(self, schema: Mapping[str, Any], path: str) -> str:
        target = schema["$ref"]
        if len(schema) > 1:
            others = ", ".join(sorted(k for k in schema if k != "$ref"))
            self.note(path, f"keywords beside '$ref' ({others}) are not enforced")
        if target in self.refs:
            return self.refs[target]
        match = re.fullmatch(r"#/(\$defs|definitions)/([^/]+)", str(target))
        resolved = None
        if match:
            resolved = self.root_schema.get(match[1], {}).get(
                match[2].replace("~1", "/").replace("~0", "~")
            )
        if resolved is None:
            self.note(
                path, f"the reference {target!r} cannot be resolved; any JSON value is allowed"
            )
            return self.generic()
        name = self.fresh(f"{self.tool}-ref-{match[2] if match else 'x'}")
        self.refs[target] = name
        expression = self.schema(resolved, str(target))
        if expression is None:
            self.note(path, f"the schema at {target!r} accepts no value; any JSON value is allowed")
            expression = self.generic()
        self.rules[name] = expression
        return name

    def enum(self, values: Sequence[Any], schema: Mapping[str, Any], path: str) -> str | None:
        types = _types_of(schema)
        kept = [v for v in values if types is None or _json_type_matches(v, types)]
        literals = list(dict.fromkeys(_literal(_dump(v)) for v in kept))
        if not literals:
            return None
        return self.rule(f"{self.tool}-enum", " | ".join(literals))

    def alternatives(self, schema: Mapping[str, Any], key: str, path: str) -> str | None:
        branches = schema[key]
        if not isinstance(branches, list) or not branches:
            self.note(path, f"'{key}' is not a non-empty list; any JSON value is allowed")
            return self.generic()
        outer = {k: v for k, v in schema.items() if k not in (key, *_IGNORED_KEYWORDS)}
        if outer:
            self.note(
                path, f"keywords beside '{key}' ({', '.join(sorted(outer))}) are not enforced"
            )
        if key == "oneOf" and not _disjoint_by_type(branches):
            self.note(
                path,
                "'oneOf' is treated as 'anyOf': a value that fits two branches would be refused",
            )
        parts = [self.schema(branch, f"{path}.{key}[{i}]") for i, branch in enumerate(branches)]
        kept = list(dict.fromkeys(p for p in parts if p is not None))
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else f"( {' | '.join(kept)} )"

    def typed(self, schema: Mapping[str, Any], path: str) -> str | None:
        types = _types_of(schema)
        if types is None:
            if "properties" in schema or "additionalProperties" in schema or "required" in schema:
                types = ["object"]
            elif "items" in schema or "prefixItems" in schema:
                types = ["array"]
            else:
                if _has_constraints(schema):
                    self.note(path, "a schema without 'type' is held to any JSON value")
                return self.generic()
        parts: list[str] = []
        for kind in types:
            if kind not in _JSON_TYPES:
                self.note(path, f"unknown type {kind!r} is left out")
                continue
            expression = getattr(self, "type_" + kind)(schema, path)
            if expression is not None:
                parts.append(expression)
        parts = list(dict.fromkeys(parts))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else f"( {' | '.join(parts)} )"

    def type_null(self, schema: Mapping[str, Any], path: str) -> str:
        return self.primitive("json-null")

    def type_boolean(self, schema: Mapping[str, Any], path: str) -> str:
        return self.primitive("json-boolean")

    def type_string(self, schema: Mapping[str, Any], path: str) -> str | None:
        low = schema.get("minLength", 0)
        high = schema.get("maxLength")
        if not isinstance(low, int) or (high is not None and not isinstance(high, int)):
            self.note(path, "non-integer string length bounds are not enforced")
            return self.primitive("json-string")
        low = max(low, 0)
        if high is not None and high < low:
            return None
        matches = _pattern_test(schema.get("pattern"))
        copied = None
        if "format" not in schema and matches is not None:
            copied = self.copied(
                self.copies_of("spans"),
                lambda literal: _fits_string(json.loads(literal), low, high, matches),
                spans=True,
            )
        if copied is not None:
            return copied  # a copy is held to the pattern too
        for key in ("pattern", "format"):
            if key in schema:
                self.note(path, f"the string's '{key}' is not enforced")
        if high is None and self.max_string_length is not None:
            high = max(low, self.max_string_length)
        if low == 0 and high is None:
            return self.primitive("json-string")
        self.primitive("json-char")
        count = f"{{{low},}}" if high is None else f"{{{low},{high}}}"
        return self.rule(f"{self.tool}-string", f'"\\"" json-char{count} "\\""')

    def copies_of(self, kind: str) -> tuple[str, ...]:
        if self.copies is None:
            return ()
        if kind == "integers":
            return self.copies.integers()
        values: tuple[str, ...] = getattr(self.copies, kind)
        return values

    def copied(self, literals: Sequence[str], fits: Any, *, spans: bool = False) -> str | None:
        """A rule admitting only the JSON ``literals`` that ``fits``; None when none does."""
        kept = [literal for literal in literals if fits(literal)]
        if not kept:
            return None
        name = self.rule(f"{self.tool}-copy", " | ".join(_literal(k) for k in kept))
        if spans:
            self.copied_spans[name] = tuple(kept)
        return name

    def type_integer(self, schema: Mapping[str, Any], path: str) -> str | None:
        copied = self.copied(self.copies_of("integers"), lambda v: _within(int(v), schema))
        if copied is not None:
            return copied
        low, high, exact = _integer_bounds(schema)
        if not exact:
            self.note(path, "this integer's 'multipleOf' or non-numeric bounds are not enforced")
        if low is not None and high is not None:
            if high < low:
                return None
            if high - low < MAX_ENUMERATED_INTEGERS:
                values = " | ".join(_literal(str(v)) for v in range(low, high + 1))
                return self.rule(f"{self.tool}-int", values)
        if high is None and low is not None and low >= 0:
            if low == 0:
                return self.primitive("json-nat")
            if low == 1:
                return self.rule("json-positive", "[1-9] [0-9]{0,19}")
        if low is not None or high is not None:
            self.note(path, "this integer's bounds are not enforced")
        return self.primitive("json-int")

    def type_number(self, schema: Mapping[str, Any], path: str) -> str | None:
        copied = self.copied(self.copies_of("numbers"), lambda v: _within(float(v), schema))
        if copied is not None:
            return copied
        bounds = [
            k for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in schema
        ]
        if "multipleOf" in schema:
            bounds.append("multipleOf")
        if bounds == ["minimum"] and schema["minimum"] == 0:
            self.primitive("json-nat")
            return self.rule(
                "json-nonnegative", 'json-nat ( "." [0-9]{1,20} )? ( [eE] [-+]? [0-9]{1,2} )?'
            )
        if bounds:
            self.note(path, f"this number's {', '.join(bounds)} is not enforced")
        return self.primitive("json-number")

    def type_array(self, schema: Mapping[str, Any], path: str) -> str | None:
        if schema.get("uniqueItems"):
            self.note(path, "'uniqueItems' is not enforced")
        for key in ("contains", "minContains", "maxContains", "unevaluatedItems"):
            if key in schema:
                self.note(path, f"'{key}' is not enforced")
        low = schema.get("minItems", 0)
        high = schema.get("maxItems")
        if not isinstance(low, int) or (high is not None and not isinstance(high, int)):
            self.note(path, "non-integer item counts are not enforced")
            low, high = 0, None
        low = max(low, 0)
        if high is not None and high < low:
            return None
        self.primitive("ws")
        if "prefixItems" in schema:
            return self.tuple_array(schema, low, high, path)
        item = self.schema(schema.get("items", True), f"{path}[]")
        if item is None:
            return '"[" ws "]"' if low == 0 else None
        if high == 0:
            return self.rule(f"{self.tool}-empty-array", '"[" ws "]"')
        more = f"{{{max(low - 1, 0)},}}" if high is None else f"{{{max(low - 1, 0)},{high - 1}}}"
        if more == "{0,}":
            more = "*"
        items = f'{item} ( "," ws {item} ){more}'
        if low == 0:
            items = f"( {items} )?"
        return self.rule(f"{self.tool}-array", f'"[" ws {items} ws "]"')

    def tuple_array(
        self, schema: Mapping[str, Any], low: int, high: int | None, path: str
    ) -> str | None:
        prefix = schema["prefixItems"]
        if not isinstance(prefix, list):
            self.note(path, "'prefixItems' is not a list; the array is held to its type only")
            return self.generic("array")
        rest = schema.get("items", True)
        longest = len(prefix) if high is None else min(len(prefix), high)
        if rest is not False and (high is None or high > len(prefix)) and low <= len(prefix):
            self.note(path, "items after 'prefixItems' are not offered")
        items: list[str] = []
        for index, sub in enumerate(prefix[: max(longest, low)]):
            expression = self.schema(sub, f"{path}[{index}]")
            if expression is None:
                if index < low:
                    return None
                break
            items.append(expression)
        if low > len(prefix):
            extra = None if rest is False else self.schema(rest, f"{path}[]")
            if extra is None:
                return None
            items += [extra] * (low - len(prefix))
        required, optional = items[:low], items[low:]
        if required:
            inner = " ".join(
                [required[0], *(f'"," ws {e}' for e in required[1:]), _nested(optional)]
            )
        elif optional:
            inner = f"( {optional[0]} {_nested(optional[1:])} )?"
        else:
            inner = ""
        return self.rule(f"{self.tool}-tuple", " ".join(f'"[" ws {inner} ws "]"'.split()))

    def type_object(self, schema: Mapping[str, Any], path: str) -> str | None:
        for key in sorted(_TYPE_KEYWORDS & set(schema)):
            if key.endswith(("Properties", "Names")) or key.startswith("dependent"):
                self.note(path, f"'{key}' is not enforced")
        self.primitive("ws")
        properties = schema.get("properties") or {}
        required = schema.get("required") or []
        if not isinstance(properties, Mapping) or not isinstance(required, list):
            self.note(path, "malformed 'properties' or 'required'; any object is allowed")
            return self.generic("object")
        names = list(properties)
        names += [name for name in required if name not in properties]
        if not names:
            extra = schema.get("additionalProperties", True)
            if extra is False:
                return self.rule(f"{self.tool}-empty-object", '"{" ws "}"')
            if extra is True or extra == {}:
                return self.generic("object")
            value = self.schema(extra, f"{path}.*")
            if value is None:
                return self.rule(f"{self.tool}-empty-object", '"{" ws "}"')
            self.primitive("json-string")
            pair = f'json-string ":" ws {value}'
            return self.rule(f"{self.tool}-map", f'"{{" ws ( {pair} ( "," ws {pair} )* )? ws "}}"')
        members: list[tuple[str, str, bool]] = []
        for name in names:
            sub = properties.get(name, True)
            expression = self.schema(sub, f"{path}.{name}")
            is_required = name in required
            if expression is None:
                if is_required:
                    return None
                continue
            members.append((name, expression, is_required))
        if self.distinct and path == "$":
            apart = self.apart_members(members)
            if apart is not None:
                return apart
        if path == "$":
            members = self.without_refused(members)
        return self.object_rule(members)

    def refused_values(self, name: str, given: Mapping[str, Any]) -> set[str]:
        """The JSON literals of argument ``name`` in this tool's refused calls that had the
        values ``given`` for other arguments."""
        return {
            _dump(call[name])
            for call in self.refused.get(self.tool, ())
            if isinstance(call.get(name), str)
            and all(call.get(key) == value for key, value in given.items())
        }

    def without_copy(self, value: str, literals: set[str]) -> str:
        """The copy rule ``value`` without ``literals``; unchanged if that would leave none."""
        spans = self.copied_spans.get(value, ())
        kept = [span for span in spans if span not in literals]
        if not kept or len(kept) == len(spans):
            return value
        return self.copied(kept, lambda literal: True, spans=True) or value

    def without_refused(self, members: list[tuple[str, str, bool]]) -> list[tuple[str, str, bool]]:
        """``members`` with the one copied string argument kept off the values of refused
        calls (a call refused is never written again word for word)."""
        copying = [i for i, (_, value, _) in enumerate(members) if value in self.copied_spans]
        if len(copying) != 1 or self.tool not in self.refused:
            return members
        name, value, required = members[copying[0]]
        chosen = list(members)
        chosen[copying[0]] = (
            name,
            self.without_copy(value, self.refused_values(name, {})),
            required,
        )
        return chosen

    def object_rule(self, members: Sequence[tuple[str, str, bool]]) -> str:
        """An object of ``members`` (name, value expression, required), in their order."""
        pairs = [
            (self.rule(f"{self.tool}-{name}-kv", f'{_literal(_dump(name))} ":" ws {value}'), req)
            for name, value, req in members
        ]
        return self.rule(f"{self.tool}-object", f'"{{" ws {self.members(pairs)} ws "}}"')

    def apart_members(self, members: Sequence[tuple[str, str, bool]]) -> str | None:
        """The arguments object with copies kept apart: once the first copied string argument
        is written, each later one can copy only words it did not (``3 kg`` into ``kg`` is
        then impossible). None when fewer than two arguments copy spans, or when the grammar
        would pass :data:`MAX_APART_LITERALS`."""
        assert self.copies is not None
        copying = [i for i, (_, value, _) in enumerate(members) if value in self.copied_spans]
        if len(copying) < 2 or not members[copying[0]][2]:
            return None
        lead, later = copying[0], copying[1:]
        leads = self.copied_spans[members[lead][1]]
        size = len(leads) * sum(len(self.copied_spans[members[i][1]]) for i in later)
        if size > MAX_APART_LITERALS:
            return None
        objects: list[str] = []
        for first in leads:
            chosen = list(members)
            chosen[lead] = (members[lead][0], _literal(first), True)
            for i in later:
                name, value, required = members[i]
                kept = [s for s in self.copied_spans[value] if self.copies.apart(first, s)]
                if kept:
                    value = self.copied(kept, lambda literal: True, spans=True) or value
                if i == later[-1]:
                    given = {members[lead][0]: json.loads(first)}
                    value = self.without_copy(value, self.refused_values(name, given))
                chosen[i] = (name, value, required)
            objects.append(self.object_rule(chosen))
        return self.rule(f"{self.tool}-apart", " | ".join(objects))

    def members(self, members: list[tuple[str, bool]]) -> str:
        """Members in schema order: each written one after the first is preceded by a comma."""

        def after(i: int) -> str:
            # Members i.. once an earlier member was written: each one comma-led.
            return " ".join(
                f'"," ws {member}' if is_required else f'( "," ws {member} )?'
                for member, is_required in members[i:]
            )

        def first(i: int) -> str:
            # Members i.. while none was written yet.
            if i == len(members):
                return ""
            member, is_required = members[i]
            written = f"{member} {after(i + 1)}".strip()
            if is_required:
                return written
            skipped = first(i + 1)
            if not skipped:
                return f"( {written} )?"
            return self.rule(f"{self.tool}-members", f"{written} | {skipped}")

        return first(0)


def _pattern_test(pattern: Any) -> Callable[[str], bool] | None:
    """A test of a string against a schema's ``pattern`` (searched, as JSON Schema says, in time
    linear in the text: the pattern comes from a tool, the text from the question); always true
    without one, None when RE2 cannot run it (no copy is then offered)."""
    if pattern is None:
        return lambda text: True
    if not isinstance(pattern, str):
        return None
    try:
        return linear_pattern(pattern).search
    except PatternError:
        return None


def _fits_string(text: str, low: int, high: int | None, matches: Callable[[str], bool]) -> bool:
    return low <= len(text) and (high is None or len(text) <= high) and matches(text)


def _within(value: float, schema: Mapping[str, Any]) -> bool:
    """``value`` is inside the numeric bounds of ``schema`` (bounds that are not numbers pass)."""

    def bound(key: str) -> float | None:
        found = schema.get(key)
        if isinstance(found, bool) or not isinstance(found, int | float):
            return None
        return float(found)

    low, high = bound("minimum"), bound("maximum")
    above, below = bound("exclusiveMinimum"), bound("exclusiveMaximum")
    return (
        (low is None or value >= low)
        and (high is None or value <= high)
        and (above is None or value > above)
        and (below is None or value < below)
    )


def _nested(expressions: list[str]) -> str:
    """``( "," ws a ( "," ws b )? )?`` for the optional tail of a sequence."""
    tail = ""
    for expression in reversed(expressions):
        tail = " ".join(f'( "," ws {expression} {tail} )?'.split())
    return tail


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _types_of(schema: Mapping[str, Any]) -> list[str] | None:
    kind = schema.get("type")
    if kind is None:
        return None
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return None


def _has_constraints(schema: Mapping[str, Any]) -> bool:
    return any(k not in _IGNORED_KEYWORDS for k in schema)


def _json_type_matches(value: Any, types: Iterable[str]) -> bool:
    for kind in types:
        if kind == "null" and value is None:
            return True
        if kind == "boolean" and isinstance(value, bool):
            return True
        if kind == "string" and isinstance(value, str):
            return True
        if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            return True
        if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
            return True
        if kind == "array" and isinstance(value, list):
            return True
        if kind == "object" and isinstance(value, dict):
            return True
    return False


def _disjoint_by_type(branches: Sequence[Any]) -> bool:
    """True when every branch has a ``type`` and no two share one (so a value fits one branch)."""
    seen: set[str] = set()
    for branch in branches:
        types = _types_of(branch) if isinstance(branch, Mapping) else None
        if not types:
            return False
        expanded = set(types)
        if expanded & {"integer", "number"}:
            expanded |= {"integer", "number"}  # every integer is a number
        if seen & expanded:
            return False
        seen |= expanded
    return True


def _integer_bounds(schema: Mapping[str, Any]) -> tuple[int | None, int | None, bool]:
    """Integer bounds from minimum/maximum and their exclusive forms; False when not exact."""
    import math

    low: int | None = None
    high: int | None = None
    exact = "multipleOf" not in schema
    for key in ("minimum", "exclusiveMinimum"):
        value = schema.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            bound = math.ceil(value) if key == "minimum" else math.floor(value) + 1
            low = bound if low is None else max(low, bound)
        elif value is not None:
            exact = False
    for key in ("maximum", "exclusiveMaximum"):
        value = schema.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            bound = math.floor(value) if key == "maximum" else math.ceil(value) - 1
            high = bound if high is None else min(high, bound)
        elif value is not None:
            exact = False
    return low, high, exact
