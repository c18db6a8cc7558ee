"""The hook specifications of toolwire: every extension point of the host.

Plugins implement these with ``@toolwire.hookimpl``. Hooks that do I/O return awaitables; pluggy
calls hooks synchronously, so a ``wrapper=True`` implementation wraps the awaitable (see
:func:`toolwire.middleware` for the ``async def (call, context, call_next)`` form).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._markers import hookspec

if TYPE_CHECKING:
    from . import Host
    from ._request import OfferRequest
    from .adapters import ProviderAdapter
    from .batch import BatchExecutor
    from .cli._plugin_commands import CliCommand
    from .context import ContextRequest, RequestContext, SummaryRequest
    from .events import Event
    from .loop import RunLoop
    from .messages import ToolCall
    from .tools import FunctionSpec, Tool, ToolContext, ToolResult
    from .untrusted import FilterContext, FilteredText


# -- discovery ---------------------------------------------------------------------------------


@hookspec
def toolwire_tools(settings: Any) -> Iterable[Tool] | None:
    """Register the tools of a plugin.

    Called once per enabled plugin when the host starts; the results of all plugins are collected.
    Tool names are validated, and a name registered by two plugins is refused naming both.

    :param settings: the plugin's own settings, from ``[tools.<plugin>]`` of the config, structured
        into the plugin's settings class when it declares one (``toolwire_settings_class``), else a
        plain dict.
    :returns: an iterable of :class:`toolwire.Tool` (functions decorated with ``@toolwire.tool`` are
        tools), or None.

    **Example**::

        @toolwire.tool
        def shout(text: Annotated[str, "What to shout."]) -> str:
            \"\"\"Repeat text in capitals.\"\"\"
            return text.upper()

        @toolwire.hookimpl
        def toolwire_tools(settings):
            return [shout]
    """


@hookspec
def toolwire_services(settings: Any) -> Mapping[str, Any] | None:
    """Provide named services to the tools of every plugin (a database client, an HTTP client
    with credentials, a store).

    Called once per host, when the host first needs its services (to register its tools or run
    one); the results of all plugins are collected, and a name two plugins provide stays with the
    first, the clash reported naming both. A tool receives a service through an ``Injected[T]``
    parameter, by the parameter's name (or ``Inject("key")``) or else by type; the model never
    sees it. When the host closes, each service is closed, latest first: its ``aclose()`` is
    awaited, or else its ``close()`` is called (and awaited if it returns an awaitable).
    Services given to ``Host.load(services=...)`` win over a plugin's of the same name.

    :param settings: the plugin's own settings, as in ``toolwire_tools``.
    :returns: a mapping of service name to service object, or None.

    **Example**::

        @toolwire.hookimpl
        def toolwire_services(settings):
            return {"db": sqlite3.connect(settings.path)}

        @toolwire.tool
        def count_rows(table: str, db: Injected[sqlite3.Connection]) -> int:
            \"\"\"Count the rows of a table.\"\"\"
            ...
    """


@hookspec(firstresult=True)
def toolwire_settings_class(plugin_name: str) -> type | None:
    """Name the attrs class that a plugin's config section is structured into.

    The host structures ``[tools.<plugin>]`` (or ``[providers.<plugin>]``) with cattrs, refusing
    unknown keys and wrong types with the file, key path, value and what would be valid. Each plugin
    answers only for its own name. Stops at the first non-None result.

    :param plugin_name: the entry-point name of the plugin asking for its settings.
    :returns: an attrs class (all fields with defaults), or None for a plain dict.

    **Example**::

        @attrs.frozen
        class WebSettings:
            private_hosts: tuple[str, ...] = ()

        @toolwire.hookimpl
        def toolwire_settings_class(plugin_name):
            return WebSettings if plugin_name == "web" else None
    """


@hookspec
def toolwire_provider_adapters(settings: Any) -> Iterable[type[ProviderAdapter]] | None:
    """Register provider adapters, keyed by the API name each declares (``adapter.api``).

    The results of all plugins are collected; two adapters for the same API name are refused naming
    both plugins. The host creates the adapter named by ``[provider] adapter`` lazily, at the first
    request.

    :param settings: the plugin's own settings (``[providers.<plugin>]``), as in ``toolwire_tools``.
    :returns: an iterable of :class:`toolwire.adapters.ProviderAdapter` subclasses, or None.

    **Example**::

        @toolwire.hookimpl
        def toolwire_provider_adapters(settings):
            return [MyChatAdapter]      # MyChatAdapter.api == "mychat"
    """


@hookspec
def toolwire_cli_commands() -> Iterable[CliCommand] | None:
    """Add ``toolwire <name> …`` commands to the command line.

    Asked only when ``toolwire`` is given a command that is not built in, with the enabled
    plugins loaded; built-in commands and ``toolwire --help`` never ask. The results of all
    plugins are collected; a name two plugins add is refused for the second, naming it. A
    command's ``run(args, host)`` gets the parsed arguments and the loaded host, which is closed
    after it returns. Keep the implementation cheap: import heavy libraries inside ``run``.

    :returns: an iterable of :class:`toolwire.CliCommand`, or None.

    **Example**::

        async def _hello(args, host):
            print(f"hello {args.who}; {len(host.tools)} tools")
            return 0

        @toolwire.hookimpl
        def toolwire_cli_commands():
            return [toolwire.CliCommand(
                name="hello", help="greet", run=_hello,
                configure=lambda parser: parser.add_argument("who"),
            )]
    """


@hookspec
def toolwire_batch_executors() -> Iterable[type[BatchExecutor]] | None:
    """Add executors that ``toolwire batch --executor NAME`` can run a batch on.

    Asked when a batch starts, with the enabled plugins loaded. The results of all plugins are
    collected, keyed by each class's ``name``; the built-in ``local`` executor is always there,
    and a name already taken is refused for the later plugin, naming it. Each class subclasses
    :class:`toolwire.batch.BatchExecutor` and is built as ``cls(host, plan)``. Keep the
    implementation cheap: import the executor's library inside the class, not at module level.

    :returns: an iterable of :class:`toolwire.batch.BatchExecutor` subclasses, or None.

    **Example**::

        @toolwire.hookimpl
        def toolwire_batch_executors():
            from ._executor import ThreadPoolExecutor
            return [ThreadPoolExecutor]
    """


# -- offer -------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def toolwire_resolve_function(
    tool: Tool, request: OfferRequest
) -> FunctionSpec | Awaitable[FunctionSpec | None] | None:
    """Decide what function a tool offers to one request.

    The built-in implementation (``trylast``) returns the tool's own function. A plugin may word the
    description per request, narrow the schema, or withdraw a ``context`` tool that has nothing to
    offer. A tool whose resolution raises is left out of that round alone, with an event.
    Stops at the first non-None result; a plugin withdraws a tool by returning
    ``toolwire.NOT_OFFERED`` for it (None only means "no opinion").

    :param tool: the candidate tool (already allowed by config and trust).
    :param request: the round being prepared: run id, round, conversation, API, provider trust,
        and the tool the run's tool choice names (``request.chosen_tool``: a plugin that offers
        a tool only when the conversation calls for it should offer that one).
    :returns: a :class:`toolwire.tools.FunctionSpec`, ``toolwire.NOT_OFFERED``, an awaitable of
        either, or None to let later implementations decide.

    **Example**::

        @toolwire.hookimpl
        def toolwire_resolve_function(tool, request):
            if tool.name == "read_web_page" and not _urls_in(request.messages):
                return toolwire.NOT_OFFERED
            return None
    """


@hookspec(firstresult=True)
def toolwire_system_prompt_instructions(
    tool: Tool, request: OfferRequest
) -> str | Awaitable[str | None] | None:
    """Give the system-prompt text of an offered tool for one request.

    The built-in implementation (``trylast``) returns the tool's registered ``instructions``.
    Non-empty instructions of the offered tools are appended to the system prompt in the offer's
    stable order. An implementation that raises costs only that tool's instructions for the
    round, with an event. Stops at the first non-None result; return ``""`` to suppress the
    instructions.

    :param tool: an offered tool.
    :param request: the round being prepared.
    :returns: the instruction text, an awaitable of it, or None to let later implementations decide.

    **Example**::

        @toolwire.hookimpl
        def toolwire_system_prompt_instructions(tool, request):
            if tool.name == "calculator":
                return "Use calculator for any arithmetic; never compute in your head."
            return None
    """


# -- request ----------------------------------------------------------------------------------


@hookspec
def toolwire_request_context(
    request: ContextRequest,
) -> RequestContext | Awaitable[RequestContext | None] | None:
    """Add context passages to one model request (classic retrieval).

    Called once per round, after the round's offer is resolved and before the request is sent;
    the answers of all plugins are collected, each implementation called alone. The text of each
    answer goes before the latest user message's own text, in this request only (the
    conversation is not changed). Its sources become sources of the run, and its
    ``required_trust`` tightens the trust every later provider of the run needs. An
    implementation that raises, answers something else, or answers context that requires more
    trust than the round's provider has, costs only itself, with a ``PluginFailed`` event. The
    usual use: search a user's own documents with the latest user message when the plugin's
    search tool is not in ``request.offered``.

    :param request: the round: run id, round, conversation, offered function names, API, model,
        provider trust, whether tools are native, and the run's services.
    :returns: a :class:`toolwire.context.RequestContext`, an awaitable of one, or None to add
        nothing.

    **Example**::

        @toolwire.hookimpl
        def toolwire_request_context(request):
            if "search_notes" in request.offered or request.query is None:
                return None
            hits = notes.search(request.query)
            return RequestContext(text="\n\n".join(h.text for h in hits),
                                  sources=[Source(h.url, h.title) for h in hits])
    """


@hookspec(firstresult=True)
def toolwire_summarize_conversation(request: SummaryRequest) -> str | Awaitable[str | None] | None:
    """Summarise older turns of a conversation that no longer fits the model's context window.

    Called before a round's request when ``[provider] context_tokens`` is set, the
    conversation would fill more than ``[loop] compact_at`` of it, and clearing old tool
    results was not enough; once per run of whole turns, oldest first, until the conversation
    fits ``[loop] compact_to``. The summary replaces those turns in the conversation from then
    on, as one user message marked as a summary; the run's records keep every call and result.
    Never asked about the system prompt, the last user turn, the model's latest turn or a call
    that waits for its result. The built-in implementation (``trylast``) asks the run's own
    provider, without tools, to write the summary (``request.ask``). An implementation that
    raises or answers no text leaves the turns as they are, with a ``PluginFailed`` event.
    Stops at the first non-None result.

    :param request: the run id and round, the turns to summarise (``request.messages``), the
        run's API and model, and ``ask``, which sends messages to the run's provider.
    :returns: the summary text, an awaitable of it, or None to let later implementations write
        it.

    **Example**::

        @toolwire.hookimpl
        def toolwire_summarize_conversation(request):
            done = [m.name for m in request.messages if isinstance(m, ToolResultMessage)]
            return "Tools called so far: " + ", ".join(done)
    """


# -- execution ---------------------------------------------------------------------------------


@hookspec(firstresult=True)
def toolwire_execute_tool(call: ToolCall, context: ToolContext) -> Awaitable[ToolResult] | None:
    """Run one admitted tool call.

    The built-in implementation (``trylast``) calls the tool's function with the validated
    arguments. ``wrapper=True`` implementations are middleware around the awaitable (approval,
    ledger, timeouts, tracing, sandboxing); write them with :func:`toolwire.middleware`.
    Stops at the first non-None result.

    :param call: the call, with arguments parsed, repaired and validated against the schema.
    :param context: the tool, run and call ids, conversation, settings, progress reporter,
        cancellation and services of this call.
    :returns: an awaitable of :class:`toolwire.ToolResult`, or None to let later ones run.

    **Example**::

        @toolwire.hookimpl(wrapper=True)
        def toolwire_execute_tool(call, context):
            awaitable = yield
            return _log_duration(awaitable, call)
    """


# -- untrusted content -------------------------------------------------------------------------


@hookspec(firstresult=True)
def toolwire_filter_untrusted(
    texts: Sequence[str], context: FilterContext
) -> Sequence[FilteredText] | Awaitable[Sequence[FilteredText]] | None:
    """Neutralise prompt injection in content that came from outside (web pages, search results).

    Called after truncation with every field of one unit of content (for a web page: title,
    description, author, date, body), so one report names the page. Filtering never rejects
    content: it returns the texts changed or unchanged. When no filter can run the text passes and
    the user is warned. The built-in filter (``trylast``) neutralises text that can forge structure
    (role tokens, tool-result envelopes, system-prompt impersonation) and flags injection phrasing.
    Stops at the first non-None result.

    :param texts: the fields of one unit of content, in order.
    :param context: where the content came from (tool, call id, source URL).
    :returns: one :class:`toolwire.untrusted.FilteredText` per input text (same order), an
        awaitable of them (for a classifier that does I/O), or None.

    **Example**::

        @toolwire.hookimpl
        def toolwire_filter_untrusted(texts, context):
            out = []
            for text in texts:
                flagged = ("exfiltration request",) if "send me the api key" in text.lower() else ()
                out.append(FilteredText(text=text, flagged=flagged))
            return out
    """


# -- host --------------------------------------------------------------------------------------


@hookspec
def toolwire_configure(host: Host) -> None:
    """Set up a plugin's per-host state once the host is assembled (like ``pytest_configure``).

    Called once per host, right after :meth:`toolwire.Host.load` registered the enabled plugins.
    A plugin that holds state (an exporter, a connection pool) builds it here from
    ``host.plugin_settings(name)``, registers it as a plugin object of this host with
    ``host.plugin_manager.register(obj, name=...)`` so its hookimpls see only this host's runs,
    and releases it with ``host.on_close(...)``. An implementation that raises is reported as a
    failure of its plugin alone; the host starts without it.

    :param host: the :class:`toolwire.Host` being set up.
    :returns: nothing.

    **Example**::

        class Counter:
            def __init__(self):
                self.events = 0

            @toolwire.hookimpl
            def toolwire_event(self, event):
                self.events += 1

        @toolwire.hookimpl
        def toolwire_configure(host):
            host.plugin_manager.register(Counter(), name="counter")
    """


@hookspec(firstresult=True)
def toolwire_loop(host: Host) -> RunLoop | None:
    """Provide the loop that runs the host's conversations, replacing the built-in one.

    Called for every conversation a surface starts (``toolwire run``, the chats, batch,
    :meth:`toolwire.Host.run`); return a new object implementing
    :class:`toolwire.loop.RunLoop` for it. It reaches the model through
    ``await host.get_adapter()``, so every provider adapter works with it unchanged. The
    built-in :class:`toolwire.loop.ToolCallingLoop` is the default implementation (registered
    ``trylast``); at most one enabled plugin may implement this hook, and the host names both
    when two do. An implementation that raises, or returns something that is not a loop, fails
    the conversation with an error naming its plugin.

    :param host: the :class:`toolwire.Host` whose conversation is starting.
    :returns: the loop, or None to leave it to the next implementation.

    **Example**::

        class PlanFirst(toolwire.loop.ToolCallingLoop):
            async def run(self, prompt_or_messages, **options):
                options.setdefault("system_prompt", "Plan the steps, then call the tools.")
                return await super().run(prompt_or_messages, **options)

        @toolwire.hookimpl
        def toolwire_loop(host):
            return PlanFirst(host)
    """


# -- observation -------------------------------------------------------------------------------


@hookspec
def toolwire_event(event: Event) -> None:
    """Observe a lifecycle event of a run (for rendering, JSONL traces, OpenTelemetry).

    Called for every event, synchronously, in the loop's task: keep it fast and never block. An
    implementation that raises is reported once and does not stop the run. Results are ignored.

    :param event: a :class:`toolwire.events.Event` subclass naming the run, round and call id.
    :returns: nothing.

    **Example**::

        @toolwire.hookimpl
        def toolwire_event(event):
            if event.kind == "tool_started":
                print("running", event.name)
    """


__all__ = [
    "toolwire_batch_executors",
    "toolwire_cli_commands",
    "toolwire_configure",
    "toolwire_event",
    "toolwire_execute_tool",
    "toolwire_filter_untrusted",
    "toolwire_loop",
    "toolwire_provider_adapters",
    "toolwire_request_context",
    "toolwire_resolve_function",
    "toolwire_services",
    "toolwire_settings_class",
    "toolwire_summarize_conversation",
    "toolwire_system_prompt_instructions",
    "toolwire_tools",
]
