"""Writing a call in a dialect, as a model following the instructions would write it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..messages import ToolCall
from ..tools._spec import FunctionSpec
from . import _jsoncalls, _ptype, _typescript, _xml
from ._dialect import CALL_DIALECTS, Dialect, DialectChoice, check_dialect, tool_dialects
from ._scanner import PROVIDER_DATA_KEY, call_fingerprint
from ._schema import parameter_names


def render_call(
    name: str,
    arguments: Mapping[str, Any],
    dialect: Dialect,
    function: FunctionSpec | None = None,
    *,
    nested: _xml.NestedStyle = "json",
) -> str:
    """The text of one call of ``name`` with ``arguments`` in ``dialect``.

    ``function`` gives the schema (the xml dialect writes values by their types) and the
    parameter order (ptype and python write leading parameters positionally, typescript every
    declared one). ``nested`` chooses how the
    xml dialect writes objects and arrays: JSON inside the element, or nested elements.
    Arguments the xml dialect cannot write as elements are written as a ``<tool_call>`` block,
    which every dialect reads.
    """
    dialect = check_dialect(dialect)
    parameters: Mapping[str, Any] = function.parameters if function is not None else {}
    if dialect == "json":
        return _jsoncalls.render_call(name, arguments)
    if dialect in CALL_DIALECTS:
        order = parameter_names(parameters, function.parameter_order) if function else ()
        if dialect == "python":
            return _ptype.render_python_call(name, arguments, order)
        if dialect == "typescript":
            return _typescript.render_call(name, arguments, order)
        return _ptype.render_call(name, arguments, order)
    if not _xml.TAG_NAME.fullmatch(name) or not all(_xml.TAG_NAME.fullmatch(k) for k in arguments):
        return _jsoncalls.render_call(name, arguments)
    if not arguments:
        return f"<{name}></{name}>"
    body = _xml.render_arguments(arguments, parameters, nested=nested)
    return f"<{name}>\n{body}\n</{name}>"


def render_tool_call(
    call: ToolCall, dialect: DialectChoice, functions: Sequence[FunctionSpec] = ()
) -> str:
    """A call of an earlier assistant turn, as text for a model without native tools, in the
    dialect of its tool.

    A call read from text in the same dialect, and not changed since, is written exactly as the
    model wrote it. A call that could not be read keeps its raw text.
    """
    dialect = tool_dialects(dialect).of(call.name)
    data = (call.provider_data or {}).get(PROVIDER_DATA_KEY)
    if (
        isinstance(data, Mapping)
        and data.get("dialect") == dialect
        and isinstance(data.get("text"), str)
        and data.get("fingerprint") == call_fingerprint(call.name, call.arguments)
    ):
        return str(data["text"])
    function = next((f for f in functions if f.name == call.name), None)
    if call.arguments is not None:
        return render_call(call.name, call.arguments, dialect, function)
    raw = call.raw_arguments or ""
    if dialect == "xml" and _xml.TAG_NAME.fullmatch(call.name):
        return f"<{call.name}>{_xml.escape(raw)}</{call.name}>"
    if dialect in CALL_DIALECTS:
        return f"{call.name}({raw})"
    body = json.dumps({"name": call.name, "arguments": raw}, ensure_ascii=False)
    return "<tool_call>" + body.replace("</", "<\\/") + "</tool_call>"
