"""``import toolwire`` leaves toolwire.net (and aiohttp) unloaded; loopback authorities."""

from __future__ import annotations

import subprocess
import sys


def test_import_toolwire_does_not_import_the_net_package() -> None:
    code = "import sys, toolwire; print('toolwire.net' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"


def test_loopback_authorities_cover_every_spelling_of_the_bound_address() -> None:
    from toolwire.net import loopback_authorities, loopback_origins

    assert loopback_authorities("127.0.0.2", 8) == {
        "127.0.0.1:8",
        "localhost:8",
        "[::1]:8",
        "127.0.0.2:8",
    }
    assert {"[0:0:0:0:0:0:0:1]:8", "[::1]:8"} <= loopback_authorities("0:0:0:0:0:0:0:1", 8)
    assert "http://127.0.0.2:8" in loopback_origins("127.0.0.2", 8)
    assert "evil.example:8" not in loopback_authorities("localhost", 8)
