"""Normalising the schema dialects found in the wild into standard JSON Schema.

Definitions written for other hosts use type words from their programming languages (``float``,
``dict``, ``String``, ``HashMap``), mark properties ``optional: true`` or ``required: true``,
write OpenAPI's ``nullable: true``, give a property as a bare type word, or leave ``type`` out
of the root. :func:`normalize_schema` rewrites each of those into the standard form and lists
every change it made, so nothing changes silently.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from ._schemacheck import _MANY, _NAMED, _ONE, JSON_TYPES, json_path

# The type words of other hosts, by their lowercase spelling. "" means: any value (no "type").
TYPE_WORDS: Final[Mapping[str, str]] = {
    # numbers
    "float": "number",
    "double": "number",
    "decimal": "number",
    "real": "number",
    "float32": "number",
    "float64": "number",
    "numeric": "number",
    # integers
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "int8": "integer",
    "int16": "integer",
    "int32": "integer",
    "int64": "integer",
    "uint": "integer",
    "uint32": "integer",
    "uint64": "integer",
    "bigint": "integer",
    # strings
    "str": "string",
    "char": "string",
    "text": "string",
    "varchar": "string",
    # booleans
    "bool": "boolean",
    # objects
    "dict": "object",
    "map": "object",
    "hashmap": "object",
    "record": "object",
    "struct": "object",
    "json": "object",
    # arrays
    "list": "array",
    "tuple": "array",
    "set": "array",
    "sequence": "array",
    # null
    "none": "null",
    "nil": "null",
    "void": "null",
    # any value
    "any": "",
    "mixed": "",
    "*": "",
    "": "",
}
"""Every non-standard type word :func:`normalize_schema` maps, to its JSON Schema type (``""``:
any value, so ``type`` is left out). Matching ignores case and surrounding spaces, so ``String``,
``HashMap`` and ``Integer`` are covered too; a generic such as ``List[str]`` maps by its base."""


@functools.cache
def _generic() -> re.Pattern[str]:
    """A generic type word such as ``List[str]`` or ``Map<String, Integer>`` (compiled on first
    use: only a hand-written schema with such a word needs it)."""
    return re.compile(r"\s*([A-Za-z_][\w.]*)\s*[\[<](.*)[\]>]\s*")


def standard_type(word: str) -> str | None:
    """The JSON Schema type for a type word (``""`` for any value), or None when unknown."""
    lowered = word.strip().lower()
    if lowered in JSON_TYPES:
        return lowered
    mapped = TYPE_WORDS.get(lowered)
    if mapped is not None:
        return mapped
    generic = _generic().fullmatch(word)
    if generic is not None:
        base = generic[1].rsplit(".", 1)[-1]
        return standard_type(base) if base.lower() != lowered else None
    return None


class _Normalizer:
    __slots__ = ("foreign_only", "notes")

    def __init__(self, *, foreign_only: bool = False) -> None:
        self.notes: list[str] = []
        # Only the words JSON Schema ignores (optional, nullable): what from_schema reads.
        self.foreign_only = foreign_only

    def note(self, path: tuple[str | int, ...], text: str) -> None:
        self.notes.append(f"{json_path(path)}: {text}")

    def node(self, node: Any, path: tuple[str | int, ...]) -> Any:
        if not self.foreign_only and isinstance(node, str) and standard_type(node) is not None:
            # A bare type word where a schema belongs: {"size": "float"}.
            mapped = standard_type(node)
            self.note(path, f"the type word {node!r} became a schema {_type_schema(mapped)}")
            return json.loads(_type_schema(mapped))
        if not isinstance(node, dict):
            return node
        if "type" in node and not self.foreign_only:
            self.type_(node, path)
        if type(node.get("nullable")) is bool:
            self.nullable(node, path)
        items = node.get("items")
        if isinstance(items, list) and "prefixItems" not in node and not self.foreign_only:
            node["prefixItems"] = node.pop("items")
            if "additionalItems" in node:
                node["items"] = node.pop("additionalItems")
            self.note((*path, "items"), 'the draft 7 list of item schemas became "prefixItems"')
        for key in _NAMED:
            value = node.get(key)
            if isinstance(value, dict):
                for name in list(value):
                    value[name] = self.node(value[name], (*path, key, name))
        for key in _MANY:
            value = node.get(key)
            if isinstance(value, list):
                node[key] = [self.node(sub, (*path, key, i)) for i, sub in enumerate(value)]
        for key in (*_ONE, "items"):
            if key not in node:
                continue
            value = node[key]
            if isinstance(value, list) and key == "items":
                node[key] = [self.node(sub, (*path, key, i)) for i, sub in enumerate(value)]
            else:
                node[key] = self.node(value, (*path, key))
        properties = node.get("properties")
        if isinstance(properties, dict):
            self.requirement(node, properties, path)
        return node

    def type_(self, node: dict[str, Any], path: tuple[str | int, ...]) -> None:
        value = node["type"]
        words = value if isinstance(value, list) else [value]
        if all(isinstance(w, str) and w in JSON_TYPES for w in words):
            return
        mapped: list[str] = []
        for word in words:
            target = standard_type(word) if isinstance(word, str) else None
            if target is None:
                return  # an unknown word stays, for the check to name
            if target == "":
                del node["type"]
                self.note((*path, "type"), f'{word!r} means any value, so "type" was left out')
                return
            if target not in mapped:
                mapped.append(target)
        new: str | list[str] = (
            mapped[0] if len(mapped) == 1 and not isinstance(value, list) else mapped
        )
        node["type"] = new
        self.note((*path, "type"), f"{_compact(value)} became {_compact(new)}")

    def nullable(self, node: dict[str, Any], path: tuple[str | int, ...]) -> None:
        flag = node.pop("nullable")
        if not flag:
            self.note((*path, "nullable"), "'nullable: false' was dropped (it is the default)")
            return
        kinds = node.get("type")
        if isinstance(kinds, str):
            node["type"] = [kinds, "null"] if kinds != "null" else kinds
        elif isinstance(kinds, list) and "null" not in kinds:
            node["type"] = [*kinds, "null"]
        if isinstance(node.get("enum"), list) and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        self.note(
            (*path, "nullable"),
            f"'nullable: true' became \"type\": {_compact(node.get('type', 'any'))}",
        )

    def requirement(
        self, node: dict[str, Any], properties: dict[str, Any], path: tuple[str | int, ...]
    ) -> None:
        required = node.get("required")
        names: list[str] = list(required) if isinstance(required, list) else []
        changed = False
        for name, sub in properties.items():
            if not isinstance(sub, dict):
                continue
            where = (*path, "properties", name)
            for key in ("optional",) if self.foreign_only else ("optional", "required"):
                flag = sub.get(key)
                if type(flag) is not bool:
                    continue
                del sub[key]
                must = flag if key == "required" else not flag
                if must and name not in names:
                    names.append(name)
                    changed = True
                elif not must and name in names:
                    names.remove(name)
                    changed = True
                state = "required" if must else "optional"
                self.note((*where, key), f"'{key}: {json.dumps(flag)}' became {state}")
        if changed or (isinstance(required, list) and names != required):
            if names:
                node["required"] = names
            else:
                node.pop("required", None)


def _type_schema(kind: str | None) -> str:
    return json.dumps({"type": kind} if kind else {})


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


FOREIGN_WORDS: Final = ("optional", "nullable")
"""The words of other hosts that JSON Schema ignores and :func:`read_foreign_words` reads."""


def read_foreign_words(schema: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Read, in place, the two words of other hosts that JSON Schema would silently ignore:
    ``optional: true|false`` on a property (out of, or into, its object's ``required``) and
    OpenAPI's ``nullable: true|false`` (``null`` added to the type). Returns ``schema`` and one
    note per word read (its JSON path), for ``Tool.schema_notes`` and ``toolwire doctor``."""
    normalizer = _Normalizer(foreign_only=True)
    normalizer.node(schema, ())
    return schema, tuple(normalizer.notes)


def normalize_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Rewrite the common non-standard dialects of ``schema`` into standard JSON Schema.

    Returns the new schema (``schema`` itself is not changed) and one note per change, each
    naming the JSON path it changed and how. What it maps:

    - the type words of :data:`TYPE_WORDS` (``float`` → ``number``, ``dict`` → ``object``,
      ``any`` → no ``type``; case ignored, ``List[str]`` by its base), wherever a ``type`` is;
    - a property given as a bare type word (``{"size": "float"}``);
    - ``optional: true`` / ``required: true`` on a property, into its object's ``required``;
    - OpenAPI's ``nullable: true``, into ``"type": [T, "null"]`` (and ``null`` in an ``enum``);
    - a root without ``type``, into ``"type": "object"``;
    - draft 7's list form of ``items``, into ``prefixItems`` (``additionalItems`` into
      ``items``).

    Anything else is left as it was: a problem normalising cannot fix is still refused by the
    definition check, with its path. A standard schema comes back equal, with no notes.
    """
    if not isinstance(schema, Mapping):
        raise TypeError(
            f"normalize_schema takes a JSON Schema mapping; got {type(schema).__name__}"
        )
    try:
        out = json.loads(json.dumps(schema, ensure_ascii=False))  # a deep copy, fast
    except (TypeError, ValueError):
        out = copy.deepcopy(dict(schema))
    normalizer = _Normalizer()
    untyped = "type" not in out
    normalizer.node(out, ())
    if "type" not in out and not any(k in out for k in ("anyOf", "oneOf", "allOf", "$ref")):
        # Also after a root "any": tool arguments are always one JSON object.
        out = {"type": "object", **out}
        note = (
            '$: the root had no "type"; it became "type": "object"'
            if untyped
            else "$: the root accepted any value, but arguments are one JSON object; it became "
            '"type": "object"'
        )
        normalizer.notes.insert(0, note)
    return out, tuple(normalizer.notes)
