"""toolwire.untrusted's public surface, and that a host starts without loading it."""

from __future__ import annotations

import subprocess
import sys

import toolwire.untrusted


def test_exported_names() -> None:
    assert toolwire.untrusted.__all__ == [
        "FilterContext",
        "FilterOutcome",
        "FilteredText",
        "default_filter",
        "filter_result",
        "filter_text",
        "filter_untrusted",
    ]
    assert toolwire.untrusted.__all__ == sorted(toolwire.untrusted.__all__)
    public = {name for name in vars(toolwire.untrusted) if not name.startswith("_")}
    assert public == set(toolwire.untrusted.__all__)


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
