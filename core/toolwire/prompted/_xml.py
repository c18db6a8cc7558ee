"""The ``xml`` dialect: argument elements read into JSON values by the schema's types, and back."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from .._json.relaxed import ArgumentsSyntaxError, parse_arguments
from ._schema import allowed_types, item_schema, properties, property_schema, required, resolve

TAG_NAME: Final = re.compile(r"[A-Za-z_][\w.-]*")
OPEN_TAG: Final = re.compile(
    r"<(?P<tag>[A-Za-z_][\w.-]*)"
    r"(?P<attributes>(?:\s+[^\s=/>\"']+\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`/]+))*)"
    r"\s*(?P<empty>/?)>"
)
_ATTRIBUTE: Final = re.compile(r"([^\s=/>\"']+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'=<>`/]+))")
_ENTITY: Final = re.compile(r"&(?:(lt|gt|amp|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED: Final = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_NEEDS_AMP: Final = re.compile(r"&(?=(?:lt|gt|amp|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});)")
_TAG_START: Final = re.compile(r"<(?=[A-Za-z_/!?])")
_INTEGER: Final = re.compile(r"[-+]?[0-9]+")
_FLOAT: Final = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?")
_LEADING_NEWLINE: Final = re.compile(r"\A\r?\n")

NestedStyle = Literal["json", "tags"]

NULL: Final = "null"
"""An element holding just this word (spaces around it aside) is ``null``, whatever its type."""
_NULL_TEXT: Final = "&#110;ull"


class XmlArgumentsError(ValueError):
    """Argument elements that cannot be read into arguments; the message says what and where."""


@attrs.frozen
class Element:
    """One element of a call body: its tag, attributes and raw content (None when self-closing).

    ``closed`` is False for an element whose closing tag never came (the output ended).
    """

    tag: str
    attributes: Mapping[str, str]
    content: str | None
    closed: bool = True


def unescape(text: str) -> str:
    """Decode the five XML entities and numeric character references, in one pass."""
    if "&" not in text:
        return text
    return _ENTITY.sub(_decode_entity, text)


def _decode_entity(match: re.Match[str]) -> str:
    named, decimal, hexadecimal = match.groups()
    if named:
        return _NAMED[named]
    code = int(decimal) if decimal else int(hexadecimal, 16)
    return chr(code) if 0 < code <= 0x10FFFF else match.group()


def escape(text: str) -> str:
    """Escape text for an element so it reads back unchanged and opens or closes no element.

    Only what would change the reading is escaped: ``&`` before something entity-like, and ``<``
    where a tag could start. Everything else stays readable as it is.
    """
    return _TAG_START.sub("&lt;", _NEEDS_AMP.sub("&amp;", text))


def leaf_text(content: str) -> str:
    """The text of a leaf element: one newline after the opening and before the closing tag dropped.

    Models often put a value on lines of its own; those two newlines are layout, not value.
    """
    leading = _LEADING_NEWLINE.match(content)
    if leading:
        content = content[leading.end() :]
        if content.endswith("\n"):
            content = content[:-1]
            if leading.group() == "\r\n" and content.endswith("\r"):
                content = content[:-1]
    return unescape(content)


def _wrap_newlines(text: str) -> str:
    if text.startswith(("\n", "\r\n")) or text.endswith("\n"):
        return f"\n{text}\n"
    return text


@functools.lru_cache(maxsize=512)
def _tag_pattern(tag: str) -> re.Pattern[str]:
    return re.compile(rf"<(/?){re.escape(tag)}((?:\s[^<>]*?)?)(/?)>")


def find_close(text: str, tag: str, start: int) -> tuple[int, int] | None:
    """``(start, end)`` of the ``</tag>`` closing an element opened before ``start``, or None.

    Elements of the same name nested inside are counted, so they do not end the element early.
    """
    depth = 1
    for match in _tag_pattern(tag).finditer(text, start):
        closing, _, empty = match.groups()
        if closing:
            depth -= 1
            if depth == 0:
                return match.start(), match.end()
        elif not empty:
            depth += 1
    return None


def attributes_of(text: str) -> dict[str, str]:
    """The attributes written in an opening tag, values decoded."""
    found: dict[str, str] = {}
    for match in _ATTRIBUTE.finditer(text):
        double, single, bare = match.group(2, 3, 4)
        value = double if double is not None else single if single is not None else bare
        found[match[1]] = unescape(value)
    return found


def split_elements(text: str) -> tuple[list[Element], str]:
    """The elements at the top level of ``text``, and the text found between them.

    An element whose closing tag is missing takes the rest of the text (output cut short).
    """
    elements: list[Element] = []
    stray: list[str] = []
    pos = 0
    while True:
        match = OPEN_TAG.search(text, pos)
        if match is None:
            stray.append(text[pos:])
            break
        stray.append(text[pos : match.start()])
        tag = match["tag"]
        attributes = attributes_of(match["attributes"])
        if match["empty"]:
            elements.append(Element(tag, attributes, None))
            pos = match.end()
            continue
        close = find_close(text, tag, match.end())
        if close is None:
            elements.append(Element(tag, attributes, text[match.end() :], closed=False))
            break
        elements.append(Element(tag, attributes, text[match.end() : close[0]]))
        pos = close[1]
    return elements, "".join(stray)


# -- reading ----------------------------------------------------------------------------------


def read_arguments(
    attributes: Mapping[str, str], body: str | None, parameters: Mapping[str, Any]
) -> dict[str, Any]:
    """The arguments of one call: its attributes and child elements, typed by ``parameters``.

    A body of plain text is accepted for a function with a single parameter.

    :raises XmlArgumentsError: text outside the argument elements, or an argument given twice.
    """
    root = parameters
    arguments: dict[str, Any] = {}
    for name, value in attributes.items():
        arguments[name] = coerce(value, property_schema(parameters, name, root), root, raw=False)
    if body is None or not body.strip():
        return arguments
    elements, stray = split_elements(body)
    if stray.strip():
        single = _single_parameter(parameters)
        if elements or single is None or single in arguments:
            shown = _shorten(stray.strip())
            raise XmlArgumentsError(
                f"text outside the argument elements: {shown!r}; write each argument as "
                "<name>value</name> inside the call"
            )
        arguments[single] = coerce(body, property_schema(parameters, single, root), root)
        return arguments
    arguments.update(_object_from(elements, parameters, root))
    return arguments


def _single_parameter(parameters: Mapping[str, Any]) -> str | None:
    names = list(properties(parameters, parameters))
    if len(names) == 1:
        return names[0]
    needed = [n for n in names if n in required(parameters, parameters)]
    return needed[0] if len(needed) == 1 else None


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _object_from(elements: list[Element], schema: Any, root: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for element in elements:
        sub = property_schema(schema, element.tag, root)
        value = _element_value(element, sub, root)
        if element.tag not in out:
            out[element.tag] = value
            continue
        # The same array argument written once per item: <tag>a</tag><tag>b</tag>.
        if allowed_types(sub, root) == frozenset({"array"}) and isinstance(out[element.tag], list):
            out[element.tag].extend(value)
            continue
        raise XmlArgumentsError(
            f"the argument {element.tag!r} is given more than once; give it once "
            "(write a list as JSON inside one element)"
        )
    return out


def _element_value(element: Element, schema: Any, root: Mapping[str, Any]) -> Any:
    content = element.content if element.content is not None else ""
    value = coerce(content, schema, root)
    types = allowed_types(schema, root)
    if value is not None and types == frozenset({"array"}) and not isinstance(value, list):
        # One item written without a list around it.
        value = [coerce(content, item_schema(schema, 0, root), root)]
    if element.attributes and isinstance(value, dict):
        for name, text in element.attributes.items():
            sub = property_schema(schema, name, root)
            value.setdefault(name, coerce(text, sub, root, raw=False))
    return value


def coerce(content: str, schema: Any, root: Mapping[str, Any], *, raw: bool = True) -> Any:
    """The JSON value of an element's content (``raw``) or of decoded text, typed by ``schema``.

    ``null`` written plainly is ``null`` for every schema. Numbers, booleans and the other
    spellings of null are read by the schema's types; objects and arrays from nested
    elements or JSON inside the element. Text that fits none of the allowed types is returned as
    a string, so schema validation reports it with its value.
    """
    stripped_raw = content.strip()
    if raw and stripped_raw == NULL:
        # The instructions ask for null written plainly, for any parameter: for an optional one
        # it means "left out". A string that is the word itself is written &#110;ull.
        return None
    types = allowed_types(schema, root)
    if types == frozenset({"string"}):
        return leaf_text(content) if raw else content
    if raw and stripped_raw.startswith("<") and (types is None or types & {"object", "array"}):
        elements, stray = split_elements(stripped_raw)
        if elements and not stray.strip():
            return _structure(elements, schema, types, root)
    text = leaf_text(content) if raw else content
    # Raw content that is not the plain word was escaped on purpose (&#110;ull): a string.
    return _scalar(text, schema, types, root, null_word=not raw)


def _structure(
    elements: list[Element], schema: Any, types: frozenset[str] | None, root: Mapping[str, Any]
) -> Any:
    same_tag = len({e.tag for e in elements}) == 1
    as_array = (
        "array" in types and ("object" not in types or same_tag)
        if types is not None
        else same_tag and (len(elements) > 1 or elements[0].tag == "item")
    )
    if as_array:
        return [
            _element_value(e, item_schema(schema, i, root), root) for i, e in enumerate(elements)
        ]
    return _object_from(elements, schema, root)


def _scalar(
    text: str,
    schema: Any,
    types: frozenset[str] | None,
    root: Mapping[str, Any],
    *,
    null_word: bool = True,
) -> Any:
    stripped = text.strip()
    if types is None:
        return text if stripped == NULL and not null_word else _any_value(text, stripped)
    candidates: list[Any] = []
    empty_is_null = not stripped and "string" not in types
    nulls = ("null", "None") if null_word else ("None",)
    if "null" in types and (stripped in nulls or empty_is_null):
        candidates.append(None)
    if "boolean" in types and stripped.lower() in ("true", "false"):
        candidates.append(stripped.lower() == "true")
    if types & {"integer", "number"} and _INTEGER.fullmatch(stripped):
        candidates.append(int(stripped))
    elif "number" in types and _FLOAT.fullmatch(stripped):
        candidates.append(float(stripped))
    if types & {"array", "object"}:
        if stripped[:1] in ("[", "{"):
            parsed = _loads(stripped)
            if isinstance(parsed, list | dict):
                candidates.append(parsed)
        elif not stripped and "string" not in types:
            candidates.append([] if "array" in types else {})
    if "string" in types:
        if len(types) > 1 and stripped.startswith('"'):
            quoted = _loads(stripped)
            if isinstance(quoted, str):
                candidates.append(quoted)
        candidates.append(text)
    choices = resolve(schema, root).get("enum")
    if isinstance(choices, list):
        for candidate in candidates:
            if any(same_value(candidate, choice) for choice in choices):
                return candidate
    return candidates[0] if candidates else text


def _any_value(text: str, stripped: str) -> Any:
    if not stripped:
        return text
    if stripped in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[stripped]
    parsed = _loads(stripped)
    return text if parsed is _FAILED else parsed


_FAILED: Final = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        if text.startswith("{"):
            return parse_arguments(text).arguments
        if text.startswith("["):
            return parse_arguments('{"_":' + text + "}").arguments["_"]
    except ArgumentsSyntaxError:
        pass
    return _FAILED


def same_value(a: Any, b: Any) -> bool:
    """JSON equality that tells ``1``, ``1.0`` and ``True`` apart."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# -- writing ----------------------------------------------------------------------------------


def render_arguments(
    arguments: Mapping[str, Any], parameters: Mapping[str, Any], *, nested: NestedStyle = "json"
) -> str:
    """Argument elements for ``arguments``, one a line, that :func:`read_arguments` reads back.

    ``nested`` chooses how objects and arrays are written: JSON inside the element (what the
    instructions ask of models) or nested elements (``<item>`` per array item).
    """
    lines = []
    for name, value in arguments.items():
        if not TAG_NAME.fullmatch(name):
            raise ValueError(f"the argument name {name!r} cannot be written as an XML element")
        sub = property_schema(parameters, name, parameters)
        lines.append(f"<{name}>{render_value(value, sub, parameters, nested=nested)}</{name}>")
    return "\n".join(lines)


def render_value(
    value: Any, schema: Any, root: Mapping[str, Any], *, nested: NestedStyle = "json"
) -> str:
    """The content of an element holding ``value`` (see :func:`render_arguments`)."""
    types = allowed_types(schema, root)
    if isinstance(value, list | dict) and nested == "tags" and _can_nest(value, types):
        if isinstance(value, list):
            return "".join(
                f"<item>{render_value(v, item_schema(schema, i, root), root, nested=nested)}</item>"
                for i, v in enumerate(value)
            )
        return "".join(
            f"<{k}>{render_value(v, property_schema(schema, k, root), root, nested=nested)}</{k}>"
            for k, v in value.items()
        )
    if value is None:
        return NULL
    if isinstance(value, str):
        if value.strip() == NULL:
            plain = _wrap_newlines(value.replace(NULL, _NULL_TEXT, 1))
            if same_value(coerce(plain, schema, root), value):
                return plain
            return escape(json.dumps(value, ensure_ascii=False))
        plain = _wrap_newlines(escape(value))
        if types == frozenset({"string"}) or same_value(coerce(plain, schema, root), value):
            return plain
    elif not isinstance(value, list | dict):
        plain = json.dumps(value)
        if same_value(coerce(plain, schema, root), value):
            return plain
    return escape(json.dumps(value, ensure_ascii=False))


def _can_nest(value: list[Any] | dict[str, Any], types: frozenset[str] | None) -> bool:
    if isinstance(value, list):
        return types == frozenset({"array"}) and bool(value)
    names_fit = all(TAG_NAME.fullmatch(k) for k in value)
    return types == frozenset({"object"}) and bool(value) and names_fit
