"""``toolwire mcp add NAME -- COMMAND …`` writes the server into toolwire.toml, keeping the rest
of the file as it was."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

RAW_SERVER = Path(__file__).with_name("raw_server.py")
PLUGINS = {"TOOLWIRE_PLUGINS": "basics,mcp"}

CONFIG = """\
# my toolwire config: keep this comment
[plugins]
enable = ["basics"]  # the calculator

[loop]
max_rounds = 7   # tuned by hand
"""


def test_add_writes_the_server_and_keeps_the_file(toolwire_cli, tmp_path: Path):
    config = tmp_path / "toolwire.toml"
    config.write_text(CONFIG, encoding="utf-8")
    done = toolwire_cli(
        config,
        "mcp",
        "add",
        "raw",
        "--env",
        "RAW_VERSION=2",
        "--",
        sys.executable,
        str(RAW_SERVER),
        env=PLUGINS,
    )
    assert done.returncode == 0, done.stderr
    text = config.read_text(encoding="utf-8")
    assert text.startswith(CONFIG.split("\n[loop]")[0].replace('["basics"]', '["basics", "mcp"]'))
    assert "max_rounds = 7   # tuned by hand" in text
    data = tomllib.loads(text)
    assert data["plugins"]["enable"] == ["basics", "mcp"]
    server = data["tools"]["mcp"]["servers"]["raw"]
    assert server == {
        "command": sys.executable,
        "args": [str(RAW_SERVER)],
        "env": {"RAW_VERSION": "2"},
    }
    listed = subprocess.run(
        [sys.executable, "-m", "toolwire", "--config", str(config), "tools", "list"],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert "raw_echo" in listed.stdout, listed.stderr
    again = toolwire_cli(config, "mcp", "add", "raw", "--", "other-server", env=PLUGINS)
    assert again.returncode == 2
    assert "already has an MCP server 'raw'" in again.stderr
    forced = toolwire_cli(
        config, "mcp", "add", "raw", "--force", "--", "other-server", "--flag", env=PLUGINS
    )
    assert forced.returncode == 0, forced.stderr
    server = tomllib.loads(config.read_text())["tools"]["mcp"]["servers"]["raw"]
    assert server == {"command": "other-server", "args": ["--flag"]}


def test_add_refuses_a_bad_entry(toolwire_cli, tmp_path: Path):
    config = tmp_path / "toolwire.toml"
    config.write_text(CONFIG, encoding="utf-8")
    bad_name = toolwire_cli(config, "mcp", "add", "no spaces", "--", "x", env=PLUGINS)
    assert bad_name.returncode == 2
    assert "server name" in bad_name.stderr
    both = toolwire_cli(
        config, "mcp", "add", "x", "--url", "http://127.0.0.1:1/mcp", "--", "x", env=PLUGINS
    )
    assert both.returncode == 2
    assert config.read_text(encoding="utf-8") == CONFIG
