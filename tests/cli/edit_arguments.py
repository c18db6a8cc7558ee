"""A stand-in for ``$EDITOR``: checks it was given the arguments as indented JSON, then edits
them as a person would (``a.txt`` becomes ``edited.txt``)."""

from __future__ import annotations

import sys
from pathlib import Path

path = Path(sys.argv[-1])
text = path.read_text(encoding="utf-8")
assert text.startswith("{\n  "), text  # prefilled, one argument a line
path.write_text(text.replace('"a.txt"', '"edited.txt"'), encoding="utf-8")
