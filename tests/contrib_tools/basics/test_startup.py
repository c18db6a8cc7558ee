"""Building the basics tools (what ``toolwire tools list`` does) compiles no pattern of the
package and imports nothing a call needs: the patterns, tables and modules come on first use."""

from __future__ import annotations

import json
import subprocess
import sys

# Run in a fresh interpreter: the test session has long imported everything.
PROBE = """
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
from toolwire_basics import _plugin
tools = _plugin.toolwire_tools({})
print(json.dumps({
    "tools": [t.name for t in tools],
    "compiled": compiled,
    "modules": sorted(m for m in ("difflib", "zoneinfo", "uuid", "toolwire.messages")
                      if m in sys.modules),
}))
"""


def test_building_the_tools_compiles_no_pattern_and_imports_no_call_machinery() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["tools"] == ["calculator", "current_time", "convert_time", "convert_units"]
    assert found["compiled"] == []
    assert found["modules"] == []
