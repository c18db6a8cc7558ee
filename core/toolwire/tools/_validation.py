"""Argument validation with fastjsonschema, and refusals a model can correct itself from.

The valid path is one compiled validator call (compiled lazily on first use, cached by canonical
schema text). Only when that call fails is a second validator, which collects every error, compiled
and run, and each error turned into one refusal naming the argument path, the value that arrived,
what would be valid, and whether the argument may be left out.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._errors import ArgumentsInvalid, ToolDefinitionError
from ._patterns import PatternError, linear_pattern, run_linear, schema_patterns

if TYPE_CHECKING:
    from fastjsonschema import JsonSchemaValueException

JSONSchema = Mapping[str, Any]
Validate = Callable[[Any], Any]

_SHOWN_VALUE_LENGTH = 60
_SHOWN_PATTERN_LENGTH = 60


def _is_email(value: str) -> bool:
    """fastjsonschema's ``email`` rule without its lookarounds (which RE2 cannot run, and which
    take time quadratic in the text in Python's matcher): one ``@``; before it no ``..``, no
    ``.`` at either end; after it a ``.`` with text on both sides."""
    local, at, domain = value.partition("@")
    return bool(
        at
        and local
        and local[0] != "."
        and local[-1] != "."
        and ".." not in local
        and "@" not in domain
        and "." in domain[1:-1]
    )


# Formats fastjsonschema does not know ("path" is informational: any string is a path), and the
# two whose expressions RE2 cannot run, written without lookarounds.
_EXTRA_FORMATS: dict[str, Callable[[str], bool] | str] = {
    "path": lambda value: True,
    "email": _is_email,
    "idn-hostname": (
        r"^(?:xn--)?[a-zA-Z0-9][a-zA-Z0-9-_]{0,61}[a-zA-Z0-9]{0,1}\.(?:xn--[a-zA-Z0-9\-]{1,50}|"
        r"xn--[a-zA-Z0-9-]{1,30}\.[a-zA-Z]{2,}|[a-zA-Z0-9][a-zA-Z0-9\-]{0,49}|"
        r"[a-zA-Z0-9][a-zA-Z0-9-]{0,29}\.[a-zA-Z]{2,})\Z"
    ),
}

_MAX_COMPILED = 2048
_compiled: dict[tuple[str, bool], Validate] = {}
_compile_lock = threading.Lock()


def canonical_text(schema: Any) -> str:
    """The schema as JSON with sorted keys: the cache key of its compiled validator."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _for_fastjsonschema(node: Any) -> Any:
    """Rewrite 2020-12 keywords fastjsonschema (draft 7) does not know into their draft 7 form.

    A required name that no property declares, under ``additionalProperties: false``, is
    declared (with the schema ``{}``): it means the same (the definition check made sure a
    ``patternProperties`` expression admits it), and fastjsonschema then never matches the
    name against those expressions with Python's backtracking matcher while compiling.
    """
    if isinstance(node, list):
        return [_for_fastjsonschema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _for_fastjsonschema(value) for key, value in node.items() if key != "$schema"}
    if "prefixItems" in out:
        prefix = out.pop("prefixItems")
        rest = out.pop("items", True)
        out["items"] = prefix
        out["additionalItems"] = rest
    required = out.get("required")
    if (
        "additionalProperties" in out
        and not out["additionalProperties"]
        and isinstance(required, list)
    ):
        properties = out.get("properties")
        declared = properties if isinstance(properties, dict) else {}
        missing: dict[str, Any] = {
            name: {} for name in required if isinstance(name, str) and name not in declared
        }
        if missing:
            out["properties"] = {**declared, **missing}
    return out


_WARM_SCHEMA: JSONSchema = {
    "type": "object",
    "properties": {"a": {"type": "string", "pattern": "^a", "maxLength": 9}},
    "required": ["a"],
    "additionalProperties": False,
}
"""A small schema compiled by :func:`load_compiler`: it takes the compiler through what a
process pays once (its codecs, its own expressions, RE2's first pattern)."""


def load_compiler() -> None:
    """Import the schema compiler and RE2, and compile one small schema, now rather than at the
    first call of a tool (tens of milliseconds, of which the first compilation of a process pays
    a few over any later one): for a command about to run conversations with tools, so that its
    first round costs what the others do. Without google-re2 nothing is compiled here; the first
    call reports it."""
    import fastjsonschema  # noqa: F401

    from . import _plain_schema  # noqa: F401

    try:
        import re2  # noqa: F401
    except ImportError:
        return
    # By fastjsonschema, though the schema is plain: what a first compilation pays is its
    # compiler's. Nothing is kept: a tool with this schema gets a plain validator.
    fastjsonschema_validator(_WARM_SCHEMA)


def compiled_validator(schema: JSONSchema, *, all_errors: bool = False) -> Validate:
    """A validator for ``schema``, made once per canonical schema text.

    A plain schema (``_plain_schema``: an object of typed properties, with patterns and
    lengths) is checked by a closure built from it directly; any other is compiled by
    fastjsonschema, as are validators with ``all_errors``, the slower variant that reports every
    error instead of the first. Both accept the same values. Defaults in the schema are never
    written into the validated data. Every regular expression of the validator (``pattern``,
    ``patternProperties``, ``format``) is run by RE2, in time linear in the text (see
    ``_patterns``).
    """
    key = (canonical_text(schema), all_errors)
    validate = _compiled.get(key)
    if validate is not None:
        return validate
    with _compile_lock:
        validate = _compiled.get(key)
        if validate is None:
            try:
                validate = _made(schema, all_errors=all_errors)
            except (PatternError, re.error) as exc:
                raise ToolDefinitionError(f"invalid JSON Schema: {exc}") from exc
            except (ImportError, LookupError) as exc:
                raise ToolDefinitionError(
                    f"the schema's regular expressions cannot be checked in linear time ({exc}); "
                    "google-re2 is a dependency of toolwire: reinstall it"
                ) from exc
            if len(_compiled) >= _MAX_COMPILED:
                del _compiled[next(iter(_compiled))]  # the oldest: dynamic schemas come and go
            _compiled[key] = validate
    return validate


def _made(schema: JSONSchema, *, all_errors: bool) -> Validate:
    """The validator of ``schema``: a plain one when it can be, else fastjsonschema's."""
    rewritten = _for_fastjsonschema(schema)
    if not all_errors:
        from ._plain_schema import plain_validator  # loaded with the compiler (load_compiler)

        validate = plain_validator(rewritten)
        if validate is not None:
            return validate
    return _by_fastjsonschema(rewritten, all_errors=all_errors)


def fastjsonschema_validator(schema: JSONSchema, *, all_errors: bool = False) -> Validate:
    """fastjsonschema's validator of ``schema``, its expressions run by RE2; not cached.

    :raises ToolDefinitionError: when fastjsonschema refuses the schema.
    :raises PatternError: for an expression RE2 cannot compile.
    """
    return _by_fastjsonschema(_for_fastjsonschema(schema), all_errors=all_errors)


def _by_fastjsonschema(rewritten: Any, *, all_errors: bool) -> Validate:
    import fastjsonschema  # deferred: the compiler is only needed at the first call of a tool

    try:
        validate = fastjsonschema.compile(
            rewritten, formats=_EXTRA_FORMATS, use_default=False, fast_fail=not all_errors
        )
    except fastjsonschema.JsonSchemaDefinitionException as exc:
        raise ToolDefinitionError(f"invalid JSON Schema: {exc}") from exc
    run_linear(validate, schema_patterns(rewritten))
    return validate


# -- null stripping ----------------------------------------------------------------------------


class _ObjectPlan:
    """Drops ``null`` values of optional properties of an object schema; walks into children."""

    __slots__ = ("children", "keys", "nullable", "optional")

    def __init__(self) -> None:
        self.keys: frozenset[str] = frozenset()
        self.optional: tuple[str, ...] = ()
        self.children: tuple[tuple[str, _Plan], ...] = ()
        # True when some optional property's own schema lets null through: then a valid-looking
        # call may still hold nulls that mean "left out", and they must be dropped first.
        self.nullable = False

    def strip(self, value: Any) -> Any:
        if type(value) is not dict or (not self.children and None not in value.values()):
            return value
        out = value
        for key in self.optional:
            if key in out and out[key] is None:
                if out is value:
                    out = dict(value)
                del out[key]
        for key, plan in self.children:
            item = out.get(key)
            if item is not None:
                new = plan.strip(item)
                if new is not item:
                    if out is value:
                        out = dict(value)
                    out[key] = new
        return out

    @property
    def empty(self) -> bool:
        return not self.optional and not self.children


class _ArrayPlan:
    __slots__ = ("item", "prefix")

    def __init__(self, item: _Plan | None, prefix: tuple[_Plan | None, ...]) -> None:
        self.item = item
        self.prefix = prefix

    def strip(self, value: Any) -> Any:
        if type(value) is not list:
            return value
        out = value
        for index, item in enumerate(value):
            plan = self.prefix[index] if index < len(self.prefix) else self.item
            if plan is None or item is None:
                continue
            new = plan.strip(item)
            if new is not item:
                if out is value:
                    out = list(value)
                out[index] = new
        return out


class _AnyOfPlan:
    __slots__ = ("members",)

    def __init__(self, members: tuple[_ObjectPlan, ...]) -> None:
        self.members = members

    def strip(self, value: Any) -> Any:
        if type(value) is not dict:
            return value
        for member in self.members:
            if member.keys.issuperset(value):
                return member.strip(value)
        return self.members[0].strip(value)


class _MapPlan:
    __slots__ = ("value",)

    def __init__(self, value: _Plan) -> None:
        self.value = value

    def strip(self, value: Any) -> Any:
        if type(value) is not dict:
            return value
        out = value
        for key, item in value.items():
            if item is None:
                continue
            new = self.value.strip(item)
            if new is not item:
                if out is value:
                    out = dict(value)
                out[key] = new
        return out


_Plan = _ObjectPlan | _ArrayPlan | _AnyOfPlan | _MapPlan


def resolve_ref(node: Any, root: JSONSchema) -> Any:
    """Follow local ``$ref`` pointers (``#/$defs/x``) until a schema without one is reached."""
    seen = 0
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and seen < 32:
        ref: str = node["$ref"]
        if not ref.startswith("#"):
            return node
        target: Any = root
        for part in ref[1:].split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and part in target:
                target = target[part]
            else:
                return node
        node = target
        seen += 1
    return node


def _plan(node: Any, root: JSONSchema, memo: dict[int, _Plan | None]) -> _Plan | None:
    node = resolve_ref(node, root)
    if not isinstance(node, Mapping):
        return None
    if id(node) in memo:
        return memo[id(node)]
    memo[id(node)] = None
    result: _Plan | None = None
    if isinstance(node.get("properties"), Mapping):
        plan = _object_plan(node, root, memo)
        result = None if plan.empty else plan
    elif isinstance(node.get("items"), Mapping) or isinstance(node.get("prefixItems"), list):
        item = _plan(node.get("items"), root, memo)
        prefix = tuple(_plan(sub, root, memo) for sub in node.get("prefixItems") or ())
        if item is not None or any(p is not None for p in prefix):
            result = _ArrayPlan(item, prefix)
    elif isinstance(node.get("additionalProperties"), Mapping):
        value = _plan(node["additionalProperties"], root, memo)
        if value is not None:
            result = _MapPlan(value)
    elif isinstance(node.get("anyOf"), list):
        members = [resolve_ref(sub, root) for sub in node["anyOf"]]
        objects = tuple(
            _object_plan(sub, root, memo)
            for sub in members
            if isinstance(sub, Mapping) and isinstance(sub.get("properties"), Mapping)
        )
        if any(not member.empty for member in objects):
            result = _AnyOfPlan(objects)
    memo[id(node)] = result
    return result


def _object_plan(
    node: Mapping[str, Any], root: JSONSchema, memo: dict[int, _Plan | None]
) -> _ObjectPlan:
    plan = _ObjectPlan()
    memo[id(node)] = plan
    properties: Mapping[str, Any] = node["properties"]
    required = node.get("required") or ()
    plan.keys = frozenset(properties)
    plan.optional = tuple(key for key in properties if key not in required)
    plan.nullable = any(may_be_null(properties[key], root) for key in plan.optional)
    children = []
    for key, sub in properties.items():
        child = _plan(sub, root, memo)
        if child is not None:
            children.append((key, child))
    plan.children = tuple(children)
    return plan


def may_be_null(node: Any, root: JSONSchema, depth: int = 0) -> bool:
    """False only when ``node`` surely refuses ``null`` (when unsure: True)."""
    node = resolve_ref(node, root)
    if not isinstance(node, Mapping) or depth > 16:
        return node is not False
    if "const" in node:
        return node["const"] is None
    if isinstance(node.get("enum"), list):
        return None in node["enum"]
    kinds = node.get("type")
    if isinstance(kinds, str):
        return kinds == "null"
    if isinstance(kinds, list):
        return "null" in kinds
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            return any(may_be_null(sub, root, depth + 1) for sub in node[key])
    if isinstance(node.get("allOf"), list):
        return all(may_be_null(sub, root, depth + 1) for sub in node["allOf"])
    return True


def _any_nullable(plan: Any, seen: set[int]) -> bool:
    if plan is None or id(plan) in seen:
        return False
    seen.add(id(plan))
    if isinstance(plan, _ObjectPlan):
        return plan.nullable or any(_any_nullable(child, seen) for _, child in plan.children)
    if isinstance(plan, _ArrayPlan):
        return _any_nullable(plan.item, seen) or any(_any_nullable(p, seen) for p in plan.prefix)
    if isinstance(plan, _AnyOfPlan):
        return any(_any_nullable(member, seen) for member in plan.members)
    if isinstance(plan, _MapPlan):
        return _any_nullable(plan.value, seen)
    return True


def null_plan(schema: JSONSchema) -> _Plan | None:
    """How to drop ``null`` sent for optional properties of ``schema``; None when none can be."""
    return _plan(schema, schema, {})


# -- describing schemas and values -------------------------------------------------------------

_FORMAT_TEXT = {
    "date-time": "a date-time string (RFC 3339, e.g. 2024-05-01T14:30:00Z)",
    "date": "a date string (YYYY-MM-DD, e.g. 2024-05-01)",
    "time": "a time string (HH:MM:SS, e.g. 14:30:00)",
    "uuid": "a UUID string (e.g. 123e4567-e89b-12d3-a456-426614174000)",
    "email": "an email address",
    "hostname": "a host name",
    "ipv4": "an IPv4 address",
    "ipv6": "an IPv6 address",
    "uri": "an absolute URI",
    "duration": "an ISO 8601 duration (e.g. P1DT2H)",
    "path": "a file path",
}
_TYPE_TEXT = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
    "array": "a list",
    "object": "an object",
}


def json_text(value: Any, limit: int = _SHOWN_VALUE_LENGTH) -> str:
    """``value`` as compact JSON, shortened to about ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > limit:
        text = f"{text[: limit - 1]}… ({len(text)} characters)"
    return text


def json_type_of(value: Any) -> str:
    """The JSON type name of a Python value decoded from JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _bounds(node: Mapping[str, Any]) -> list[str]:
    out = []
    if "minimum" in node:
        out.append(f">= {json_text(node['minimum'])}")
    if "exclusiveMinimum" in node and not isinstance(node["exclusiveMinimum"], bool):
        out.append(f"> {json_text(node['exclusiveMinimum'])}")
    if "maximum" in node:
        out.append(f"<= {json_text(node['maximum'])}")
    if "exclusiveMaximum" in node and not isinstance(node["exclusiveMaximum"], bool):
        out.append(f"< {json_text(node['exclusiveMaximum'])}")
    text = " and ".join(out)
    if "multipleOf" in node:
        text = f"{text}, a multiple of {json_text(node['multipleOf'])}".lstrip(", ")
    return [text] if text else []


def _count(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _describe_type(kind: str, node: Mapping[str, Any], root: JSONSchema, depth: int) -> str:
    if kind == "string":
        fmt = node.get("format")
        text = _FORMAT_TEXT.get(fmt, f"a string in {fmt} format") if fmt else "a string"
        extra = []
        if "minLength" in node:
            extra.append(f"at least {_count(node['minLength'], 'character')}")
        if "maxLength" in node:
            extra.append(f"at most {_count(node['maxLength'], 'character')}")
        if extra:
            text = f"{text} of {' and '.join(extra)}"
        pattern = node.get("pattern")
        if isinstance(pattern, str) and len(pattern) <= _SHOWN_PATTERN_LENGTH:
            text = f"{text} matching the pattern {pattern}"
        elif pattern is not None:
            # A long pattern is unreadable to a model and read again at each retry: the
            # parameter's description says what it holds, the schema holds the pattern.
            text = f"{text} matching its schema's pattern (not repeated here: see its description)"
        return text
    if kind in ("integer", "number"):
        return " ".join([_TYPE_TEXT[kind], *_bounds(node)])
    if kind == "array":
        text = "a list"
        prefix = node.get("prefixItems")
        items = node.get("items")
        if isinstance(items, list):
            prefix = items
        if isinstance(prefix, list):
            parts = ", ".join(describe_schema(sub, root, depth + 1) for sub in prefix)
            text = f"a list of exactly {_count(len(prefix), 'item')}: [{parts}]"
        elif isinstance(items, Mapping) and items:
            text = f"a list whose items are each {describe_schema(items, root, depth + 1)}"
        extra = []
        if "minItems" in node and not isinstance(prefix, list):
            extra.append(f"at least {_count(node['minItems'], 'item')}")
        if "maxItems" in node and not isinstance(prefix, list):
            extra.append(f"at most {_count(node['maxItems'], 'item')}")
        if node.get("uniqueItems"):
            extra.append("no duplicates")
        return f"{text} ({', '.join(extra)})" if extra else text
    if kind == "object":
        properties = node.get("properties")
        if isinstance(properties, Mapping) and properties:
            required = node.get("required") or ()
            keys = ", ".join(k if k in required else f"{k} (optional)" for k in properties)
            return f"an object with the keys {keys}"
        extra_values = node.get("additionalProperties")
        if isinstance(extra_values, Mapping) and extra_values:
            return (
                f"an object whose values are each {describe_schema(extra_values, root, depth + 1)}"
            )
        return "an object"
    return _TYPE_TEXT.get(kind, kind)


def describe_schema(node: Any, root: JSONSchema | None = None, depth: int = 0) -> str:
    """What a value must be to satisfy ``node``, in words a model can act on."""
    root = root if root is not None else node
    node = resolve_ref(node, root)
    if node is True or node == {}:
        return "any JSON value"
    if node is False:
        return "nothing (no value is allowed here)"
    if not isinstance(node, Mapping):
        return "a valid value"
    if depth > 3:
        return "a valid value (see the tool's schema)"
    if "const" in node:
        return f"exactly {json_text(node['const'])}"
    if isinstance(node.get("enum"), list):
        values = node["enum"]
        shown = ", ".join(json_text(v, 40) for v in values[:25])
        more = f" (and {len(values) - 25} more)" if len(values) > 25 else ""
        return f"one of {shown}{more}"
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            parts: list[str] = []
            for sub in node[key]:
                text = describe_schema(sub, root, depth + 1)
                if text not in parts:
                    parts.append(text)
            joined = " or ".join(parts)
            return f"exactly one of: {joined}" if key == "oneOf" and len(parts) > 1 else joined
    kinds = node.get("type")
    if isinstance(kinds, str):
        kinds = [kinds]
    if not isinstance(kinds, list):
        if "properties" in node:
            kinds = ["object"]
        elif "items" in node or "prefixItems" in node:
            kinds = ["array"]
        else:
            return "a valid value"
    text = " or ".join(_describe_type(str(kind), node, root, depth) for kind in kinds)
    if isinstance(node.get("allOf"), list):
        also = " and ".join(describe_schema(sub, root, depth + 1) for sub in node["allOf"])
        text = f"{text}, also {also}" if text else also
    return text


def format_path(path: Iterable[str | int]) -> str:
    """An argument path as ``filters[2].op``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


# -- refusals ----------------------------------------------------------------------------------


class ArgumentValidator:
    """Validates the arguments of one tool against its canonical parameter schema."""

    __slots__ = (
        "_fast",
        "_plan",
        "_prepared",
        "_strip_first",
        "hidden",
        "schema",
        "sensitive",
        "tool",
    )

    def __init__(
        self,
        schema: JSONSchema,
        *,
        tool: str | None = None,
        hidden: Iterable[str] = (),
        sensitive: Iterable[str] = (),
    ) -> None:
        self.schema = schema
        self.tool = tool
        self.hidden = tuple(hidden)
        self.sensitive = frozenset(sensitive)
        self._fast: Validate | None = None
        self._plan = null_plan(schema)
        # When no optional property accepts null, a call that validates holds no null to drop,
        # so the valid path is the compiled validator alone; nulls are dropped only on failure.
        self._strip_first = _any_nullable(self._plan, set())
        self._prepared = bool(self.hidden) or self._strip_first

    def validate(self, arguments: Any) -> Mapping[str, Any]:
        """The cleaned arguments (hidden names and nulls of optional properties dropped).

        :raises ArgumentsInvalid: with one refusal per problem found.
        """
        validate = self._fast
        if validate is not None and type(arguments) is dict and not self._prepared:
            # The common case: nothing to drop before the compiled validator decides.
            try:
                validate(arguments)
            except ValueError:
                pass
            else:
                return arguments
        if type(arguments) is not dict:
            if not isinstance(arguments, Mapping):
                raise ArgumentsInvalid(
                    [
                        f"the arguments must be a JSON object "
                        f"({describe_schema(self.schema)}); got {json_text(arguments)} "
                        f"({json_type_of(arguments)})"
                    ],
                    tool=self.tool,
                )
            arguments = dict(arguments)
        args = arguments
        for name in self.hidden:
            if name in args:
                if args is arguments:
                    args = dict(arguments)
                del args[name]
        plan = self._plan
        if plan is not None and self._strip_first:
            args = plan.strip(args)
        validate = self._fast
        if validate is None:
            validate = self._fast = compiled_validator(self.schema)
        try:
            validate(args)
        except ValueError as exc:
            if not _is_value_error(exc):
                raise
            stripped = plan.strip(args) if plan is not None else args
            if stripped is not args:
                try:
                    validate(stripped)
                except ValueError:
                    pass
                else:
                    return stripped  # type: ignore[no-any-return]
            raise ArgumentsInvalid(self.problems(stripped), tool=self.tool) from None
        return args  # type: ignore[no-any-return]

    def problems(self, args: Any) -> list[str]:
        """Every problem of ``args`` (already cleaned), one refusal each."""
        from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException

        try:
            compiled_validator(self.schema, all_errors=True)(args)
        except JsonSchemaValuesException as exc:
            errors = list(exc.errors)
        except JsonSchemaValueException as exc:
            errors = [exc]
        else:
            return []
        out: list[str] = []
        described: set[str | None] = set()
        for error in errors:
            # One refusal per value: its description already says everything that would be valid.
            if error.rule not in ("required", "additionalProperties"):
                if error.name in described:
                    continue
                described.add(error.name)
            for text in self._refusals(error, args):
                if text not in out:
                    out.append(text)
        return out

    def _path(self, error: JsonSchemaValueException, args: Any) -> list[str | int]:
        name = error.name or "data"
        parts = [p for p in re.split(r"\.|\[|\]", name[4:]) if p]
        path: list[str | int] = []
        value = args
        for part in parts:
            if isinstance(value, list) and part.isdigit():
                path.append(int(part))
                value = value[int(part)] if int(part) < len(value) else None
            else:
                path.append(part)
                value = value.get(part) if isinstance(value, Mapping) else None
        return path

    def _shown(self, path: list[str | int], value: Any, with_type: bool) -> str:
        if path and path[0] in self.sensitive:
            return "a value (not repeated: the argument is sensitive)"
        text = json_text(value)
        return f"{text} ({json_type_of(value)})" if with_type else text

    def _parent(self, path: list[str | int]) -> Mapping[str, Any] | None:
        node: Any = self.schema
        for part in path[:-1]:
            node = resolve_ref(node, self.schema)
            node = _child_schema(node, part, self.schema)
            if node is None:
                return None
        node = resolve_ref(node, self.schema)
        return node if isinstance(node, Mapping) else None

    def _optional_note(self, path: list[str | int]) -> str:
        if not path or not isinstance(path[-1], str):
            return ""
        parent = self._parent(path)
        if parent is None or path[-1] in (parent.get("required") or ()):
            return ""
        properties = parent.get("properties") or {}
        node = resolve_ref(properties.get(path[-1], {}), self.schema)
        where = format_path(path)
        if isinstance(node, Mapping) and "default" in node:
            default = json_text(node["default"])
            return f" {where} is optional: leave it out to use the default ({default})."
        return f" {where} is optional: leave it out if it is not needed."

    def _refusals(self, error: JsonSchemaValueException, args: Any) -> list[str]:
        path = self._path(error, args)
        where = format_path(path) or "the arguments"
        node = error.definition if isinstance(error.definition, Mapping) else {}
        value = error.value
        rule = error.rule
        top = not path
        if rule == "required" and isinstance(value, Mapping):
            properties = node.get("properties") or {}
            out = []
            for key in node.get("required") or ():
                if key not in value:
                    sub = properties.get(key, {})
                    out.append(
                        f"{format_path([*path, key])}: missing; it is required "
                        f"({describe_schema(sub, self.schema)})."
                    )
            return out
        if rule == "additionalProperties" and isinstance(value, Mapping):
            properties = node.get("properties") or {}
            patterns = node.get("patternProperties") or {}
            extra = [
                key
                for key in value
                if key not in properties
                and not any(linear_pattern(p).search(key) for p in patterns)
            ]
            noun = "argument" if top else "key"
            valid = ", ".join(properties) or "none"
            return [
                f"{format_path([*path, key])}: unknown {noun} (got "
                f"{self._shown([*path, key], value[key], False)}); valid {noun}s: {valid}."
                for key in extra
            ]
        with_type = rule in ("type", "anyOf", "oneOf") or rule is None
        expected = describe_schema(node, self.schema) if node else "a valid value"
        if rule in ("minProperties", "maxProperties", "propertyNames", "dependencies", "not"):
            expected = f"{expected} ({error.message.removeprefix(error.name or '').strip()})"
        return [
            f"{where}: got {self._shown(path, value, with_type)}; expected {expected}."
            + self._optional_note(path)
        ]


def _child_schema(node: Any, part: str | int, root: JSONSchema) -> Any:
    if not isinstance(node, Mapping):
        return None
    if isinstance(part, int):
        prefix = node.get("prefixItems")
        if isinstance(prefix, list) and part < len(prefix):
            return prefix[part]
        items = node.get("items")
        if isinstance(items, list):
            return items[part] if part < len(items) else node.get("additionalItems")
        return items if isinstance(items, Mapping) else None
    properties = node.get("properties")
    if isinstance(properties, Mapping) and part in properties:
        return properties[part]
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else None


def _is_value_error(exc: Exception) -> bool:
    from fastjsonschema import JsonSchemaValueException

    return isinstance(exc, JsonSchemaValueException)
