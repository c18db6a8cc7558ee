"""The command line and the terminal front end: commands, event rendering, approval prompts.

:func:`inert` is the one sanitizer for text from outside that a command prints (plugins' own
commands use it too).
"""

from ._commands import main
from ._text import inert

__all__ = ["inert", "main"]
