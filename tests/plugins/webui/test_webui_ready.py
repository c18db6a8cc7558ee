"""The web chat makes the provider's adapter when it starts, not when the first page asks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolwire import Config, Host, load_config
from toolwire_webui import ConversationStore, WebServer


def host_for(tmp_path: Path) -> Host:
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["openai", "webui"]\n'
        '[provider]\nadapter = "openai-chat"\nbase_url = "http://127.0.0.1:9/v1"\n'
        f'model = "fake"\n[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    return Host.load(load_config(config))


async def test_the_adapter_is_made_before_the_first_turn(tmp_path: Path) -> None:
    host = host_for(tmp_path)
    made: list[Any] = []
    create = host.create_adapter

    def counting(api: str | None = None) -> Any:
        made.append(api)
        return create(api)

    host.create_adapter = counting  # type: ignore[method-assign]
    server = WebServer(host, port=0, database=ConversationStore(tmp_path / "chats.sqlite3"))
    await server.start()
    try:
        assert made == [None]
        assert await host.get_adapter() is await host.get_adapter()
        assert made == [None]
    finally:
        await server.close()
        server.store.close()
        await host.aclose()


async def test_a_host_without_a_provider_still_serves(tmp_path: Path) -> None:
    host = Host.load(Config())
    server = WebServer(host, port=0, database=ConversationStore(tmp_path / "chats.sqlite3"))
    await server.start()
    try:
        assert server.url.startswith("http://127.0.0.1:")
    finally:
        await server.close()
        server.store.close()
        await host.aclose()
