"""OAuth 2.1 against an authorization server written with the SDK on 127.0.0.1: without a
sign-in the server's tools say how to sign in; `toolwire mcp login NAME` runs the authorization
code flow with PKCE; the tokens are kept owner-only and used by every later command."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path


def test_login_then_use(toolwire_cli, write_config, oauth_server: str):
    url = oauth_server
    if True:
        config = write_config({"vault": {"url": url, "oauth": True}})
        before = toolwire_cli(config, "mcp", "servers", "--json")
        (row,) = json.loads(before.stdout)
        assert row["status"] == "failed"
        assert "toolwire mcp login vault" in row["error"]

        login = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolwire",
                "--config",
                str(config),
                "mcp",
                "login",
                "vault",
                "--no-browser",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert login.stderr is not None
        address = ""
        for line in login.stderr:
            if line.startswith("http"):
                address = line.strip()
                break
        assert "code_challenge=" in address
        assert "code_challenge_method=S256" in address
        # The person's browser: the authorization server approves and redirects to toolwire.
        with urllib.request.urlopen(address, timeout=60) as answer:
            assert b"Signed in" in answer.read()
        out, err = login.communicate(timeout=120)
        assert login.returncode == 0, err
        assert "Signed in to MCP server 'vault': 1 tool(s)" in out

        tokens = list((Path(os.environ["XDG_DATA_HOME"]) / "toolwire" / "mcp-oauth").iterdir())
        assert len(tokens) == 1
        assert stat.S_IMODE(tokens[0].stat().st_mode) == 0o600
        assert stat.S_IMODE(tokens[0].parent.stat().st_mode) == 0o700
        assert re.search(r'"access_token"', tokens[0].read_text())

        called = toolwire_cli(config, "tools", "call", "vault_secret")
        assert called.returncode == 0, called.stderr
        assert called.stdout.strip() == "the vault says 42"
