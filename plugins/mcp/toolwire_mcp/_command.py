"""``toolwire mcp``: ``serve`` the host's tools over MCP, list the configured ``servers``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolwire import CliCommand, Host


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
    servers = sub.add_parser("servers", help="the configured MCP servers, their state and tools")
    servers.add_argument("--json", action="store_true", help="print JSON")
    servers.add_argument(
        "--refresh", action="store_true", help="list every server's tools again (the cache too)"
    )


async def _run(args: argparse.Namespace, host: Host) -> int:
    if args.mcp_command == "servers":
        return _servers(args, host)
    from ._serve import ToolServer, parse_listen_address

    # A client that launches the server may drop the environment and start it anywhere: say
    # which config is in use (stderr, never the protocol's stdout).
    print(f"toolwire mcp serve: {_config_in_use(host)}", file=sys.stderr, flush=True)
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
            print(
                f"{row['name']:<16} {row['transport']:<6} {row['status']}{again}: "
                f"{len(row['tools'])} tool(s)"
            )
            if row["error"]:
                print(f"  {row['error']}")
            for problem in row["problems"]:
                print(f"  {problem}")
    return 1 if any(r["status"] == "failed" for r in rows) else 0


MCP_COMMAND = CliCommand(
    name="mcp",
    help="MCP: serve the host's tools, or list the configured MCP servers",
    run=_run,
    configure=_configure,
)
