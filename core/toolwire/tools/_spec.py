"""``FunctionSpec``: the function a tool offers to one model request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from .._fieldwise import record_eq, record_hash, record_repr

if TYPE_CHECKING:
    from ._model import Tool


@attrs.frozen(kw_only=True)
class FunctionSpec:
    """What the model is offered for one tool in one request.

    ``parameters`` is the canonical, provider-neutral JSON Schema (optional = absent from
    ``required``); adapters whose host binds output project it to strict form themselves.
    ``strict`` is None to let the adapter decide, False to never send it strict.
    ``parameter_order`` is the positional order used by the prompted ``ptype`` dialect.
    ``parameters`` is checked like a tool's (:class:`ToolDefinitionError` lists every problem).
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    name: str
    description: str
    parameters: Mapping[str, Any] = attrs.field()
    strict: bool | None = None
    parameter_order: tuple[str, ...] = ()
    tool: Tool | None = attrs.field(default=None, eq=False, repr=False)

    @parameters.validator
    def _check_parameters(self, attribute: attrs.Attribute[Any], value: Any) -> None:
        # A resolver's own schema is checked like a tool's: no provider receives an unsound one,
        # and a resolver that builds one costs only its tool (the offer leaves it out).
        from ._schemacheck import check_parameter_schema

        check_parameter_schema(value, f"function {self.name}")
