"""An llm tool plugin module written the way llm's documentation shows, for the shapes the real
packages of the tests do not use: ``llm_tool_call``, ``ToolOutput``, ``PauseChain``, async
functions, ``llm.Tool`` objects, names given to ``register``, and a bad registration."""

from __future__ import annotations

import threading
from typing import Any

import llm

SEEN_CALLS: list[Any] = []


def whoami(greeting: str, llm_tool_call: llm.ToolCall) -> str:
    """Greet, naming the call."""
    SEEN_CALLS.append(llm_tool_call)
    return f"{greeting} from {llm_tool_call.tool_call_id}"


def chart(title: str) -> llm.ToolOutput:
    """Draw a chart."""
    picture = llm.Attachment(type="image/png", content=b"\x89PNG fake")
    return llm.ToolOutput(output={"title": title, "points": 3}, attachments=[picture])


def ask_person(question: str) -> str:
    """Ask the person at the keyboard."""
    raise llm.PauseChain(f"waiting for an answer to {question!r}")


async def slow_upper(text: str) -> str:
    """Upper-case a text, asynchronously."""
    return text.upper()


def thread_name() -> str:
    """The name of the thread the tool runs on."""
    return threading.current_thread().name


def _echo_all(**arguments: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(arguments.items()))


ECHO = llm.Tool(
    name="echo_all",
    description="Echo every argument.",
    input_schema={"type": "object", "properties": {"a": {"type": "string"}}},
    implementation=_echo_all,
)


class Counter(llm.Toolbox):
    """Counts, on the thread it was made on."""

    def __init__(self, start: int = 0) -> None:
        self.value = start
        self.made_on = threading.current_thread().name

    def increment(self, by: int = 1) -> str:
        """Add to the count and say where."""
        self.value += by
        return f"{self.value} on {threading.current_thread().name} (made on {self.made_on})"


class Keyed(llm.Toolbox):
    """A toolbox whose constructor refuses its key, repeating it."""

    def __init__(self, api_key: str) -> None:
        raise ValueError(f"the key {api_key} was refused")

    def search(self, query: str) -> str:
        """Search."""
        return query


class NotAToolbox:
    pass


@llm.hookimpl
def register_tools(register: Any) -> None:
    register(whoami)
    register(chart)
    register(ask_person)
    register(slow_upper)
    register(thread_name, name="where_am_i")
    register(ECHO)
    register(Counter)
    register(Keyed)


@llm.hookimpl(specname="register_tools")
def register_broken(register: Any) -> None:
    register(NotAToolbox)
