"""The command line and the terminal front end: commands, event rendering, approval prompts."""

from ._commands import main

__all__ = ["main"]
