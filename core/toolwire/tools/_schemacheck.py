"""Checking a parameter schema once, at creation: every problem, each with its JSON path.

The rules are those of the JSON Schema 2020-12 metaschema that change what a validator does (the
type words, the shapes of the keywords holding subschemas, lists of names, numbers and counts,
regular expressions, local references), plus the few words other hosts use that JSON Schema
would silently ignore and so change the meaning of a definition (``optional``, a boolean
``required``, ``nullable``). A schema that passes compiles with fastjsonschema and never raises
at call time; the test suite checks both claims against the metaschema itself.

The walk is plain dict lookups, so checking costs a few microseconds per tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

JSON_TYPES: Final = ("array", "boolean", "integer", "null", "number", "object", "string")
_JSON_TYPE_SET: Final = frozenset(JSON_TYPES)

# Keywords whose value is one subschema, a list of them, or a mapping of names to them.
_ONE: Final = (
    "additionalProperties",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
)
_MANY: Final = ("anyOf", "allOf", "oneOf", "prefixItems")
_NAMED: Final = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_NON_NEGATIVE: Final = (
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
)
_NUMBERS: Final = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
# Keywords whose value may be any JSON value: nothing to check.
_FREE: Final = frozenset({"default", "examples", "const", "deprecated", "readOnly", "writeOnly"})
_STRINGS: Final = ("description", "title", "format", "$comment", "$id", "$anchor")

# Words of other hosts that JSON Schema ignores, so that a validator would silently drop them.
_FOREIGN: Final = {
    "optional": "'optional' is not a JSON Schema keyword; an optional property is one left out "
    'of its object\'s "required" list',
    "nullable": "'nullable' is not a JSON Schema keyword (it is OpenAPI 3.0's); write "
    '"type": [T, "null"] to allow null',
}

_MAX_DEPTH: Final = 64


def json_path(parts: tuple[str | int, ...]) -> str:
    """``$.properties.size.type``, ``$.anyOf[0]``, ``$.properties["two words"]``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$-]*", part):
            out += f".{part}"
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def type_word_problem(word: Any) -> str:
    """Why ``word`` is not a JSON Schema type, and the standard word to use when there is one."""
    from ._normalize import standard_type

    if not isinstance(word, str):
        return f"{_shown(word)} is not a JSON Schema type (a type is a string)"
    mapped = standard_type(word)
    valid = ", ".join(JSON_TYPES)
    if mapped is None:
        return f"{word!r} is not a JSON Schema type; valid types: {valid}"
    if mapped == "":
        return f'{word!r} is not a JSON Schema type; leave "type" out to accept any value'
    return f"{word!r} is not a JSON Schema type; use {json.dumps(mapped)}"


class _Checker:
    __slots__ = ("has_refs", "problems", "root")

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.problems: list[str] = []
        self.has_refs = False

    def add(self, path: tuple[str | int, ...], text: str) -> None:
        self.problems.append(f"{json_path(path)}: {text}")

    def node(self, node: Any, path: tuple[str | int, ...], depth: int) -> None:
        if type(node) is bool:
            return
        if type(node) is not dict and not isinstance(node, Mapping):
            self.add(
                path, f"a schema must be an object or a boolean; got {_kind(node)} {_shown(node)}"
            )
            return
        if depth > _MAX_DEPTH:
            self.add(path, f"schemas nest deeper than {_MAX_DEPTH} levels")
            return
        for key, value in node.items():
            # The common keywords in their common form first: checking costs microseconds.
            if key == "type":
                if type(value) is not str or value not in _JSON_TYPE_SET:
                    self.type_(value, (*path, key))
            elif key in _FREE:
                if isinstance(value, Mapping | list):  # data, but validators follow a $ref in it
                    self.refs_in(value, (*path, key), depth + 1)
            elif key == "description":
                if type(value) is not str:
                    self.add((*path, key), f"must be a string; got {_kind(value)} {_shown(value)}")
            elif key == "properties" and type(value) is dict:
                for name, sub in value.items():
                    if type(sub) is dict:
                        self.node(sub, (*path, key, name), depth + 1)
                    else:
                        self.named({name: sub}, (*path, key), depth, patterns=False)
            elif key == "enum" and type(value) is list:
                self.refs_in(value, (*path, key), depth + 1)
            elif key in _NAMED:
                self.named(value, (*path, key), depth, patterns=key == "patternProperties")
            elif key in _MANY:
                self.many(value, (*path, key), depth)
            elif key in _ONE:
                self.node(value, (*path, key), depth + 1)
            elif key == "items":
                if isinstance(value, list):
                    self.add(
                        (*path, key),
                        "a list of item schemas is the draft 7 tuple form; JSON Schema 2020-12 "
                        'writes it "prefixItems" (and "additionalItems" becomes "items")',
                    )
                    self.many(value, (*path, key), depth)
                else:
                    self.node(value, (*path, key), depth + 1)
            elif key == "required":
                self.names(value, (*path, key), boolean_hint=True)
                if node.get("additionalProperties") is False and type(value) is list:
                    self.not_allowed(node, value, path)
            elif key == "dependentRequired":
                self.dependent(value, (*path, key))
            elif key == "enum":
                if not isinstance(value, list):
                    self.add((*path, key), f"must be a list of values; got {_kind(value)}")
            elif key in _NON_NEGATIVE:
                whole = type(value) is int or (type(value) is float and value.is_integer())
                if not whole or value < 0:
                    self.add((*path, key), f"must be a whole number >= 0; got {_shown(value)}")
            elif key in _NUMBERS:
                if isinstance(value, bool) or not isinstance(value, int | float):
                    self.add((*path, key), f"must be a number; got {_kind(value)} {_shown(value)}")
            elif key == "multipleOf":
                if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                    self.add((*path, key), f"must be a number > 0; got {_shown(value)}")
            elif key == "uniqueItems":
                if type(value) is not bool:
                    self.add((*path, key), f"must be true or false; got {_shown(value)}")
            elif key == "pattern":
                self.pattern(value, (*path, key))
            elif key == "$ref":
                self.ref(value, (*path, key))
            elif key in _STRINGS:
                if not isinstance(value, str):
                    self.add((*path, key), f"must be a string; got {_kind(value)} {_shown(value)}")
            elif key in _FOREIGN:
                self.add((*path, key), _FOREIGN[key])
            elif isinstance(value, Mapping | list):
                # A keyword no validator reads; validators still follow a $ref anywhere in it.
                self.refs_in(value, (*path, key), depth + 1)

    def refs_in(self, value: Any, path: tuple[str | int, ...], depth: int) -> None:
        """Check every ``$ref`` inside a value that is not read as a schema (an unknown keyword,
        an enum's values, a default): validators follow a ``$ref`` wherever it stands."""
        if depth > _MAX_DEPTH:
            self.add(path, f"schemas nest deeper than {_MAX_DEPTH} levels")
            return
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        for key, sub in items:
            if key == "$ref" and isinstance(value, Mapping):
                self.ref(sub, (*path, key))
            elif isinstance(sub, Mapping | list):
                self.refs_in(sub, (*path, key), depth + 1)

    def type_(self, value: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(value, str):
            if value not in _JSON_TYPE_SET:
                self.add(path, type_word_problem(value))
            return
        if not isinstance(value, list) or not value:
            self.add(
                path,
                f"must be a type name or a non-empty list of them; got {_kind(value)} "
                f"{_shown(value)}",
            )
            return
        for index, word in enumerate(value):
            if not isinstance(word, str) or word not in _JSON_TYPE_SET:
                self.add((*path, index), type_word_problem(word))
        if len({json.dumps(word) for word in value}) != len(value):
            self.add(path, f"lists a type twice: {_shown(value)}")

    def named(self, value: Any, path: tuple[str | int, ...], depth: int, *, patterns: bool) -> None:
        if not isinstance(value, Mapping):
            self.add(path, f"must be an object of names to schemas; got {_kind(value)}")
            return
        for name, sub in value.items():
            if patterns:
                self.pattern(name, (*path, name), key=True)
            if isinstance(sub, str) and path[-1] == "properties":
                self.add(
                    (*path, name),
                    f"a property's schema must be an object, not the string {sub!r} "
                    f'(write {{"type": …}})',
                )
                continue
            self.node(sub, (*path, name), depth + 1)

    def many(self, value: Any, path: tuple[str | int, ...], depth: int) -> None:
        if not isinstance(value, list) or not value:
            self.add(path, f"must be a non-empty list of schemas; got {_kind(value)}")
            return
        for index, sub in enumerate(value):
            self.node(sub, (*path, index), depth + 1)

    def names(self, value: Any, path: tuple[str | int, ...], *, boolean_hint: bool) -> None:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if len(set(value)) != len(value):
                self.add(path, f"names a property twice: {_shown(value)}")
            return
        if boolean_hint and isinstance(value, bool):
            self.add(
                path,
                f"must be a list of property names; got {_shown(value)} (to require this "
                'property, list its name in its object\'s "required")',
            )
            return
        self.add(path, f"must be a list of property names; got {_kind(value)} {_shown(value)}")

    def not_allowed(
        self, node: Mapping[str, Any], required: list[Any], path: tuple[str | int, ...]
    ) -> None:
        """Required names that ``"additionalProperties": false`` refuses: no value satisfies
        both. A name no property declares must match a ``patternProperties`` expression (RE2
        decides, only here: fastjsonschema would try Python's matcher on the name)."""
        properties = node.get("properties")
        declared = properties if isinstance(properties, Mapping) else {}
        names = [n for n in required if isinstance(n, str) and n not in declared]
        if not names:
            return
        patterns = node.get("patternProperties")
        expressions = (
            [p for p in patterns if isinstance(p, str)] if isinstance(patterns, Mapping) else []
        )
        from ._patterns import PatternError, linear_pattern

        for name in names:
            try:
                allowed = any(linear_pattern(p).search(name) for p in expressions)
            except (PatternError, ImportError):
                continue  # the pattern's own problem is reported where it stands
            if not allowed:
                self.add(
                    (*path, "required"),
                    f"{name!r} is required, but no property declares it and "
                    '"additionalProperties" is false, so no value can have it; declare it '
                    'under "properties"',
                )

    def dependent(self, value: Any, path: tuple[str | int, ...]) -> None:
        if not isinstance(value, Mapping):
            self.add(path, f"must be an object of names to lists of names; got {_kind(value)}")
            return
        for name, sub in value.items():
            self.names(sub, (*path, name), boolean_hint=False)

    def pattern(self, value: Any, path: tuple[str | int, ...], *, key: bool = False) -> None:
        if not isinstance(value, str):
            self.add(path, f"a pattern must be a string; got {_kind(value)} {_shown(value)}")
            return
        what = "the property pattern" if key else "the pattern"
        try:
            re.compile(value)
        except re.error as exc:
            self.add(path, f"{what} {value!r} is not a valid regular expression ({exc})")
            return
        from ._patterns import unsupported_construct  # only schemas with patterns need it

        construct = unsupported_construct(value)
        if construct is not None:
            self.add(
                path,
                f"{what} {value!r} uses {construct}, which only a backtracking matcher runs; "
                "toolwire checks patterns in time linear in the text (RE2), so write the "
                "pattern without it, or check that part in the tool itself",
            )

    def ref(self, value: Any, path: tuple[str | int, ...]) -> None:
        self.has_refs = True
        if not isinstance(value, str):
            self.add(path, f"must be a string; got {_kind(value)} {_shown(value)}")
            return
        if not value.startswith("#"):
            self.add(
                path,
                f'{value!r} refers outside the schema; only local references ("#/$defs/…") '
                "are followed, so put the referenced schema under $defs",
            )
            return
        target: Any = self.root
        for part in value[1:].split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                self.add(path, f"{value!r} points at nothing in this schema")
                return
        if not isinstance(target, Mapping | bool):
            self.add(
                path,
                f"{value!r} points at {_shown(target)}, which is not a schema (an object, "
                "or true or false)",
            )


def schema_problems(schema: Any) -> list[str]:
    """Every problem of a parameter schema, each as ``$.path: what is wrong (and the fix)``.

    Empty when the schema is sound: standard JSON Schema that every validator and provider reads
    the same way.
    """
    if not isinstance(schema, Mapping):
        return [f"$: a schema must be an object; got {_kind(schema)}"]
    checker = _Checker(schema)
    checker.node(schema, (), 0)
    if checker.has_refs and not checker.problems:
        checker.problems.extend(_loops(schema))
    return checker.problems


# Keywords whose subschemas apply to the same value as their own schema: following only these
# (and $ref), a schema that comes back to itself checks the value forever.
_IN_PLACE_ONE: Final = ("not", "if", "then", "else")
_IN_PLACE_MANY: Final = ("allOf", "anyOf", "oneOf")


def _target(root: Mapping[str, Any], ref: str) -> Any:
    target: Any = root
    for part in ref[1:].split("/"):
        if not part:
            continue
        part = part.replace("~1", "/").replace("~0", "~")
        target = target[int(part)] if isinstance(target, list) else target[part]
    return target


def _loops(root: Mapping[str, Any]) -> list[str]:
    """A problem for each ``$ref`` that leads back to its own schema without going into the
    value (through ``$ref``, ``allOf``/``anyOf``/``oneOf``, ``not``, ``if``/``then``/``else``,
    ``dependentSchemas``): validating any value there would never end. A reference that goes
    into the value first (a tree's ``items`` or ``properties``) ends with the value's depth."""
    paths: dict[int, tuple[str | int, ...]] = {}
    edges: dict[int, list[tuple[int, tuple[str | int, ...]]]] = {}
    nodes: dict[int, Any] = {}
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(root, ())]
    while stack:  # every schema of the document, with its path
        node, path = stack.pop()
        if not isinstance(node, Mapping) or id(node) in paths:
            continue
        paths[id(node)] = path
        nodes[id(node)] = node
        children: list[tuple[Any, tuple[str | int, ...]]] = []
        for key, value in node.items():
            if key in _FREE or key in ("enum", "required", "dependentRequired"):
                continue
            if key in _NAMED and isinstance(value, Mapping):
                children.extend((sub, (*path, key, name)) for name, sub in value.items())
            elif isinstance(value, Mapping):
                children.append((value, (*path, key)))
            elif isinstance(value, list):
                children.extend((sub, (*path, key, i)) for i, sub in enumerate(value))
        stack.extend(reversed(children))  # in the document's order: the first loop met is named
    for key_id, node in nodes.items():
        path = paths[key_id]
        out: list[tuple[int, tuple[str | int, ...]]] = []
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            out.append((id(_target(root, ref)), (*path, "$ref")))
        for key in _IN_PLACE_ONE:
            if isinstance(node.get(key), Mapping):
                out.append((id(node[key]), (*path, key)))
        for key in _IN_PLACE_MANY:
            members = node.get(key)
            if isinstance(members, list):
                out.extend((id(m), (*path, key, i)) for i, m in enumerate(members))
        dependent = node.get("dependentSchemas")
        if isinstance(dependent, Mapping):
            out.extend((id(sub), (*path, "dependentSchemas", n)) for n, sub in dependent.items())
        edges[key_id] = [(target, via) for target, via in out if target in nodes]
    problems: list[str] = []
    state: dict[int, int] = {}  # 1: on the current walk, 2: done
    for start in nodes:
        if state.get(start):
            continue
        walk: list[tuple[int, int]] = [(start, 0)]
        state[start] = 1
        while walk:
            current, index = walk[-1]
            if index == len(edges[current]):
                state[current] = 2
                walk.pop()
                continue
            walk[-1] = (current, index + 1)
            target, via = edges[current][index]
            if state.get(target) == 1:
                cycle = [paths[n] for n, _ in walk[[n for n, _ in walk].index(target) :]]
                route = " → ".join(json_path(p) for p in (*cycle, paths[target]))
                problems.append(
                    f"{json_path(via)}: leads back to the same schema without going into the "
                    f"value ({route}), so checking any value would never end; refer to a schema "
                    "that does not come back here, or go into the value first (properties, items)"
                )
            elif not state.get(target):
                state[target] = 1
                walk.append((target, 0))
    return problems


_last_sound: Any = None


def check_parameter_schema(schema: Any, owner: str) -> None:
    """Refuse a parameter schema with any problem, naming ``owner`` and every problem at once.

    :raises ToolDefinitionError: with ``problems`` set, and a note when ``normalize=True`` would
        fix some of them.
    """
    global _last_sound
    if schema is _last_sound:
        return  # the same object again (attrs.evolve of a tool, or from_schema's own check)
    problems = schema_problems(schema)
    if not problems:
        _last_sound = schema
        return
    from ._errors import ToolDefinitionError
    from ._normalize import normalize_schema

    hint = ""
    if isinstance(schema, Mapping):
        normalized, notes = normalize_schema(schema)
        if notes:
            left = len(schema_problems(normalized))
            fixed = (
                "all of them"
                if left == 0
                else f"{len(problems) - left} of them"
                if left < len(problems)
                else "none of them"
            )
            hint = (
                f"\nTool.from_schema(..., normalize=True) maps the non-standard words "
                f"({fixed}; see toolwire.tools.normalize_schema)."
            )
    if len(problems) == 1:
        text = f"{owner}: invalid parameter schema: {problems[0]}{hint}"
    else:
        lines = "\n".join(f"- {p}" for p in problems)
        text = f"{owner}: invalid parameter schema ({len(problems)} problems):\n{lines}{hint}"
    raise ToolDefinitionError(text, problems=problems)
