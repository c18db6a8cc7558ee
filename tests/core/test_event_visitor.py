"""EventVisitor: one abstract method per event class, dispatch by class."""

from __future__ import annotations

import inspect

import attrs
import pytest

from toolwire import events
from toolwire.cli._render import TerminalRenderer, _Compact, _Notice
from toolwire.events import Event, EventVisitor, ToolBlockedEvent, ToolCompleted, ToolStarted
from toolwire.tools import ToolResult

EVENT_CLASSES = [
    cls
    for name in events.__all__
    if isinstance(cls := getattr(events, name), type)
    and issubclass(cls, Event)
    and cls is not Event
]


def _sample(cls: type[Event]) -> Event:
    """An instance of ``cls`` with a placeholder in every required field."""
    values = {
        field.name: "x" if field.type in ("str", "str | None") else None
        for field in attrs.fields(cls)
        if field.default is attrs.NOTHING
    }
    values["run_id"] = "r"
    return cls(**values)


def _returns(name: str) -> object:
    return lambda self, event: name


# A visitor whose every handler returns its own name.
_Named: type[EventVisitor[str]] = type(
    "_Named",
    (EventVisitor,),
    {
        name: _returns(name)
        for name in ["on_event", *(f"on_{_sample(cls).kind}" for cls in EVENT_CLASSES)]
    },
)


def test_every_event_class_has_its_own_abstract_handler() -> None:
    handlers = {name for name in dir(EventVisitor) if name.startswith("on_")}
    expected = {f"on_{_sample(cls).kind}" for cls in EVENT_CLASSES} | {"on_event"}
    assert handlers == expected
    assert EventVisitor.__abstractmethods__ == frozenset(expected)


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda cls: cls.__name__)
def test_visit_calls_the_handler_of_the_event_class(cls: type[Event]) -> None:
    event = _sample(cls)
    assert _Named().visit(event) == f"on_{event.kind}"


def test_a_subclass_of_an_event_goes_to_its_base_and_a_foreign_event_to_on_event() -> None:
    @attrs.frozen(kw_only=True)
    class Completed(ToolCompleted):
        extra: int = 0

    @attrs.frozen(kw_only=True)
    class Custom(Event):
        pass

    visitor = _Named()
    completed = Completed(run_id="r", call_id="c", name="t", result=ToolResult.ok("x"))
    assert visitor.visit(completed) == "on_tool_completed"
    assert visitor.visit(completed) == "on_tool_completed"  # remembered
    assert visitor.visit(Custom(run_id="r")) == "on_event"
    blocked = ToolBlockedEvent(run_id="r", call_id="c", name="t", result=ToolResult.ok("x"))
    assert visitor.visit(blocked) == "on_tool_blocked"


def test_a_visitor_that_leaves_an_event_out_cannot_be_made() -> None:
    class Partial(EventVisitor[None]):
        def on_event(self, event: Event) -> None:
            pass

        def on_tool_started(self, event: ToolStarted) -> None:
            pass

    assert "on_tool_completed" in Partial.__abstractmethods__
    assert "on_tool_started" not in Partial.__abstractmethods__
    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]


@pytest.mark.parametrize("consumer", [TerminalRenderer, _Notice, _Compact])
def test_the_consumers_handle_every_event(consumer: type[EventVisitor[object]]) -> None:
    assert not inspect.isabstract(consumer), sorted(consumer.__abstractmethods__)
