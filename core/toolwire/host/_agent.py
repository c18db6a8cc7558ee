"""``agent_tool``: a whole run, with its own provider, tools and limits, as one tool of another.

The tool takes one argument, ``task``. Each call starts a run of a host built from the tool's
own config (created on the first call, closed with the host that called it), streams its events
into the calling run under the call (each with ``parent`` naming the call, so a terminal or web
chat shows them nested in the call's card), and answers with the run's final text, its typed
output as data where it has one. What the run spent at providers is on the result
(``usage``, ``cost``), and the calling run adds it to its own.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..events import ParentCall
from ..tools._context import ToolContext
from ..tools._model import Tool, ToolPolicy
from ..tools._result import ToolResult

if TYPE_CHECKING:
    from ..config import Config
    from ..loop import Run
    from ._host import Host

__all__ = ["agent_tool"]


@attrs.frozen(kw_only=True)
class _Agent:
    """How to build the run's host, and what to run it with."""

    key: object
    config: Any
    tools: tuple[Tool, ...]
    plugins: tuple[object, ...]
    system_prompt: str | None
    output: Any

    def host_for(self, parent: Host | None) -> Host:
        """The run's host for calls of ``parent``: made once and closed with it."""
        stash: dict[Any, Any] = parent.stash if parent is not None else {}
        host: Host | None = stash.get(self.key)
        if host is None:
            host = self._make(parent)
            stash[self.key] = host
            if parent is not None:
                parent.on_close(host.aclose)
        return host

    def _make(self, parent: Host | None) -> Host:
        from ..config import Config, config_from_dict
        from ._host import Host

        config = self.config
        if config is None:
            if parent is None:
                raise ValueError("an agent tool without a config runs with its caller's host's")
            config = parent.config
        elif isinstance(config, Mapping):
            config = config_from_dict(config)
        source = config if isinstance(config, Config) else os.fspath(config)
        host = Host.load(source, plugins=self.plugins)
        for tool in self.tools:
            if tool.name not in host.tools:
                host.add_tool(tool)
        return host

    async def __call__(self, task: str, context: ToolContext) -> ToolResult:
        host = self.host_for(context.services.get("host"))
        emit: Callable[[Any], None] | None = context.services.get("emit")
        parent = ParentCall(run_id=context.run_id, call_id=context.call_id, round=context.round)
        options: dict[str, Any] = {
            "run_id": f"{context.run_id}.{context.call_id}",
            "system_prompt": self.system_prompt,
            "cancel": context.cancelled,
        }
        if self.tools:
            options["tools"] = [tool.name for tool in self.tools]
        if self.output is not None:
            options["output"] = self.output

        def forward(event: Any) -> None:
            if emit is not None:
                emit(event if event.parent is not None else attrs.evolve(event, parent=parent))

        stream = host.stream(task, **options)
        try:
            async for event in stream:
                forward(event)
        except asyncio.CancelledError:
            # The calling run was cancelled: the sub-run is too, and its last events (its
            # calls answered as cancelled, its end) still reach the call's card.
            await stream.aclose()
            async for event in stream:
                forward(event)
            raise
        finally:
            await stream.aclose()
        run = stream.run
        if run is None:  # the stream ended without a run: the run task failed to start
            return ToolResult.error("The sub-run did not start.")
        return _result_of(run)


def _result_of(run: Run) -> ToolResult:
    """What the calling run's model is told of a sub-run, with what it spent."""
    spent: dict[str, Any] = {"usage": run.usage, "cost": getattr(run, "cost", None)}
    metadata = {"run_id": run.id, "stop_reason": run.stop_reason}
    if run.stop_reason == "answered":
        output = getattr(run, "output", None)
        if output is not None:
            from ..tools._convert import unstructure_result

            data = unstructure_result(output)
            return ToolResult.ok(run.text, data=data, metadata=metadata, **spent)
        return ToolResult.ok(run.text, metadata=metadata, **spent)
    detail = run.detail or run.stop_reason
    if run.stop_reason == "deferred":
        waiting = ", ".join(f"{d.tool} ({d.reason})" for d in run.deferred)
        detail = f"calls of the sub-run wait for a decision nobody can give here: {waiting}"
    return ToolResult.error(
        f"The sub-run stopped without an answer ({run.stop_reason}): {detail}",
        metadata=metadata,
        **spent,
    )


def agent_tool(
    name: str,
    description: str,
    *,
    config: Config | str | os.PathLike[str] | Mapping[str, Any] | None = None,
    tools: Sequence[Tool | Callable[..., Any]] = (),
    plugins: Iterable[object] = (),
    system_prompt: str | None = None,
    output: Any = None,
    policy: ToolPolicy | None = None,
) -> Tool:
    """A tool that runs a whole conversation (a sub-run) for each call, and answers with it.

    The model calls it with one argument, ``task``: what the sub-run's model is asked. The
    sub-run has its own provider, tools and limits: those of ``config`` (a :class:`Config`, a
    config file, or a table as ``toolwire.toml`` would hold it; None: the calling host's config),
    with ``tools`` added to its host and offered alone when given. Its events are delivered into
    the calling run under the call (``Event.parent``); its usage and cost are added to the
    calling run's. A sub-run that stops without an answer (a limit, an error, calls waiting for
    an approval nobody is there to give) answers the call with an error saying why.

    :param name: the tool's name (ASCII snake_case).
    :param description: what the sub-run does, for the calling model.
    :param config: the sub-run's configuration.
    :param tools: tools (or typed functions) the sub-run may call.
    :param plugins: plugin objects the sub-run's host registers besides the enabled ones.
    :param system_prompt: the sub-run's base system prompt.
    :param output: the type (or JSON Schema) of the sub-run's final answer; its value is the
        call's ``data``.
    :param policy: the tool's policy in the calling run (side effects default to those of
        ``tools``, unclassified without them).
    :raises ToolDefinitionError: for a name providers refuse.
    """
    made = tuple(t if isinstance(t, Tool) else Tool.from_function(t) for t in tools)
    if policy is None:
        effects = [t.policy.side_effects for t in made]
        if made and all(e is not None for e in effects):
            policy = ToolPolicy(side_effects=frozenset().union(*[e for e in effects if e]))
    agent = _Agent(
        key=object(),
        config=config,
        tools=made,
        plugins=tuple(plugins),
        system_prompt=system_prompt,
        output=output,
    )

    async def run_agent(task: str, context: ToolContext) -> ToolResult:
        return await agent(task, context)

    return Tool.from_function(
        run_agent,
        name=name,
        description=description,
        parameter_descriptions={"task": "What to do, said in full: the sub-run sees nothing else."},
        policy=policy,
    )
