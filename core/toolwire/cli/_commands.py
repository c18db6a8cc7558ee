"""The ``toolwire`` command line: plugins, tools, run, config, doctor, init.

Imports stay lazy: ``--help``, ``plugins`` and ``tools list`` never import aiohttp, a provider
SDK or a plugin that is not enabled.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .._version import __version__
from ._text import inert

if TYPE_CHECKING:
    from .._surface import Surface
    from ..config import Config
    from ..host._host import Host

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a command whose reader left

WIRE_PLUGINS = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "gemini": "gemini",
}
"""The plugin whose adapter renders each ``--wire`` API of the project's own plugins
(distribution ``toolwire-<plugin>``), to name it when it is not enabled."""


def _terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it: ``$COLUMNS`` when it is a
    positive number, else the width of the terminal on standard output, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, with the terminal measured without ``shutil``.

    argparse makes a formatter for every argument it is given, to check its metavar, and the
    formatter measures the terminal with ``shutil``, whose import (with its compression modules)
    took a few milliseconds of every start. The width is the same: the terminal's, less two.
    """

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


class _ArgumentParser(argparse.ArgumentParser):
    """An argument parser whose help formatter is ``_HelpFormatter``; its sub-parsers are of
    this class too (argparse makes them of the class of the parser they belong to)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser.

    Given the arguments, it holds only the sub-parser of the built-in command they name (and of
    its action, for ``tools``): argparse does work for every parser and argument at every start.
    With no command, an option first or a word that is no built-in command, it holds them all,
    for the help and the error.
    """
    parser = _ArgumentParser(
        prog="toolwire",
        description="A plugin-based host for LLM tool calling.",
    )
    parser.add_argument("--version", action="version", version=f"toolwire {__version__}")
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="config file (default: $TOOLWIRE_CONFIG or ./toolwire.toml)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="also write log records (a failing tool's traceback) to stderr; they always go to "
        "the log file ($XDG_STATE_HOME/toolwire/toolwire.log)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    words = _command_words(sys.argv[1:] if argv is None else argv)
    wanted = words[0] if words else None
    for name, add in _COMMANDS:
        if wanted not in _COMMAND_NAMES:
            add(sub, None)
        elif name == wanted:
            add(sub, words[1] if len(words) > 1 else None)
    return parser


def _command_words(args: Sequence[str]) -> list[str]:
    """The words ``args`` start with after the ``--config`` option (the command, its action),
    up to the first option."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--config" and index + 1 < len(args):
            index += 2
        elif arg.startswith("--config=") or arg == "--verbose":
            index += 1
        else:
            break
    words: list[str] = []
    for arg in args[index:]:
        if arg.startswith("-"):
            break
        words.append(arg)
    return words


def _global_options(args: Sequence[str]) -> list[str]:
    """The options before the command word (``--config PATH``, ``--verbose``)."""
    words = _command_words(args)
    end = args.index(words[0]) if words else len(args)
    return list(args[:end])


def _add_plugins(sub: Any, action: str | None) -> None:
    p = sub.add_parser("plugins", help="list installed plugins: enabled, loaded, failures")
    p.add_argument("--json", action="store_true", help="print JSON")


def _add_tools(sub: Any, action: str | None) -> None:
    tools = sub.add_parser("tools", help="list, show and call tools")
    tools_sub = tools.add_subparsers(dest="tools_command", metavar="ACTION")
    for name, add in _TOOLS_ACTIONS:
        if action not in _TOOLS_ACTION_NAMES or name == action:
            add(tools_sub)


def _add_surface_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--surface",
        metavar="NAME",
        help="as offered on this surface: run, chat, web, batch or mcp-serve ([surfaces.NAME])",
    )


def _add_tools_list(tools_sub: Any) -> None:
    p = tools_sub.add_parser("list", help="the tools of the enabled plugins")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--locale", help="the language of titles and descriptions ([i18n])")
    _add_surface_option(p)


def _add_tools_why(tools_sub: Any) -> None:
    p = tools_sub.add_parser("why", help="why a run would not offer a tool (the first reason)")
    p.add_argument("name")
    p.add_argument("--profile", help="the run's profile (default: [tools] profile)")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_surface_option(p)


def _add_tools_show(tools_sub: Any) -> None:
    p = tools_sub.add_parser("show", help="a tool exactly as a provider receives it")
    p.add_argument("name")
    p.add_argument("--locale", help="the language of the display texts ([i18n])")
    p.add_argument(
        "--wire",
        metavar="API",
        help="render for this API: an adapter of an enabled plugin (openai-chat, gemini, …) or "
        "prompted (default: canonical JSON)",
    )
    p.add_argument(
        "--dialect",
        choices=("json", "xml", "ptype", "python", "typescript"),
        help="prompted dialect (with --wire prompted; default: the tool's from the config)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")


def _add_tools_call(tools_sub: Any) -> None:
    p = tools_sub.add_parser("call", help="run one tool with JSON arguments, no model")
    p.add_argument("name")
    p.add_argument("--args", default="{}", metavar="JSON", help="the arguments as a JSON object")
    p.add_argument("--json", action="store_true", help="print the result object as JSON")


_TOOLS_ACTIONS: tuple[tuple[str, Any], ...] = (
    ("list", _add_tools_list),
    ("why", _add_tools_why),
    ("show", _add_tools_show),
    ("call", _add_tools_call),
)
_TOOLS_ACTION_NAMES = frozenset(name for name, _ in _TOOLS_ACTIONS)


def _add_run(sub: Any, action: str | None) -> None:
    p = sub.add_parser("run", help="run one conversation with the configured provider")
    p.add_argument("prompt")
    p.add_argument("--json", action="store_true", help="print the run as JSON")
    p.add_argument(
        "--provider", metavar="NAME", help="use [provider.NAME] of the config instead of [provider]"
    )
    p.add_argument("-m", "--model", help="the model to ask (instead of [provider] model)")
    p.add_argument("--system", metavar="TEXT", help="the system prompt of this run")
    p.add_argument(
        "-T",
        "--tool",
        dest="tools",
        action="append",
        metavar="TOOL",
        help="offer this tool (repeatable; instead of [tools] enable)",
    )
    p.add_argument(
        "--tool-choice",
        metavar="CHOICE",
        help="auto, none, required, or a tool's name (for the first round)",
    )
    p.add_argument(
        "-o",
        "--option",
        dest="options",
        action="append",
        metavar="KEY=VALUE",
        help="a [provider] key (temperature=0.2, max_tokens=200) or a field of the request "
        "body (seed=7); VALUE is read as JSON when it is JSON (repeatable)",
    )
    p.add_argument(
        "--output-schema",
        metavar="FILE",
        help="a JSON Schema file the final answer must match (instead of [run] output_schema); "
        "--json prints the answer as output",
    )
    p.add_argument(
        "--show-wire",
        action="store_true",
        help="print every provider request body to stderr (API key and sensitive arguments "
        "redacted)",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument("--approve-all", action="store_true", help="approve every deferred call")
    group.add_argument("--deny-all", action="store_true", help="deny every deferred call")


def _add_chat(sub: Any, action: str | None) -> None:
    p = sub.add_parser("chat", help="converse with the configured provider, turn after turn")
    p.add_argument(
        "--continue",
        dest="continue_id",
        nargs="?",
        const="",
        metavar="ID",
        help="continue the last conversation, or the one with this id",
    )
    p.add_argument("--list", action="store_true", help="list the saved conversations")
    p.add_argument("--expanded", action="store_true", help="show every argument and result in full")


def _add_batch(sub: Any, action: str | None) -> None:
    from ._batch import add_batch_parser

    add_batch_parser(sub)


def _add_config(sub: Any, action: str | None) -> None:
    config = sub.add_parser("config", help="the effective config and where each value came from")
    config_sub = config.add_subparsers(dest="config_command", metavar="ACTION")
    p = config_sub.add_parser("show", help="every setting, its value and the file it came from")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = config_sub.add_parser("reference", help="every key: its type, default and meaning")
    p.add_argument(
        "--update",
        metavar="FILE",
        help="rewrite the tables between config-reference markers in a Markdown FILE",
    )


def _add_doctor(sub: Any, action: str | None) -> None:
    p = sub.add_parser("doctor", help="check the config, the plugins and every tool")
    p.add_argument("--json", action="store_true", help="print JSON")


def _add_init(sub: Any, action: str | None) -> None:
    p = sub.add_parser("init", help="write a toolwire.toml enabling the installed plugins")
    p.add_argument(
        "--path", default="toolwire.toml", help="where to write (default: ./toolwire.toml)"
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing file")


# The built-in commands in the order the help lists them, each with what adds its sub-parser.
_COMMANDS: tuple[tuple[str, Any], ...] = (
    ("plugins", _add_plugins),
    ("tools", _add_tools),
    ("run", _add_run),
    ("chat", _add_chat),
    ("batch", _add_batch),
    ("config", _add_config),
    ("doctor", _add_doctor),
    ("init", _add_init),
)
_COMMAND_NAMES = frozenset(name for name, _ in _COMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolwire`` console script; returns the exit code.

    Output closed early (``toolwire tools list | head -1``) ends the command quietly with
    :data:`EXIT_BROKEN_PIPE`, as a command stopped by ``SIGPIPE`` ends, never with a traceback.
    """
    try:
        try:
            return _command(argv)
        finally:
            sys.stdout.flush()  # what is still buffered fails here, not at interpreter exit
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE


def _discard_stdout() -> None:
    """Send the rest of stdout to ``os.devnull``: the reader is gone, and what is still buffered
    would fail again when the interpreter flushes it at exit."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a test's capture): nothing will flush it to a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _command(argv: Sequence[str] | None) -> int:
    from ._logging import configure_logging

    given = sys.argv[1:] if argv is None else argv
    configure_logging(verbose="--verbose" in _global_options(given), err=sys.stderr)
    parser = _parser(argv)
    words = _command_words(given)
    if not words or words[0] not in _COMMAND_NAMES:
        from ._plugin_commands import run_plugin_command

        code = run_plugin_command(parser, argv)
        if code is not None:
            return code
    args = parser.parse_args(argv)
    out, err = sys.stdout, sys.stderr
    if args.command is None:
        parser.print_help(out)
        return EXIT_OK
    if args.command == "config" and args.config_command is None:
        parser.parse_args([*(argv or sys.argv[1:]), "--help"])
    if args.command == "tools" and args.tools_command is None:
        parser.parse_args([*(argv or sys.argv[1:]), "--help"])
    if args.command == "init":
        return _init(args, out, err)
    from ..config import ConfigError

    try:
        if args.command == "plugins":
            return _plugins(args, out, err)
        if args.command == "tools":
            return _tools(args, out, err)
        if args.command == "run":
            return _run(args, out, err)
        if args.command == "config" and args.config_command == "reference":
            return _config_reference(args, out, err)
        if args.command == "config":
            return _config_show(args, out)
        if args.command == "doctor":
            return _doctor(args, out, err)
        if args.command == "chat":
            return _chat(args, out, err)
        if args.command == "batch":
            from ._batch import run_batch_command

            return run_batch_command(args, out, err)
    except ConfigError as exc:
        print(f"toolwire: config error: {exc}", file=err)
        return EXIT_USAGE
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # pragma: no cover - parser.error exits


def _load(args: argparse.Namespace, surface: Surface | None = None) -> Host:
    from ..host._host import Host

    return Host.load(args.config, surface=surface)


def _print_json(data: Any, out: TextIO) -> None:
    out.write(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    out.write("\n")


# -- config -----------------------------------------------------------------------------------


def _config_show(args: argparse.Namespace, out: TextIO) -> int:
    """``toolwire config show``: the merged config, one setting a line with its origin."""
    from ..config import load_config
    from ..config._show import effective_settings

    config = load_config(args.config)
    settings = effective_settings(config)
    if args.json:
        _print_json(
            {
                "layers": list(config.layers),
                "locked": {key[2:]: file for key, file in sorted(config.locked.items())},
                "settings": [
                    {"key": key, "value": value, "source": where} for key, value, where in settings
                ],
            },
            out,
        )
        return EXIT_OK
    out.write("# layers, first to last: " + (", ".join(config.layers) or "none") + "\n")
    for key, file in sorted(config.locked.items()):
        out.write(f"# locked: {key[2:]} (by {file})\n")
    for key, value, where in settings:
        shown = json.dumps(value, ensure_ascii=False, default=str)
        out.write(f"{key} = {shown}  # {where}\n")
    return EXIT_OK


def _config_reference(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``toolwire config reference``: the table of every key, rendered from its declaration."""
    from ..config._reference import reference, update_document

    if args.update is None:
        out.write(reference())
        return EXIT_OK
    path = Path(args.update)
    try:
        text = path.read_text(encoding="utf-8")
        updated = update_document(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        err.write(f"toolwire: {path}: {exc}\n")
        return EXIT_FAILED
    if updated != text:
        path.write_text(updated, encoding="utf-8")
    out.write(f"{path}: {'updated' if updated != text else 'already up to date'}\n")
    return EXIT_OK


# -- plugins -----------------------------------------------------------------------------------


def _plugins(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    host = _load(args)
    infos = host.plugins
    if args.json:
        _print_json([p.to_json() for p in infos], out)
        return EXIT_OK
    if not infos:
        out.write("No toolwire plugins are installed.\n")
        return EXIT_OK
    for info in infos:
        state = "enabled" if info.enabled else "disabled"
        if info.enabled:
            state += ", loaded" if info.loaded else ", NOT loaded"
        dist = f"{info.distribution} {info.version}" if info.distribution else "registered directly"
        out.write(inert(f"{info.name:<16} {dist:<32} {state}", one_line=True) + "\n")
        if info.error:
            out.write(f"  error: {inert(info.error)}\n")
    return EXIT_OK


# -- tools -------------------------------------------------------------------------------------


def _tools(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .._surface import Surface

    surface: Surface | None = None
    if getattr(args, "surface", None) is not None:
        try:
            surface = Surface.of(args.surface)
        except ValueError as exc:
            print(f"toolwire: --surface: {exc}", file=err)
            return EXIT_USAGE
    host = _load(args, surface)
    registered = host.tools  # collected now: registration failures are reported before the listing
    _report_failures(host, err)
    if args.tools_command == "list":
        tools = list(registered.values())
        reasons = _listed_reasons(host, tools)
        if args.json:
            rows = [
                {
                    "name": t.name,
                    "plugin": t.plugin,
                    "description": t.description,
                    "parameters": t.parameters,
                    "offered": reasons[t.name] is None,
                    "not_offered": reasons[t.name],
                }
                for t in tools
            ]
            _print_json(rows, out)
        elif not tools:
            out.write("No tools: enable a tool plugin in toolwire.toml ([plugins] enable).\n")
        else:
            width = max(len(t.name) for t in tools)
            for t in tools:
                text = host.tool_display(t, getattr(args, "locale", None)).description
                summary = text.splitlines()[0] if text else ""
                reason = reasons[t.name]
                offered = "offered" if reason is None else "not offered"
                line = f"{t.name:<{width}}  [{t.plugin}]  {offered:<11}  {summary}"
                line = f"{line}  ({reason})" if reason else line
                out.write(inert(line, one_line=True) + "\n")
        return EXIT_OK
    if args.tools_command == "why":
        reason = _why_not_offered(host, [args.name], profile=args.profile)[args.name]
        if args.json:
            _print_json({"name": args.name, "offered": reason is None, "reason": reason}, out)
        else:
            line = f"{args.name} is offered" if reason is None else f"{args.name}: {reason}"
            out.write(inert(line) + "\n")
        return EXIT_OK if reason is None or args.name in registered else EXIT_FAILED
    tool = registered.get(args.name)
    if tool is None:
        known = ", ".join(registered) or "none"
        print(inert(f"toolwire: no tool named {args.name!r}; tools: {known}"), file=err)
        return EXIT_FAILED
    if args.tools_command == "show":
        return _tools_show(host, tool, args, out, err)
    return _tools_call(host, tool, args, out, err)


def _listed_reasons(host: Host, tools: list[Any]) -> dict[str, str | None]:
    """The first reason the offer leaves each tool out, from the checks that need no provider
    and no conversation (the selection, then trust): listing starts no event loop and no
    adapter. A context tool that passes them is offered when its resolver answers, which
    ``toolwire tools why`` asks."""
    from .._selection import Selection, first_reason
    from .._trust import levels_in_use

    try:
        selection = Selection.from_config(host.config, None, None, host.tools)
    except ValueError as exc:  # an undefined [tools] profile: no tool can be offered
        return {t.name: str(exc) for t in tools}
    with levels_in_use(host.config.trust.levels):
        trust = host.config.provider.trust_level
        return {t.name: first_reason(selection, t, trust, len(t.name), "") for t in tools}


def _why_not_offered(
    host: Host, names: list[str], profile: str | None = None
) -> dict[str, str | None]:
    """``Host.why_not_offered`` for each name, in one event loop (the host closed after)."""
    import asyncio

    async def reasons() -> dict[str, str | None]:
        try:
            return {name: await host.why_not_offered(name, profile=profile) for name in names}
        except ValueError as exc:  # an undefined profile: no tool can be offered
            return dict.fromkeys(names, str(exc))
        finally:
            await host.aclose()

    return asyncio.run(reasons())


def _tools_show(host: Host, tool: Any, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    spec = tool.function_spec()
    if args.wire is None:
        data: Any = {
            "name": spec.name,
            "title": tool.title,
            "icon": tool.icon,
            "description": spec.description,
            "parameters": spec.parameters,
            "strict": spec.strict,
            "plugin": tool.plugin,
        }
        if tool.schema_notes:
            data["schema_notes"] = list(tool.schema_notes)
        display = host.tool_display(tool, getattr(args, "locale", None))
        if display.locale is not None:
            data["display"] = {
                "locale": display.locale,
                "title": display.title,
                "description": display.description,
            }
        _print_json(data, out)
        return EXIT_OK
    if args.wire == "prompted":
        from ..prompted import render_prompted_tools

        # As a run sends it: serial execution (`[loop] concurrency = 1`) asks for one call a reply.
        provider = host.config.provider
        text = render_prompted_tools(
            (spec,),
            args.dialect or provider.tool_dialects.get(spec.name, provider.tool_dialect),
            several_calls=host.config.loop.concurrency > 1,
        )
        if args.json:
            _print_json({"wire": "prompted", "text": text}, out)
        else:
            out.write(text if text.endswith("\n") else text + "\n")
        return EXIT_OK
    from ..host._host import HostError

    if args.wire not in host.adapter_classes():
        hint = _wire_plugin_hint(host, args.wire)
        print(
            f"toolwire: cannot render for {args.wire}: no provider adapter named "
            f"{args.wire!r} is registered; {hint}",
            file=err,
        )
        return EXIT_FAILED
    try:
        adapter = host.create_adapter(args.wire)
    except HostError as exc:
        print(f"toolwire: cannot render for {args.wire}: {exc}", file=err)
        return EXIT_FAILED
    from ..adapters import ProviderError

    inner = getattr(adapter, "inner", adapter)
    try:
        rendered = inner.render_tools((spec,))
        notes = inner.render_notes((spec,))
    except ProviderError as exc:  # the API cannot take this tool at all
        print(f"toolwire: {args.wire} cannot receive the tool {spec.name!r}: {exc}", file=err)
        return EXIT_FAILED
    _print_json(rendered, out)
    for note in (*notes, *tool.schema_notes):
        err.write(f"note: {inert(note)}\n")  # stdout stays the exact body; notes are for people
    return EXIT_OK


def _wire_plugin_hint(host: Host, api: str) -> str:
    """What to do for ``--wire api`` when no enabled plugin registers its adapter."""
    plugin = WIRE_PLUGINS.get(api)
    if plugin is None:
        known = ", ".join(sorted((*host.adapter_classes(), "prompted")))
        return f"the APIs this host can render for: {known}"
    info = host.plugin_info(plugin)
    if info is None:
        return (
            f"its adapter comes with the plugin {plugin!r}, which is not installed: install "
            f"toolwire-{plugin} (./plugins/{plugin} in a clone of the repository) and add "
            f'"{plugin}" to [plugins] enable'
        )
    if not info.enabled:
        return (
            f"its adapter comes with the plugin {plugin!r} ({info.distribution} "
            f'{info.version}), which is installed but not enabled: add "{plugin}" to [plugins] '
            f"enable (or set TOOLWIRE_PLUGINS={plugin} for one command)"
        )
    return (
        f"its adapter comes with the plugin {plugin!r}, which is enabled but registered no "
        f"adapter named {api!r}: {info.error or 'see toolwire plugins'}"
    )


def _tools_call(host: Host, tool: Any, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        print(f"toolwire: --args is not valid JSON: {exc}", file=err)
        return EXIT_USAGE
    if not isinstance(arguments, dict):
        print(f"toolwire: --args must be a JSON object, got {type(arguments).__name__}", file=err)
        return EXIT_USAGE
    import asyncio

    from ..loop import call_tool
    from ..loop._codec import result_to_json

    async def go() -> Any:
        try:
            return await call_tool(host, tool.name, arguments)
        finally:
            await host.aclose()

    result = asyncio.run(go())
    if args.json:
        _print_json(result_to_json(result), out)
    else:
        text = inert(result.model_text())
        stream = out if result.is_ok else err
        if not result.is_ok:
            stream.write(f"{result.status.value}: ")
        stream.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK if result.is_ok else EXIT_FAILED


def _report_failures(host: Host, err: TextIO) -> None:
    for info in host.plugins:
        if info.enabled and info.error:
            print(inert(f"toolwire: plugin {info.describe()} failed: {info.error}"), file=err)


def _report_notice(host: Host, err: TextIO) -> None:
    """Say so when the host's surface offers no tool because the config names none."""
    notice = host.offer_notice
    if notice is not None:
        print(notice, file=err)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# -- run ---------------------------------------------------------------------------------------


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .._defaults.policy import approved_in_advance
    from .._surface import Surface
    from ..config import load_config
    from ..host._host import Host

    config = run_config(load_config(args.config), args)
    try:
        options = run_options(args)
    except ValueError as exc:
        err.write(f"toolwire: {exc}\n")
        return 2
    plugins: list[object] = []
    if args.show_wire:
        from ._wire import WirePrinter, with_request_bodies

        config = with_request_bodies(config)
        plugins.append(WirePrinter(err))
    if args.approve_all:
        config = approved_in_advance(config)
    # On a terminal a person answers; piped or scripted, nobody does.
    surface = Surface(name="run", interactive=_is_terminal(sys.stdin))
    host = Host.load(config, plugins=plugins, surface=surface)
    _report_failures(host, err)
    _report_notice(host, err)
    from ._render import run_cli

    return run_cli(
        host,
        args.prompt,
        json_output=args.json,
        approve_all=args.approve_all,
        deny_all=args.deny_all,
        stdin=sys.stdin,
        stdout=out,
        options=options,
    )


def run_config(config: Config, args: argparse.Namespace) -> Config:
    """The config of one ``toolwire run``: ``--provider`` picks a ``[provider.NAME]`` block,
    then ``-m`` and each ``-o KEY=VALUE`` change it, checked as the file's values are.

    :raises ConfigError: naming the option, its value and what would be valid.
    """
    import attrs

    from ..config import ConfigError, ProviderConfig, structure_section
    from ..config._provider import check_provider

    if args.provider is not None:
        config = config.with_provider(args.provider)
    provider = config.provider
    if args.model is not None:
        provider = attrs.evolve(provider, model=args.model)
    fields = attrs.fields_dict(ProviderConfig)
    for option in args.options or ():
        key, sep, text = option.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"-o {option!r}: expected KEY=VALUE, such as temperature=0.2")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text  # a plain word is a string
        if key in fields and key not in ("options", "tool_dialects", "provider_tools"):
            given = structure_section({key: value}, ProviderConfig, file="-o", path="$.provider")
            provider = attrs.evolve(provider, **{key: getattr(given, key)})
        else:
            provider = attrs.evolve(provider, options={**provider.options, key: value})
    check_provider(provider, "$.provider", "toolwire run -o/-m")
    return attrs.evolve(config, provider=provider)


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The run options ``--system``, ``-T``, ``--tool-choice`` and ``--output-schema`` give
    (none when absent).

    :raises ValueError: for an output schema file that cannot be read or is no JSON object.
    """
    options: dict[str, Any] = {}
    if getattr(args, "output_schema", None) is not None:
        from ..output import read_schema_file

        options["output"] = read_schema_file(args.output_schema, where="--output-schema")
    if args.system is not None:
        options["system_prompt"] = args.system
    if args.tools:
        options["tools"] = list(dict.fromkeys(args.tools))
    if args.tool_choice is not None:
        options["tool_choice"] = args.tool_choice
    return options


def _chat(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..host._host import Host

    host = Host.load(args.config, surface="chat")
    _report_failures(host, err)
    from ._chat import run_chat

    return run_chat(
        host,
        continue_id=args.continue_id,
        list_only=args.list,
        expanded=args.expanded,
        stdin=sys.stdin,
        stdout=out,
        stderr=err,
    )


# -- doctor ------------------------------------------------------------------------------------


def _doctor(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..tools import lint_tool
    from ._doctor import provider_problems, withdrawn_tools

    host = _load(args)
    tools = host.tools
    problems = provider_problems(host)
    withdrawn = withdrawn_tools(host)
    report: dict[str, Any] = {
        "config": {"file": host.config.source, "ok": True},
        "provider": {
            "adapter": host.provider_config.adapter,
            "model": host.provider_config.model,
            "ok": not problems,
            "problems": problems,
        },
        "plugins": [p.to_json() for p in host.plugins],
        "tools": [],
    }
    for name, tool in tools.items():
        findings = [
            {"code": f.code, "message": f.message, "severity": getattr(f, "severity", "warning")}
            for f in lint_tool(tool)
        ]
        if name in withdrawn:
            # A tool its plugin registers and then never offers is a setting left out.
            severity, message = withdrawn[name]
            code = "not-offered" if severity == "error" else "offered-when-relevant"
            findings.append({"code": code, "message": message, "severity": severity})
        report["tools"].append({"name": name, "plugin": tool.plugin, "findings": findings})
    failed = [p for p in host.plugins if p.enabled and p.error]
    unusable = [
        t["name"] for t in report["tools"] if any(f["severity"] == "error" for f in t["findings"])
    ]
    if args.json:
        _print_json(report, out)
    else:
        out.write(f"config: {host.config.source or 'defaults (no toolwire.toml found)'}\n")
        provider = report["provider"]
        if problems:
            out.write("provider: FAIL\n")
            for problem in problems:
                out.write(f"  {inert(problem)}\n")
        else:
            out.write(f"provider {provider['adapter']} (model {provider['model'] or '-'}): ok\n")
        for info in host.plugins:
            mark = "FAIL" if info.error and info.enabled else ("ok" if info.enabled else "off")
            out.write(inert(f"plugin {info.describe()}: {mark}", one_line=True) + "\n")
            if info.error and info.enabled:
                out.write(f"  {inert(info.error)}\n")
        for entry in report["tools"]:
            status = "ok" if not entry["findings"] else f"{len(entry['findings'])} finding(s)"
            out.write(inert(f"tool {entry['name']} [{entry['plugin']}]: {status}") + "\n")
            for finding in entry["findings"]:
                out.write(f"  {inert(finding['code'])}: {inert(finding['message'])}\n")
    return EXIT_FAILED if failed or problems or unusable else EXIT_OK


# -- init --------------------------------------------------------------------------------------


def _init(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..host._discovery import discover
    from ._init_trial import plugins_needing_settings

    path = Path(args.path)
    if path.exists() and not args.force:
        # Leaving an existing config alone is success, so `toolwire init && toolwire run …` chains.
        out.write(f"{path} exists; left unchanged (use --force to rewrite it)\n")
        return EXIT_OK
    installed = sorted(discover())
    needing = plugins_needing_settings(installed)
    path.write_text(render_init_config(installed, needing), encoding="utf-8")
    names = ", ".join(p for p in installed if p not in needing) or "none"
    left = f"; left out until configured: {', '.join(needing)}" if needing else ""
    out.write(f"wrote {path} (enabled plugins: {names}{left})\n")
    return EXIT_OK


def render_init_config(plugins: Sequence[str], needing: Mapping[str, str] | None = None) -> str:
    """The commented ``toolwire.toml`` that ``toolwire init`` writes: ``plugins`` enabled,
    except those of ``needing``, which are named in comments with what they need."""
    from ._init_trial import left_out_comment

    needing = needing or {}
    enable = ", ".join(json.dumps(p) for p in plugins if p not in needing)
    lines = [
        "# toolwire configuration. Reference: docs/user-guide.md (the config section)",
        "",
        "[plugins]",
        "# Installed plugins to load. Nothing a package installs reaches a model unless it is",
        "# enabled here (or in $TOOLWIRE_PLUGINS, which overrides this list).",
        f"enable = [{enable}]",
        *left_out_comment(needing),
        "",
        "[provider]",
        "# The API adapter: openai-chat, openai-responses, anthropic-messages, llamacpp, or",
        "# scripted (the in-box test model, only when named here). Unset: llamacpp when that",
        "# plugin is enabled, else none, and a run is refused saying what to set.",
        '# adapter = "openai-chat"',
        "stream = true                            # show the answer as it is written",
        '# base_url = "http://localhost:11434/v1"   # OpenAI-compatible hosts end in /v1',
        '# model = "qwen3:4b"',
        '# api_key_env = "OPENAI_API_KEY"          # the variable holding the key (never stored)',
        '# trust = "medium"                        # low | medium | high | self_hosted',
        '# data_security = "self_hosted"           # the provider runs on your own machines',
        "",
        "[loop]",
        "max_rounds = 10",
        "max_tool_calls = 50",
        "concurrency = 1                          # calls of one turn run at once",
        'unknown_tool = "return_error"            # return_error | fail | rewrite:<tool>',
        "",
        "[tools]",
        "# Which tools models are offered. Left out: every tool of the enabled plugins on",
        "# interactive surfaces (run on a terminal, chat, the web chat on loopback), and none on",
        "# hosted ones (batch, mcp serve, a web chat on a network address).",
        '# enable = ["calculator"]',
        "# deny = []",
        "",
        "# Tools per surface (run, chat, web, batch, mcp-serve, or an application's own):",
        "# an empty allow list allows every tool; deny always wins.",
        "# [surfaces.batch]",
        '# allow = ["calculator"]',
        "# deny = []",
        "",
        "[policy]",
        "# Side effects a person agrees to first: interactive surfaces (run on a terminal, chat,",
        "# the web chat) ask before each such call; unattended ones (batch, mcp serve, run",
        "# without a terminal) refuse it. Set [] to run them without asking.",
        'guarded = ["destructive", "external_spend", "payment", "shell"]',
        "# Guarded side effects unattended surfaces run anyway (nobody is asked).",
        "unattended_allow = []",
        "# Side effects every surface asks about (a run with nobody to ask ends deferred).",
        "# require_approval = []",
        "# Side effects no surface runs.",
        "# deny = []",
        "",
    ]
    return "\n".join(lines)
