"""The package's surface, its plugin, and ``python -m toolwire_webui`` as a real process."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

import toolwire
import toolwire_webui
from toolwire import ConfigError, Host, load_config
from toolwire_webui import WebUISettings, serve_command


def test_the_exported_names_are_exactly_the_intended_ones():
    assert toolwire_webui.__all__ == sorted(toolwire_webui.__all__)
    assert set(toolwire_webui.__all__) == {
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
    }
    for name in toolwire_webui.__all__:
        assert getattr(toolwire_webui, name) is not None


def test_the_plugin_is_discovered_and_structures_its_settings(tmp_path: Path):
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["webui"]\n[tools.webui]\nport = 9000\ncards_collapsed = false\n',
        encoding="utf-8",
    )
    host = Host.load(load_config(config))
    info = host.plugin_info("webui")
    assert info is not None
    assert info.loaded
    assert host.plugin_settings("webui") == WebUISettings(port=9000, cards_collapsed=False)


def test_a_misspelt_setting_is_refused_naming_the_key(tmp_path: Path):
    config = tmp_path / "toolwire.toml"
    config.write_text('[plugins]\nenable = ["webui"]\n[tools.webui]\nprot = 9000\n')
    with pytest.raises(ConfigError, match=r"\$\.tools\.webui\.prot: unknown key 'prot'"):
        Host.load(load_config(config))


def test_a_public_bind_without_a_token_exits_2_naming_the_address(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLWIRE_WEBUI_TOKEN", raising=False)
    assert serve_command(["--host", "0.0.0.0", "--database", ":memory:"]) == 2
    err = capsys.readouterr().err
    assert "'0.0.0.0'" in err
    assert "token" in err


def test_python_m_toolwire_webui_serves_until_interrupted(tmp_path: Path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    env.pop("TOOLWIRE_CONFIG", None)
    with subprocess.Popen(
        [sys.executable, "-m", "toolwire_webui", "--port", "0"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        _interrupt_after_one_page(process)
    assert process.returncode == 0
    assert (tmp_path / "toolwire" / "webui.sqlite3").exists()


def _interrupt_after_one_page(process: subprocess.Popen[str]) -> None:
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("toolwire web chat on http://127.0.0.1:"), line
        url = line.split(" on ", 1)[1].strip()
        with urllib.request.urlopen(url, timeout=10) as response:
            page = response.read().decode("utf-8")
        assert '<meta name="csrf-token"' in page
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_toolwire_serve_is_the_plugin_command(tmp_path: Path):
    (tmp_path / "toolwire.toml").write_text('[plugins]\nenable = ["webui"]\n')
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    env.pop("TOOLWIRE_CONFIG", None)
    env.pop("TOOLWIRE_PLUGINS", None)
    with subprocess.Popen(
        [sys.executable, "-m", "toolwire", "serve", "--port", "0"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        _interrupt_after_one_page(process)
    assert process.returncode == 0
    assert (tmp_path / "toolwire" / "webui.sqlite3").exists()


def test_toolwire_serve_refuses_a_public_bind_without_a_token(tmp_path: Path):
    (tmp_path / "toolwire.toml").write_text('[plugins]\nenable = ["webui"]\n')
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path)}
    env.pop("TOOLWIRE_CONFIG", None)
    env.pop("TOOLWIRE_WEBUI_TOKEN", None)
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "serve", "--host", "0.0.0.0", "--port", "0"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "token" in done.stderr


@pytest.mark.parametrize(
    "content", [b"not a database, only text\n" * 40, b"SQLite format 3\x00" * 8]
)
def test_a_store_that_cannot_open_its_file_leaves_it_closed(
    tmp_path: Path, content: bytes, open_descriptors: Callable[[Path], int]
) -> None:
    from toolwire_webui import ConversationStore

    path = tmp_path / "chats.sqlite"
    path.write_bytes(content)
    with pytest.raises(sqlite3.DatabaseError):
        ConversationStore(path)
    assert open_descriptors(path) == 0
    assert path.read_bytes() == content  # nothing written into what was there


async def test_the_web_chat_declares_its_surface_and_a_network_bind_closes_the_offer() -> None:
    from toolwire import Config
    from toolwire.loop import Selection
    from toolwire_webui import WebServer

    @toolwire.tool(side_effects=["read_only"])
    def look(target: str) -> str:
        """Look at a target.

        Args:
            target: What to look at.
        """
        return target

    for bind, token, hosted in (("127.0.0.1", None, False), ("0.0.0.0", "t" * 16, True)):
        host = Host.load(Config())
        host.add_tool(look)
        server = WebServer(host, host=bind, port=0, token=token, database=":memory:")
        try:
            assert host.surface is not None
            assert (host.surface.name, host.surface.interactive) == ("web", True)
            assert host.surface.hosted is hosted
            offered = Selection.from_config(host.config, None, None).candidates(host.tools)
            assert [t.name for t in offered] == ([] if hosted else ["look"])
            assert (server.notice is not None) is hosted
        finally:
            await server.close()
            await host.aclose()
