"""toolwire-webui: a web chat over a toolwire host, built around live tool-call cards.

Start it with ``toolwire serve`` or ``python -m toolwire_webui``, or from Python::

    async with WebServer(host) as server:
        print(server.url)

It listens on 127.0.0.1 by default; any other address needs a token.
"""

from ._app import PageSettings, create_app
from ._plugin import WebUISettings
from ._server import WebServer, check_bind, serve, serve_command
from ._store import ConversationRecord, ConversationStore, default_database_path

__all__ = [
    "ConversationRecord",
    "ConversationStore",
    "PageSettings",
    "WebServer",
    "WebUISettings",
    "check_bind",
    "create_app",
    "default_database_path",
    "serve",
    "serve_command",
]
