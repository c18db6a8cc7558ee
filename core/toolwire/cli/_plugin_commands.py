"""Plugin CLI commands: ``CliCommand``, and running ``toolwire <command>`` for a plugin's command.

The ``toolwire`` CLI hands its arguments to :func:`run_plugin_command` first; a command name
that is not a built-in one loads the host, asks ``toolwire_cli_commands`` and runs the match.
Built-in commands and ``--help`` never load a plugin.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from ..host._discovery import PluginInfo
    from ..host._host import Host

CommandRun = Callable[[argparse.Namespace, "Host"], "int | Awaitable[int]"]


def _command_name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value or not value.replace("-", "").isalnum():
        raise ValueError(
            f"CliCommand name {value!r}: expected a word of letters, digits and '-' (like 'mcp')"
        )


@attrs.frozen(kw_only=True)
class CliCommand:
    """A ``toolwire <name> …`` command that a plugin adds (``toolwire_cli_commands``).

    ``configure(parser)`` adds the command's arguments (and sub-commands) to its own
    ``argparse`` parser. ``run(args, host)`` does the work and returns the exit code; it may be
    ``async def``, in which case it runs in a new event loop. The host is closed after ``run``
    returns, either way.
    """

    name: str = attrs.field(validator=_command_name)
    help: str
    run: CommandRun
    configure: Callable[[argparse.ArgumentParser], None] | None = None


def _builtin_commands(parser: argparse.ArgumentParser) -> set[str]:
    names: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            names.update(action.choices)
    return names


def run_plugin_command(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None
) -> int | None:
    """Run ``argv`` when its command is a plugin's; None when it is not (the CLI goes on).

    ``--config PATH`` before the command is honoured, and after it too (up to a ``--``). A
    command name no plugin answers is left to the CLI's own parser, which reports it.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    config: str | None = None
    index = 0
    while index < len(args):
        found = _config_at(args, index)
        if found is not None:
            config, index = found
        elif args[index] == "--verbose":
            index += 1
        else:
            break
    if index >= len(args) or args[index].startswith("-"):
        return None
    name = args[index]
    if name in _builtin_commands(parser):
        return None
    # `--config PATH` after the command too: a client that launches `toolwire mcp serve` puts
    # its options after the command, and may not pass the environment on.
    rest, later = _take_config(args[index + 1 :])
    config = later if later is not None else config
    from ..config import ConfigError
    from ..host._host import Host

    try:
        host = Host.load(config)
    except ConfigError as exc:
        print(f"toolwire: config error: {exc}", file=sys.stderr)
        return 2
    command = plugin_commands(host).get(name)
    if command is None:
        hint = _why_missing(name, host)
        _close(host)
        if hint is None:
            return None
        print(f"toolwire: {hint}", file=sys.stderr)
        return 2
    sub = argparse.ArgumentParser(prog=f"{parser.prog} {name}", description=command.help)
    if command.configure is not None:
        command.configure(sub)
    parsed = sub.parse_args(rest)
    return _run(command, parsed, host)


def _config_at(args: Sequence[str], index: int) -> tuple[str, int] | None:
    """The path of a ``--config PATH`` or ``--config=PATH`` option at ``args[index]``, and the
    index after it; None when there is none."""
    arg = args[index] if index < len(args) else ""
    if arg == "--config" and index + 1 < len(args):
        return args[index + 1], index + 2
    if arg.startswith("--config="):
        return arg.split("=", 1)[1], index + 1
    return None


def _take_config(args: Sequence[str]) -> tuple[list[str], str | None]:
    """``args`` without the ``--config PATH`` (or ``--config=PATH``) options they hold before a
    ``--``, and the last path given (None when none is)."""
    rest: list[str] = []
    config: str | None = None
    index = 0
    while index < len(args):
        if args[index] == "--":
            rest.extend(args[index:])
            break
        found = _config_at(args, index)
        if found is None:
            rest.append(args[index])
            index += 1
        else:
            config, index = found
    return rest, config


COMMANDS_GROUP = "toolwire.commands"
"""The entry-point group where a distribution declares the commands its plugin adds (``mcp =
"toolwire_mcp._plugin"``: the command's name, the plugin's module), so that ``toolwire mcp``
can name the plugin to enable without importing anything."""


def _why_missing(name: str, host: Host) -> str | None:
    """What to do when no loaded plugin adds the command ``name`` but an installed one would:
    enable it, or see why it did not load. None when no installed plugin declares the command
    (in ``toolwire.commands``) or is named after it. Entry-point metadata only: no plugin is
    imported."""
    from ..host._entrypoints import entry_points_of

    declared = [ep for ep in entry_points_of(COMMANDS_GROUP) if ep.name == name]

    def declares(info: PluginInfo) -> bool:
        return any(
            (ep.distribution is not None and ep.distribution == info.distribution)
            or ep.value == info.value
            for ep in declared
        )

    installed = [info for info in host.plugins if info.distribution or info.value]
    found = [info for info in installed if declares(info)] or [
        info for info in installed if info.name == name
    ]
    for info in found:
        if not info.enabled:
            config = host.config
            if config.enabled_from:  # $TOOLWIRE_PLUGINS decides, not the file
                how = f"add {info.name} to ${config.enabled_from.lstrip('$')}"
            else:
                where = config.origin_of("$.plugins.enable") or config.source or "toolwire.toml"
                how = (
                    f'add "{info.name}" to [plugins] enable in {where}, or set '
                    f"TOOLWIRE_PLUGINS={info.name} for one command"
                )
            return (
                f"the command {name!r} comes from the plugin {info.describe()}, which is "
                f"installed but not enabled; to enable it, {how}"
            )
        if not info.loaded or info.error:
            return (
                f"the command {name!r} comes from the plugin {info.name!r}, which is enabled "
                f"but did not load: {info.error or 'see toolwire plugins'}"
            )
    return None


def plugin_commands(host: Host) -> dict[str, CliCommand]:
    """Every plugin command by name; a hook that fails or repeats a name is reported alone."""
    commands: dict[str, CliCommand] = {}
    for impl in host.hook.toolwire_cli_commands.get_hookimpls():
        try:
            answer: Any = impl.function()
            produced = list(answer or ())
        except Exception as exc:
            print(
                f"toolwire: plugin {impl.plugin_name!r}: toolwire_cli_commands: {exc}",
                file=sys.stderr,
            )
            continue
        for command in produced:
            if not isinstance(command, CliCommand):
                print(
                    f"toolwire: plugin {impl.plugin_name!r}: toolwire_cli_commands returned "
                    f"{command!r}, which is not a toolwire.CliCommand",
                    file=sys.stderr,
                )
            elif command.name in commands:
                print(
                    f"toolwire: plugin {impl.plugin_name!r}: the command {command.name!r} is "
                    "already added by another plugin; the first is kept",
                    file=sys.stderr,
                )
            else:
                commands[command.name] = command
    return commands


def _run(command: CliCommand, args: argparse.Namespace, host: Host) -> int:
    import asyncio

    async def run_async(awaitable: Awaitable[int]) -> int:
        try:
            return await awaitable
        finally:
            await host.aclose()

    try:
        outcome: Any = command.run(args, host)
    except BaseException:
        _close(host)
        raise
    if inspect.isawaitable(outcome):
        return int(asyncio.run(run_async(outcome)))
    _close(host)
    return int(outcome)


def _close(host: Host) -> None:
    import asyncio

    asyncio.run(host.aclose())
