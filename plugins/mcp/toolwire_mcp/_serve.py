"""``toolwire mcp serve``: the host's enabled tools served over MCP (stdio or streamable HTTP).

Tools are listed with the schema and description the host offers models, and every call runs
through the host's execution: validation (a refusal is an ``isError`` result with the host's
text), middleware, ``[policy]``, the ledger, the untrusted-content filter, timeouts.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import mcp.types as mt
from mcp.server.lowlevel import Server

import toolwire
from toolwire import Host, SideEffect, Tool, ToolCallingLoop, ToolResult
from toolwire.events import Event

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve", "description": "Run this call?"}
    },
    "required": ["approve"],
}


def parse_listen_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6), on a loopback address only.

    :raises ValueError: naming the value and what is valid.
    """
    host, sep, port_text = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(
            f"--http {value!r}: expected HOST:PORT such as 127.0.0.1:8931 (port 1 to 65535)"
        )
    from toolwire.net import is_loopback

    if not is_loopback(host):
        raise ValueError(
            f"--http {value!r}: toolwire serves MCP on loopback only; use 127.0.0.1, ::1 or "
            "localhost"
        )
    return host, int(port_text)


class _ProgressRelay:
    """Sends the progress a served tool reports to the client that asked for it, as MCP
    progress notifications (only for requests that carry a progress token)."""

    def __init__(self) -> None:
        self.targets: dict[str, tuple[Any, str | int, Any, asyncio.AbstractEventLoop]] = {}
        self._steps: dict[str, itertools.count[int]] = {}
        self._sending: dict[str, set[asyncio.Task[None]]] = {}

    def watch(self, run_id: str, ctx: Any) -> None:
        meta = ctx.meta or {}
        token = meta.get("progress_token", meta.get("progressToken"))
        if isinstance(token, str | int) and not isinstance(token, bool):
            loop = asyncio.get_running_loop()
            self.targets[run_id] = (ctx.session, token, ctx.request_id, loop)
            self._steps[run_id] = itertools.count(1)

    async def finish(self, run_id: str) -> None:
        """Send what the call reported before its result goes out, then stop watching it."""
        if run_id in self.targets:
            await asyncio.sleep(0)  # let progress scheduled from worker threads start
            pending = self._sending.pop(run_id, set())
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        self.targets.pop(run_id, None)
        self._steps.pop(run_id, None)
        self._sending.pop(run_id, None)

    @toolwire.hookimpl
    def toolwire_event(self, event: Event) -> None:
        target = self.targets.get(event.run_id)
        if target is None or event.kind != "tool_progress":
            return
        session, token, request_id, loop = target
        run_id = event.run_id
        fraction = getattr(event, "fraction", None)
        step = next(self._steps[event.run_id])
        progress, total = (fraction * 100, 100.0) if fraction is not None else (float(step), None)
        message = getattr(event, "message", None)

        def send() -> None:
            task = loop.create_task(
                session.send_progress_notification(
                    token, progress, total, message, related_request_id=request_id
                )
            )
            self._sending.setdefault(run_id, set()).add(task)

        # A tool written as a plain function reports progress from a worker thread.
        loop.call_soon_threadsafe(send)


class ToolServer:
    """An MCP server over one host's enabled tools.

    ``approve`` names tools whose calls are approved in advance; any other call that needs
    approval is put to the person through MCP elicitation when the client supports it, and
    refused otherwise.
    """

    def __init__(self, host: Host, *, approve: Iterable[str] = ()) -> None:
        self.host = host
        # Registered before anything is emitted: the host resolves its observers once.
        self._progress = _ProgressRelay()
        host.plugin_manager.register(self._progress, name="toolwire_mcp.progress")
        self.approve = frozenset(approve)
        unknown = sorted(self.approve - set(self.tools()))
        if unknown:
            known = ", ".join(self.tools()) or "none"
            raise ValueError(
                f"--approve names {', '.join(unknown)}, which the host does not serve; "
                f"served tools: {known}"
            )
        self.server: Server[Any] = Server(
            "toolwire",
            version=_version(),
            instructions="Tools of a toolwire host.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    def tools(self) -> dict[str, Tool]:
        """The served tools: those a run on the host's surface may offer (``[tools]``, the
        profile, ``[surfaces.mcp-serve]``), the caller's own (external) tools left out."""
        from toolwire.loop import Selection

        selection = Selection.from_config(self.host.config, None, None)
        return {
            tool.name: tool for tool in selection.candidates(self.host.tools) if not tool.external
        }

    async def _list_tools(
        self, ctx: Any, params: mt.PaginatedRequestParams | None
    ) -> mt.ListToolsResult:
        return mt.ListToolsResult(tools=[mcp_tool(tool) for tool in self.tools().values()])

    async def _call_tool(self, ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        tools = self.tools()
        tool = tools.get(params.name)
        if tool is None:
            known = ", ".join(tools) or "none"
            return _error(f"Unknown tool {params.name!r}; served tools: {known}")
        arguments = dict(params.arguments or {})
        refusal = await self._approval_refusal(ctx, tool, arguments)
        if refusal is not None:
            return _error(refusal)
        run_id = f"mcp_{uuid.uuid4().hex}"
        self._progress.watch(run_id, ctx)
        try:
            result = await ToolCallingLoop(self.host).call(tool.name, arguments, run_id=run_id)
        finally:
            await self._progress.finish(run_id)
        return call_result(result, tool)

    async def _approval_refusal(
        self, ctx: Any, tool: Tool, arguments: Mapping[str, Any]
    ) -> str | None:
        reason = _approval_reason(tool, self.host)
        if reason is None or tool.name in self.approve:
            return None
        session = ctx.session
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return (
                f"Tool {tool.name} needs approval ({reason}); the person running "
                f"`toolwire mcp serve` can approve it with --approve {tool.name}."
            )
        shown = {
            k: ("<redacted>" if k in tool.sensitive_arguments else v) for k, v in arguments.items()
        }
        answer = await session.elicit_form(
            f"Approve a call of {tool.name}? ({reason})\n"
            f"Arguments: {json.dumps(shown, ensure_ascii=False)}",
            APPROVAL_SCHEMA,
            related_request_id=ctx.request_id,
        )
        if answer.action == "accept" and (answer.content or {}).get("approve") is True:
            return None
        return f"Tool {tool.name} needs approval ({reason}), and the person did not approve it."

    # -- running -------------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        """Serve over this process's stdin and stdout until the client closes them."""
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    async def serve_http(self, host: str, port: int) -> None:
        """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until interrupted."""
        import uvicorn
        from mcp.server.transport_security import TransportSecuritySettings

        from toolwire.net import loopback_authorities, loopback_origins

        # The web chat's guard against DNS rebinding, for every loopback address: only the
        # Host names and Origins of the address bound are answered.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=sorted(loopback_authorities(host, port)),
            allowed_origins=sorted(loopback_origins(host, port)),
        )
        app = self.server.streamable_http_app(host=host, transport_security=security)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        shown = f"[{host}]" if ":" in host else host
        print(
            f"toolwire: serving {len(self.tools())} tool(s) over MCP at http://{shown}:{port}/mcp",
            file=sys.stderr,
            flush=True,
        )
        await server.serve()


def mcp_tool(tool: Tool) -> mt.Tool:
    """The MCP listing of a tool: the offer the host makes models, and its policy as hints."""
    spec = tool.function_spec()
    effects = tool.policy.side_effects
    annotations = mt.ToolAnnotations(
        read_only_hint=tool.policy.read_only,
        destructive_hint=None if effects is None else SideEffect.DESTRUCTIVE in effects,
        idempotent_hint=tool.policy.idempotent,
        open_world_hint=tool.returns_untrusted_content
        or bool(effects and SideEffect.NETWORK in effects),
    )
    return mt.Tool(
        name=spec.name,
        title=tool.title,
        description=spec.description,
        input_schema=dict(spec.parameters),
        output_schema=output_schema(tool),
        annotations=annotations,
    )


def output_schema(tool: Tool) -> dict[str, Any] | None:
    """The ``outputSchema`` of a tool whose function returns typed data: the schema of its
    return type when that is an object (an attrs class, a TypedDict, ``dict[str, T]``), else
    ``{"result": …}`` around it (a list, a number); None for text, nothing, or no function."""
    return _output(tool)[0]


def _output(tool: Tool) -> tuple[dict[str, Any] | None, bool]:
    """The tool's output schema, and whether it wraps the data as ``{"result": …}``."""
    import typing

    from toolwire.tools import ToolDefinitionError, schema_for

    function = tool.__wrapped__
    if function is None:
        return None, False
    try:
        returned = typing.get_type_hints(function).get("return")
    except Exception:  # a hint that does not resolve: no schema rather than a wrong one
        return None, False
    if returned is None or returned in (str, type(None), Any, ToolResult):
        return None, False
    try:
        schema = schema_for(returned)
    except (ToolDefinitionError, TypeError, ValueError):
        return None, False
    if schema.get("type") == "object":
        return schema, False
    if not schema or schema.get("type") == "string":
        return None, False
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}, True


def call_result(result: ToolResult, tool: Tool | None = None) -> mt.CallToolResult:
    """The MCP result of a host result: the text the model would read, the JSON data as
    structured content (as ``{"result": …}`` when the tool's output schema wraps it), and
    ``isError`` for every failure. A tool that declares an output schema but whose result
    has no data to send (cut to the result cap, say) answers with an error saying so: its
    clients are promised structured content."""
    data = result.data
    structured: dict[str, Any] | None = data if isinstance(data, dict) else None
    schema, wraps = _output(tool) if tool is not None else (None, False)
    if result.is_ok and data is not None and wraps:
        structured = {"result": data}
    text = result.model_text()
    failed = not result.is_ok
    if schema is not None and not failed and structured is None:
        failed = True
        text += "\n[No structured result to send: the tool's data did not come back whole.]"
    return mt.CallToolResult(
        content=[mt.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=failed,
    )


def _error(message: str) -> mt.CallToolResult:
    return mt.CallToolResult(content=[mt.TextContent(type="text", text=message)], is_error=True)


def _approval_reason(tool: Tool, host: Host) -> str | None:
    # The host's own rule (tool policy, [policy] require_approval, the surface), as runs apply it.
    return host.pipeline.approval_reason(tool)


def _version() -> str:
    from toolwire import __version__

    return __version__
