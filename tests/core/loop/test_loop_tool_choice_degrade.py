"""A tool choice the adapter cannot express is sent as the nearest one it can, with a warning,
instead of failing the request."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar

import attrs
import pytest
from loop_support import events_of, make_host

import toolwire
from toolwire.adapters import AdapterCapabilities
from toolwire.loop import ToolCallingLoop
from toolwire.testing import ScriptedModel


@toolwire.tool(side_effects=["read_only"])
def look(target: Annotated[str, "What to look at."]) -> str:
    """Look at a target."""
    return f"{target} looks fine"


@toolwire.tool(side_effects=["read_only"])
def count(text: Annotated[str, "What to count."]) -> str:
    """Count the words of a text."""
    return str(len(text.split()))


class Limited(ScriptedModel):
    """The scripted model behind a server that takes only some tool choices."""

    api: ClassVar[str] = "limited"

    def __init__(self, *, takes: set[str], **options: Any) -> None:
        super().__init__(**options)
        self.takes = frozenset(takes)

    @property
    def capabilities(self) -> AdapterCapabilities:
        return attrs.evolve(super().capabilities, tool_choice=self.takes)


@pytest.mark.parametrize(
    ("takes", "choice", "sent", "offered"),
    [
        ({"auto", "none"}, "look", "auto", ["look"]),
        ({"auto", "none", "required"}, "look", "required", ["look"]),
        ({"auto", "none"}, "required", "auto", ["count", "look"]),
        ({"auto"}, "none", "auto", []),
    ],
)
async def test_the_nearest_choice_is_sent_with_a_warning(
    tmp_path: Path, takes: set[str], choice: str, sent: str, offered: list[str]
) -> None:
    host = make_host(tmp_path, [look, count])
    model = Limited(takes=takes, script=["fine"])
    try:
        run = await ToolCallingLoop(host, adapter=model).run("go", tool_choice=choice)
    finally:
        await host.aclose()
    assert run.stop_reason == "answered"
    (request,) = model.requests
    assert (request.tool_choice, [f.name for f in request.functions]) == (sent, offered)
    (warning,) = events_of(run, "tool_choice_degraded")
    assert warning.sent == sent
    assert warning.requested == ("named" if choice == "look" else choice)
    assert f"it takes {', '.join(sorted(takes))}" in warning.detail


async def test_a_choice_the_adapter_takes_is_sent_as_is(tmp_path: Path) -> None:
    host = make_host(tmp_path, [look, count])
    model = Limited(takes={"auto", "none"}, script=["fine"])
    try:
        run = await ToolCallingLoop(host, adapter=model).run("go", tool_choice="none")
    finally:
        await host.aclose()
    (request,) = model.requests
    assert request.tool_choice == "none"
    assert events_of(run, "tool_choice_degraded") == []
