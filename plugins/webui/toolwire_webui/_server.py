"""``WebServer`` (start, stop, its address), ``serve`` (run until stopped) and the command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from aiohttp import web

from toolwire import Config, ConfigError, Host, HostError, Surface
from toolwire.chat import GrantStore
from toolwire.net import is_loopback, loopback_authorities

from . import _plugin
from ._app import PageSettings, create_app, set_allowed_hosts
from ._store import ConversationStore

TOKEN_ENV = "TOOLWIRE_WEBUI_TOKEN"
MIN_TOKEN_LENGTH = 16


def web_surface(host: str) -> Surface:
    """The web chat's surface: interactive, and hosted when bound to a network address (then it
    offers no tool until the config names some)."""
    return Surface(name="web", interactive=True, hosted=not is_loopback(host))


def check_bind(host: str, token: str | None) -> None:
    """Refuse a bind that would expose the chat without a token.

    :raises ValueError: for a non-loopback address without a token, or a token too short to
        guard anything.
    """
    if token is not None and len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(
            f"the web UI token must be at least {MIN_TOKEN_LENGTH} characters; got one of "
            f"{len(token)}"
        )
    if token is None and not is_loopback(host):
        raise ValueError(
            f"binding {host!r} (not a loopback address) exposes the chat to the network: give a "
            f"token (token=..., --token or ${TOKEN_ENV}), or bind 127.0.0.1"
        )


class WebServer:
    """The web chat of one host, listening on ``host:port`` (loopback by default).

    Use it as an async context manager, or :meth:`start` and :meth:`close`. :attr:`url` is the
    address to open (with the token in it when there is one). Port 0 picks a free port.

    :param toolwire_host: the :class:`toolwire.Host` whose tools and provider the chat uses.
    :param host: the address to bind; anything but loopback needs ``token``.
    :param port: the port to bind.
    :param token: a secret every request must carry (at least 16 characters).
    :param database: the SQLite file of conversations, ``":memory:"``, or a
        :class:`ConversationStore`; default ``$XDG_DATA_HOME/toolwire/webui.sqlite3``.
    :param cards_collapsed: open tool cards collapsed.
    :param grants: the file of "always allow" grants, or a :class:`toolwire.chat.GrantStore`;
        default the one beside the user's config (shared with ``toolwire chat``).
    :raises ValueError: for a bind that needs a token and has none (see :func:`check_bind`).
    """

    def __init__(
        self,
        toolwire_host: Host,
        *,
        host: str = "127.0.0.1",
        port: int = 8765,
        token: str | None = None,
        database: str | os.PathLike[str] | ConversationStore | None = None,
        cards_collapsed: bool = True,
        grants: str | os.PathLike[str] | GrantStore | None = None,
    ) -> None:
        check_bind(host, token)
        self.grants = grants if isinstance(grants, GrantStore) else GrantStore(grants)
        self.toolwire_host = toolwire_host
        self.notice = toolwire_host.use_surface(web_surface(host))
        self.host = host
        self.port = port
        self.token = token
        if isinstance(database, ConversationStore):
            self.store = database
            self._owns_store = False
        else:
            self.store = ConversationStore(database)
            self._owns_store = True
        self._settings = PageSettings(cards_collapsed=cards_collapsed)
        self._runner: web.AppRunner | None = None

    async def start(self) -> WebServer:
        """Start listening, with the provider's adapter made already: its imports and transport
        cost a few hundred milliseconds, which the first answer of the first page would wait
        for otherwise (a provider that cannot be made is reported by each turn, as before)."""
        with contextlib.suppress(HostError):
            await self.toolwire_host.get_adapter()
        app = create_app(
            self.toolwire_host,
            self.store,
            token=self.token,
            settings=self._settings,
            grants=self.grants,
        )
        if self.token is None:
            set_allowed_hosts(app, ())  # nothing is answered until the port is known
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        if self.token is None:
            # Without a token the only guard against DNS rebinding is the Host header.
            set_allowed_hosts(app, loopback_authorities(self.host, self.port))
        return self

    @property
    def url(self) -> str:
        """The address to open in a browser (``…/?token=…`` when the server has a token)."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        if self.host in ("0.0.0.0", "::"):
            shown = "127.0.0.1"
        base = f"http://{shown}:{self.port}/"
        return f"{base}?token={self.token}" if self.token else base

    async def close(self) -> None:
        """Stop the running turns, stop listening, close the store when the server opened it
        (even when stopping failed)."""
        runner, self._runner = self._runner, None
        try:
            if runner is not None:
                await runner.cleanup()
        finally:
            if self._owns_store:
                self.store.close()

    async def __aenter__(self) -> WebServer:
        try:
            return await self.start()
        except BaseException:  # a port in use: what start() opened is closed, not left behind
            await self.close()
            raise

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _load_host(toolwire_host: Host | Config | str | os.PathLike[str] | None) -> Host:
    if isinstance(toolwire_host, Host):
        return toolwire_host
    config = toolwire_host
    if not isinstance(config, Config):
        from toolwire import load_config

        config = load_config(config)
    extra = [] if _plugin.PLUGIN_NAME in config.plugins.enable else [_plugin]
    return Host.load(config, plugins=extra)


def _settings(host: Host) -> _plugin.WebUISettings:
    settings = host.plugin_settings(_plugin.PLUGIN_NAME)
    return settings if isinstance(settings, _plugin.WebUISettings) else _plugin.WebUISettings()


def serve(
    toolwire_host: Host | Config | str | os.PathLike[str] | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    token: str | None = None,
    database: str | os.PathLike[str] | None = None,
    cards_collapsed: bool | None = None,
    out: TextIO | None = None,
) -> None:
    """Run the web chat until interrupted (Ctrl-C or SIGTERM).

    :param toolwire_host: a :class:`toolwire.Host`, a :class:`toolwire.Config`, a config path,
        or None to find the config as ``toolwire`` does.
    :param host: the bind address (default ``[tools.webui] host``, 127.0.0.1).
    :param port: the port (default ``[tools.webui] port``, 8765).
    :param token: required for any bind but loopback (default ``$TOOLWIRE_WEBUI_TOKEN``).
    :param database: the SQLite file of conversations (default ``[tools.webui] database``).
    :param cards_collapsed: open cards collapsed (default ``[tools.webui] cards_collapsed``).
    :param out: where the address is printed (default stdout).
    :raises ValueError: for a bind without the token it needs.
    """
    loaded = _load_host(toolwire_host)
    settings = _settings(loaded)
    server = WebServer(
        loaded,
        host=host if host is not None else settings.host,
        port=port if port is not None else settings.port,
        token=token if token is not None else os.environ.get(TOKEN_ENV) or None,
        database=database if database is not None else settings.database,
        cards_collapsed=cards_collapsed
        if cards_collapsed is not None
        else settings.cards_collapsed,
    )
    asyncio.run(_serve_until_stopped(server, out or sys.stdout))


async def _serve_until_stopped(server: WebServer, out: TextIO) -> None:
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopped.set)
    try:
        await server.start()
        if server.notice is not None:
            print(server.notice, file=sys.stderr)
        out.write(f"toolwire web chat on {server.url}\n")
        out.flush()
        await stopped.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await server.close()
        await server.toolwire_host.aclose()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m toolwire_webui",
        description="Serve the web chat: live tool-call cards you can watch and steer.",
    )
    parser.add_argument("--config", help="the toolwire.toml to use")
    add_serve_arguments(parser)
    return parser


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``toolwire serve`` (all but ``--config``, which ``toolwire`` itself takes)."""
    parser.add_argument("--host", help="address to bind (default 127.0.0.1; others need a token)")
    parser.add_argument("--port", type=int, help="port to bind (default 8765)")
    parser.add_argument(
        "--token", help=f"secret every request must carry (default ${TOKEN_ENV})", default=None
    )
    parser.add_argument("--database", help="SQLite file of the conversations")
    cards = parser.add_mutually_exclusive_group()
    cards.add_argument(
        "--expanded-cards",
        dest="collapsed",
        action="store_false",
        default=None,
        help="open tool cards expanded (the page's expand-all switch changes it later)",
    )
    cards.add_argument(
        "--collapsed-cards",
        dest="collapsed",
        action="store_true",
        help="open tool cards collapsed, each with a live one-line preview (the default)",
    )


def serve_command(argv: Sequence[str] | None = None, *, err: TextIO | None = None) -> int:
    """``python -m toolwire_webui [--config F] [--host H] [--port P] …``: return an exit code.

    ``toolwire serve`` (the plugin's command, when ``webui`` is enabled) takes the same options.
    """
    args = _parser().parse_args(argv)
    return serve_parsed(args, Path(args.config) if args.config else None, err=err)


def serve_parsed(
    args: argparse.Namespace,
    toolwire_host: Host | Config | str | os.PathLike[str] | None,
    *,
    err: TextIO | None = None,
) -> int:
    """Serve with the options :func:`add_serve_arguments` parsed; return an exit code."""
    err = err or sys.stderr
    try:
        serve(
            toolwire_host,
            host=args.host,
            port=args.port,
            token=args.token,
            database=args.database,
            cards_collapsed=args.collapsed,
        )
    except (ValueError, ConfigError) as exc:
        err.write(f"toolwire serve: {exc}\n")
        return 2
    except OSError as exc:
        err.write(f"toolwire serve: cannot listen: {exc}\n")
        return 1
    return 0
