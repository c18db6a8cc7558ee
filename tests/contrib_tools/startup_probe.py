"""What building a tool package's tools (what ``toolwire tools list`` does) costs at startup,
seen from a fresh interpreter: the test session has long imported everything."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

_PROBE = """
import json, re._compiler, sys
compiled = []
compile = re._compiler.compile
def counting(pattern, flags=0):
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.endswith(
        ("re/__init__.py", "re/_compiler.py")
    ):
        frame = frame.f_back
    name = frame.f_code.co_filename if frame is not None else "?"
    # The schema check compiles each `pattern` a tool's parameters declare, to refuse a bad one.
    if "toolwire" in name and not name.endswith("_schemacheck.py"):
        compiled.append([name, str(pattern)])
    return compile(pattern, flags)
re._compiler.compile = counting
from {package} import _plugin
tools = _plugin.toolwire_tools({{}})
print(json.dumps({{
    "tools": [t.name for t in tools],
    "compiled": compiled,
    "modules": sorted(m for m in {modules!r} if m in sys.modules),
}}))
"""


def build_tools(package: str, modules: Sequence[str]) -> dict[str, Any]:
    """Build ``package``'s tools in a fresh interpreter: their names (``tools``), the patterns
    toolwire code compiled meanwhile (``compiled``: file and pattern) and which of ``modules``
    were imported (``modules``)."""
    code = _PROBE.format(package=package, modules=tuple(modules))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found
