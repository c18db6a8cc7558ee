"""``toolwire mcp``: ``serve`` the host's tools over MCP, list the configured ``servers``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolwire import CliCommand, Host, Surface
from toolwire.cli import inert


def _configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    serve = sub.add_parser("serve", help="serve the enabled tools over MCP (stdio by default)")
    serve.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead (loopback addresses only)",
    )
    serve.add_argument(
        "--approve",
        action="append",
        default=[],
        metavar="TOOL",
        help="approve every call of TOOL in advance (repeatable)",
    )
    add = sub.add_parser(
        "add",
        help="write an MCP server into toolwire.toml: add NAME -- COMMAND [ARG …], or --url",
    )
    add.add_argument("name", help="the server's name (its tools are named <name>_<tool>)")
    _add_options(add)
    add.add_argument(
        "argv", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the command, after --"
    )
    login = sub.add_parser("login", help="sign in to an OAuth-protected MCP server (oauth = true)")
    login.add_argument("name")
    login.add_argument(
        "--no-browser", action="store_true", help="print the address to open, do not open it"
    )
    servers = sub.add_parser("servers", help="the configured MCP servers, their state and tools")
    servers.add_argument("--json", action="store_true", help="print JSON")
    servers.add_argument(
        "--refresh", action="store_true", help="list every server's tools again (the cache too)"
    )


async def _run(args: argparse.Namespace, host: Host) -> int:
    if args.mcp_command == "servers":
        return _servers(args, host)
    if args.mcp_command == "add":
        return _add(args, host)
    if args.mcp_command == "login":
        from ._oauth import login_command

        return await login_command(args, host)
    from ._serve import ToolServer, parse_listen_address

    # A client that launches the server may drop the environment and start it anywhere: say
    # which config is in use (stderr, never the protocol's stdout).
    print(f"toolwire mcp serve: {_config_in_use(host)}", file=sys.stderr, flush=True)
    surface = Surface(name="mcp-serve", interactive=False, hosted=True, approved=args.approve)
    notice = host.use_surface(surface)
    if notice is not None:
        print(notice, file=sys.stderr)
    try:
        address = parse_listen_address(args.http) if args.http else None
        server = ToolServer(host, approve=args.approve)
    except ValueError as exc:
        print(f"toolwire mcp serve: {exc}", file=sys.stderr)
        return 2
    if address is None:
        await server.serve_stdio()
    else:
        await server.serve_http(*address)
    return 0


def _add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="a streamable-HTTP server's address instead of a command")
    parser.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="the server's environment"
    )
    parser.add_argument("--force", action="store_true", help="replace a server of that name")
    parser.add_argument(
        "--file", help="the config file to write (default: the one in use, else ./toolwire.toml)"
    )


def _add(args: argparse.Namespace, host: Host) -> int:
    from pathlib import Path

    from ._add import AddRefused, add_server

    # Options may also come between the name and `--` (argparse leaves them to the command).
    argv = list(args.argv)
    if "--" in argv:
        cut = argv.index("--")
    elif argv and argv[0].startswith("-"):
        cut = len(argv)
    else:  # argparse took the `--` itself: all of it is the command
        cut = -1
    options = argparse.ArgumentParser(prog="toolwire mcp add", add_help=False)
    _add_options(options)
    later, unknown = options.parse_known_args(argv[: max(cut, 0)])
    if unknown:
        print(
            f"toolwire mcp add: unexpected {' '.join(unknown)}; the command goes after --",
            file=sys.stderr,
        )
        return 2
    args.argv = argv[cut + 1 :]
    args.url = later.url or args.url
    args.env = [*args.env, *later.env]
    args.force = args.force or later.force
    args.file = later.file or args.file

    if bool(args.argv) == bool(args.url):
        print(
            "toolwire mcp add: give the server's command after -- "
            "(toolwire mcp add NAME -- COMMAND ARG …) or --url, not both",
            file=sys.stderr,
        )
        return 2
    env: dict[str, str] = {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            print(f"toolwire mcp add: --env {item!r}: expected KEY=VALUE", file=sys.stderr)
            return 2
        env[key] = value
    path = Path(args.file or host.config.source or "toolwire.toml")
    try:
        done = add_server(
            path, args.name, command=args.argv, url=args.url, env=env, force=args.force
        )
    except AddRefused as exc:
        print(f"toolwire mcp add: {exc}", file=sys.stderr)
        return 2
    print(done)
    return 0


def _config_in_use(host: Host) -> str:
    config = host.config
    files = list(config.layers) or ([config.source] if config.source else [])
    if not files:
        return "no config file found (defaults); give one with --config PATH"
    return "config " + ", ".join(files)


def _servers(args: argparse.Namespace, host: Host) -> int:
    from ._plugin import client_for

    host.tools  # noqa: B018 - collecting the tools lists them (from the cache, or started)
    client = client_for(host.plugin_settings("mcp"))
    rows: list[dict[str, Any]] = []
    if client is not None:
        if args.refresh:
            client.refresh()
        else:
            client.start_all()
        client.tools()  # what each server lists now
        for name in client.names:
            connection = client.started(name)
            status = client.status(name)
            rows.append(
                {
                    "name": name,
                    "transport": client.settings.servers[name].transport,
                    "status": status,
                    "error": connection.describe_problem()
                    if connection is not None and connection.error
                    else None,
                    "reconnects": connection.reconnects if connection is not None else 0,
                    "tools": client.registered(name),
                    "problems": list(connection.problems) if connection is not None else [],
                }
            )
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    elif not rows:
        print("No MCP servers are configured ([tools.mcp.servers.<name>] in toolwire.toml).")
    else:
        for row in rows:
            again = f", restarted {row['reconnects']} time(s)" if row["reconnects"] else ""
            line = f"{row['name']:<16} {row['transport']:<6} {row['status']}{again}: "
            print(inert(f"{line}{len(row['tools'])} tool(s)", one_line=True))
            if row["error"]:
                print(f"  {inert(row['error'])}")
            for problem in row["problems"]:
                print(f"  {inert(problem)}")
    return 1 if any(r["status"] == "failed" for r in rows) else 0


MCP_COMMAND = CliCommand(
    name="mcp",
    help="MCP: serve the host's tools, or list the configured MCP servers",
    run=_run,
    configure=_configure,
)
