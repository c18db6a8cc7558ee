"""``toolwire mcp``: ``serve`` the host's tools over MCP, list the configured ``servers``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolwire import CliCommand, Host, Surface


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


async def _run(args: argparse.Namespace, host: Host) -> int:
    if args.mcp_command == "servers":
        return _servers(args, host)
    from ._serve import ToolServer, parse_listen_address

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


def _servers(args: argparse.Namespace, host: Host) -> int:
    from ._plugin import client_for

    host.tools  # noqa: B018 - collecting the tools starts the servers
    client = client_for(host.plugin_settings("mcp"))
    rows: list[dict[str, Any]] = []
    if client is not None:
        for name, connection in client.connections.items():
            rows.append(
                {
                    "name": name,
                    "transport": connection.settings.transport,
                    "status": connection.status,
                    "error": connection.describe_problem() if connection.error else None,
                    "tools": client.registered(name),
                }
            )
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    elif not rows:
        print("No MCP servers are configured ([tools.mcp.servers.<name>] in toolwire.toml).")
    else:
        for row in rows:
            print(
                f"{row['name']:<16} {row['transport']:<6} {row['status']}: "
                f"{len(row['tools'])} tool(s)"
            )
            if row["error"]:
                print(f"  {row['error']}")
    return 1 if any(r["status"] == "failed" for r in rows) else 0


MCP_COMMAND = CliCommand(
    name="mcp",
    help="MCP: serve the host's tools, or list the configured MCP servers",
    run=_run,
    configure=_configure,
)
