"""The contract between the loop and a provider adapter.

An adapter translates one wire API to and from the canonical conversation. It never runs a tool, and
the loop never learns the wire shape.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

import attrs

# Re-exported: adapters name these through this module.
from ..events import EmitEvent as EmitEvent
from ..http._errors import ProviderError as ProviderError
from ..http._errors import ToolsNotSupportedError as ToolsNotSupportedError
from ..messages import AssistantMessage, Message
from ..output import OutputSpec
from ..tools._spec import FunctionSpec

if TYPE_CHECKING:
    from ..config import ProviderConfig
    from ..http._transport import Transport
    from ._names import ToolNames


@attrs.frozen
class NamedToolChoice:
    """Force a call of the tool ``name``."""

    name: str


ToolChoice: TypeAlias = Literal["auto", "none", "required"] | NamedToolChoice
"""Whether the model may, must not or must call a tool, or which one it must call."""


@attrs.frozen(kw_only=True)
class AdapterCapabilities:
    """What an adapter (and the host it talks to) supports.

    ``binds_strict_schemas``: the host constrains output to strict schemas, so the adapter projects
    tool schemas to strict form. ``accepts_parallel_tool_calls``: the API takes a flag that limits a
    turn to one call. ``max_tool_name_length``: the longest tool name the API accepts.
    ``native_output``: the API constrains an answer to a JSON Schema (OpenAI's
    ``response_format`` and ``text.format``, Gemini's ``responseJsonSchema``), so a run with a
    typed output sends its schema in :attr:`ModelRequest.output`; without it the loop offers the
    answer as a tool (or, without native tools, asks for it in the prompt).
    """

    native_tools: bool = True
    tool_choice: frozenset[str] = frozenset({"auto", "none", "required", "named"})
    streaming: bool = True
    binds_strict_schemas: bool = False
    accepts_parallel_tool_calls: bool = False
    max_tool_name_length: int = 64
    native_output: bool = False


@attrs.frozen(kw_only=True, slots=False)
class ModelRequest:
    """One request of the loop to the model: the conversation and the offered functions.

    ``messages`` starts with the effective system prompt (if any). ``parallel_tool_calls`` is False
    when the loop executes calls serially, None when it does not care. ``tool_names`` is set by
    :func:`wire_request` on the request an adapter sends: the aliases of the names its API
    refuses. ``secrets`` are the values of the conversation's sensitive arguments: they are sent
    as they are, and redacted from every captured copy of the request body. ``output`` is the
    run's answer schema, set only for an adapter with ``native_output``: it renders it in its
    API's structured-output field, and the answer's text is that JSON. Made every round, it has
    no ``__slots__``, as events have none (see :class:`~toolwire.events.Event`).
    """

    run_id: str
    round: int
    messages: tuple[Message, ...]
    functions: tuple[FunctionSpec, ...] = ()
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool | None = None
    stream: bool = False
    options: Mapping[str, Any] = attrs.field(factory=dict)
    tool_names: ToolNames | None = attrs.field(default=None, eq=False, repr=False)
    secrets: frozenset[str] = attrs.field(default=frozenset(), eq=False, repr=False)
    output: OutputSpec | None = None


class ProviderAdapter(abc.ABC):
    """Base class of provider adapters, returned (as classes) by ``toolwire_provider_adapters``.

    Subclasses set ``api`` (the name the config refers to, e.g. ``"openai-chat"``) and implement
    :meth:`complete`. The host creates one instance per provider configuration and closes it with
    :meth:`aclose`.
    """

    api: ClassVar[str]

    def __init__(self, config: ProviderConfig, transport: Transport | None = None) -> None:
        self.config = config
        self.transport = transport

    @property
    @abc.abstractmethod
    def capabilities(self) -> AdapterCapabilities:
        """What this adapter and its configured host support."""

    @abc.abstractmethod
    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> Any:
        """The exact JSON (or text) the API receives for these functions."""

    def render_notes(self, functions: tuple[FunctionSpec, ...]) -> list[str]:
        """What a person reading :meth:`render_tools` for ``functions`` should know: where the
        API receives something other than the canonical definition (a name under an alias, a
        schema in another form, constraints written into a description). ``toolwire tools show
        --wire`` prints them beside the JSON.

        By default: the alias of each name the rendering does not carry, under the
        ``[a-zA-Z0-9_-]``, 64-character rule of :func:`wire_request`. An adapter whose API has
        another name rule, or that changes schemas, says so by overriding this.
        """
        from ._names import wire_notes

        rendered = self.render_tools(functions)
        return [note for f in functions for note in wire_notes(f.name, rendered)]

    @abc.abstractmethod
    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        """Send ``request`` and return the assistant turn; streamed pieces go to ``emit``."""

    @property
    def empty_answer_hint(self) -> str | None:
        """The likely cause of an empty answer from this adapter's host, told with the run's
        ``empty`` stop reason; None for the general advice."""
        return None

    async def aclose(self) -> None:
        """Release what the adapter holds (models, connections). The host's transport is shared."""
        return None
