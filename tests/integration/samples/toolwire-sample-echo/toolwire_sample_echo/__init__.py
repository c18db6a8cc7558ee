"""A sample tool plugin: records its import, then offers `echo` and `shout`."""

import os
from typing import Annotated

import toolwire

_log = os.environ.get("TOOLWIRE_SAMPLE_IMPORT_LOG")
if _log:
    with open(_log, "a", encoding="utf-8") as fh:
        fh.write(__name__ + "\n")


@toolwire.tool
def echo(text: Annotated[str, "The text to give back."]) -> str:
    """Give the text back unchanged."""
    return text


@toolwire.tool
def shout(text: Annotated[str, "The text to shout."]) -> str:
    """Give the text back in capitals."""
    return text.upper()


@toolwire.hookimpl
def toolwire_tools(settings):
    return [echo, shout]
