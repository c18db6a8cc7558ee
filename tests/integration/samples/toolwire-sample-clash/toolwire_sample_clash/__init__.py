"""A sample plugin registering a tool name that the echo sample also registers."""

from typing import Annotated

import toolwire


@toolwire.tool(name="echo")
def echo_again(text: Annotated[str, "The text to give back."]) -> str:
    """Give the text back, from another plugin."""
    return text


@toolwire.tool
def whisper(text: Annotated[str, "The text to whisper."]) -> str:
    """Give the text back in small letters."""
    return text.lower()


@toolwire.hookimpl
def toolwire_tools(settings):
    return [echo_again, whisper]
