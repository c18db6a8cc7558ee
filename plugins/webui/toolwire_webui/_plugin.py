"""The ``webui`` plugin: the settings of ``[tools.webui]`` and the ``toolwire serve`` command
(``python -m toolwire_webui`` serves without the plugin enabled)."""

from __future__ import annotations

import attrs

import toolwire

PLUGIN_NAME = "webui"


@attrs.frozen(kw_only=True)
class WebUISettings:
    """``[tools.webui]``: where the server listens and how the page behaves.

    ``host`` and ``port`` are the default bind address (loopback unless a token is given);
    ``database`` is the SQLite file of conversations (default under ``$XDG_DATA_HOME``);
    ``cards_collapsed`` opens tool cards collapsed.
    """

    host: str = "127.0.0.1"
    port: int = 8765
    database: str | None = None
    cards_collapsed: bool = True


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.webui]`` is structured into :class:`WebUISettings`."""
    return WebUISettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_cli_commands() -> list[toolwire.CliCommand]:
    """``toolwire serve``: the web chat, on the host ``toolwire`` loaded."""
    from ._server import add_serve_arguments, serve_parsed

    return [
        toolwire.CliCommand(
            name="serve",
            help="serve the web chat (loopback by default)",
            configure=add_serve_arguments,
            run=lambda args, host: serve_parsed(args, host),
        )
    ]
