"""A host starts without loading toolwire.untrusted."""

from __future__ import annotations

import subprocess
import sys


def test_a_host_loads_the_filter_only_when_it_is_used() -> None:
    code = (
        "import sys\n"
        "from toolwire import Config, Host\n"
        "Host.load(Config())\n"
        "print('toolwire.untrusted' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"
