"""OAuth 2.1 for streamable-HTTP servers (``oauth = true``): sign-in and tokens kept owner-only.

The flow is the SDK's client auth provider (``OAuthClientProvider``): discovery of the server's
authorization server, dynamic client registration, the authorization code with PKCE, and the
refresh of expired tokens. ``toolwire mcp login NAME`` runs the part a person takes part in:
it listens for the redirect on a loopback port, opens (or prints) the authorization address,
and keeps what it gets. Every other command uses what was kept: a server that needs a sign-in
nobody did fails with a message naming the login command, never a browser opening by itself.

Tokens and the registered client are kept in ``$XDG_DATA_HOME/toolwire/mcp-oauth/`` (else
``~/.local/share/…``), one file per server and URL, readable by its owner only (folder 0700,
file 0600).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from ._settings import ServerSettings

if TYPE_CHECKING:
    from toolwire import Host

LOGIN_TIMEOUT = 300.0
_CALLBACK = "/callback"


class SignInNeeded(Exception):
    """The server needs a sign-in (``toolwire mcp login NAME``) before it can be used."""


def token_path(name: str, settings: ServerSettings) -> Path:
    """The file keeping server ``name``'s tokens and client registration."""
    base = os.environ.get("XDG_DATA_HOME")
    root = Path(base) if base else Path.home() / ".local" / "share"
    digest = hashlib.sha256(str(settings.url).encode("utf-8")).hexdigest()[:16]
    return root / "toolwire" / "mcp-oauth" / f"{name}-{digest}.json"


class TokenFile:
    """The SDK's ``TokenStorage`` in one JSON file only its owner can read or write.

    With ``register`` the client registration starts anew (a sign-in listens on a new port,
    so its redirect address is new) and is kept; without it a registration made on the way is
    not kept (it names no address anyone listens on).
    """

    def __init__(self, path: Path, *, register: bool = False) -> None:
        self.path = path
        self.register = register
        self._client: OAuthClientInformationFull | None = None

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, key: str, value: dict[str, Any]) -> None:
        data = {**self._read(), key: value}
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.path.parent, 0o700)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(data, file)
        os.replace(temporary, self.path)

    async def get_tokens(self) -> OAuthToken | None:
        raw = self._read().get("tokens")
        return OAuthToken.model_validate(raw) if isinstance(raw, dict) else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._client is not None or self.register:
            return self._client
        raw = self._read().get("client")
        return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client = client_info
        if self.register:
            self._write("client", client_info.model_dump(mode="json", exclude_none=True))


def _metadata(settings: ServerSettings, redirect_uri: str) -> OAuthClientMetadata:
    return OAuthClientMetadata.model_validate(
        {
            "client_name": "toolwire",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            **({"scope": " ".join(settings.oauth_scopes)} if settings.oauth_scopes else {}),
        }
    )


def auth_provider(
    name: str,
    settings: ServerSettings,
    *,
    interactive: bool = False,
    redirect_uri: str | None = None,
    redirect_handler: Any = None,
    callback_handler: Any = None,
) -> OAuthClientProvider:
    """The HTTP auth of server ``name``: its kept tokens (refreshed when they expire); when a
    person must sign in, :class:`SignInNeeded` unless ``interactive``."""
    storage = TokenFile(token_path(name, settings), register=interactive)
    if not interactive:

        async def needs_login(url: str) -> None:
            raise SignInNeeded(
                f"MCP server {name!r} needs you to sign in: run `toolwire mcp login {name}`"
            )

        async def no_callback() -> AuthorizationCodeResult:
            raise SignInNeeded(
                f"MCP server {name!r} needs you to sign in: run `toolwire mcp login {name}`"
            )

        redirect_handler, callback_handler = needs_login, no_callback
        kept = storage._read().get("client")
        uris = kept.get("redirect_uris") if isinstance(kept, dict) else None
        redirect_uri = uris[0] if isinstance(uris, list) and uris else None
    return OAuthClientProvider(
        server_url=str(settings.url),
        client_metadata=_metadata(settings, redirect_uri or f"http://127.0.0.1{_CALLBACK}"),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )


async def login(name: str, settings: ServerSettings, *, open_browser: bool = True) -> int:
    """Sign in to server ``name``: returns how many tools it lists once signed in.

    :raises SignInNeeded: when no redirect came back in time.
    """
    from aiohttp import web
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    loop = asyncio.get_running_loop()
    answer: asyncio.Future[AuthorizationCodeResult] = loop.create_future()

    async def callback(request: web.Request) -> web.Response:
        code = request.query.get("code")
        if code and not answer.done():
            answer.set_result(AuthorizationCodeResult(code=code, state=request.query.get("state")))
            return web.Response(text="Signed in to toolwire. You can close this page.")
        error = request.query.get("error_description") or request.query.get("error") or "no code"
        if not answer.done():
            answer.set_exception(SignInNeeded(f"the sign-in was refused: {error}"))
        return web.Response(text=f"Sign-in failed: {error}", status=400)

    app = web.Application()
    app.router.add_get(_CALLBACK, callback)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]

    async def redirect(url: str) -> None:
        print(f"Open this address to sign in to MCP server {name!r}:\n{url}", file=sys.stderr)
        sys.stderr.flush()
        if open_browser:
            import webbrowser

            await asyncio.to_thread(webbrowser.open, url)

    async def wait_for_code() -> AuthorizationCodeResult:
        return await asyncio.wait_for(answer, LOGIN_TIMEOUT)

    auth = auth_provider(
        name,
        settings,
        interactive=True,
        redirect_uri=f"http://127.0.0.1:{port}{_CALLBACK}",
        redirect_handler=redirect,
        callback_handler=wait_for_code,
    )
    import httpx2

    try:
        async with (
            httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30.0, read=LOGIN_TIMEOUT)) as http,
            streamable_http_client(str(settings.url), http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return len((await session.list_tools()).tools)
    finally:
        await runner.cleanup()


async def login_command(args: argparse.Namespace, host: Host) -> int:
    """``toolwire mcp login NAME``."""
    from ._plugin import client_for

    client = client_for(host.plugin_settings("mcp"))
    settings = client.settings.servers.get(args.name) if client is not None else None
    if settings is None or not settings.oauth:
        oauth = (
            [n for n, s in client.settings.servers.items() if s.oauth] if client is not None else []
        )
        print(
            f"toolwire mcp login: no MCP server {args.name!r} with oauth = true is configured; "
            f"such servers: {', '.join(oauth) or 'none'}",
            file=sys.stderr,
        )
        return 2
    try:
        count = await login(args.name, settings, open_browser=not args.no_browser)
    except Exception as exc:
        reason = _reason(exc)
        print(f"toolwire mcp login: {args.name}: {reason}", file=sys.stderr)
        return 1
    print(f"Signed in to MCP server {args.name!r}: {count} tool(s). Tokens kept owner-only.")
    return 0


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _reason(exc.exceptions[0])
    if isinstance(exc, TimeoutError):
        return f"no sign-in came back within {LOGIN_TIMEOUT:g} s"
    return str(exc) or type(exc).__name__
