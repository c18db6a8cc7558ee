"""The core facades load their lazy names on first use, keep them, and refuse unknown ones."""

from __future__ import annotations

import importlib
import re

import pytest

from toolwire._lazy import lazy_getattr


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("toolwire", "Toolbox"),
        ("toolwire.tools", "lint_tool"),
        ("toolwire.testing", "FakeOpenAIChatServer"),
    ],
)
def test_a_lazy_name_is_loaded_once_and_kept(module: str, name: str) -> None:
    facade = importlib.import_module(module)
    value = getattr(facade, name)
    assert vars(facade)[name] is value
    assert getattr(facade, name) is value
    message = re.escape(f"module '{module}' has no attribute 'nothing'")
    with pytest.raises(AttributeError, match=message):
        getattr(facade, "nothing")  # noqa: B009


def test_relative_and_absolute_module_names() -> None:
    namespace: dict[str, object] = {"__name__": "toolwire.tools"}
    getattr_ = lazy_getattr(namespace, {"Page": "._paging", "Event": "toolwire.events"})
    from toolwire.events import Event
    from toolwire.tools import Page

    assert getattr_("Page") is Page
    assert getattr_("Event") is Event
    assert namespace["Page"] is Page
    with pytest.raises(AttributeError, match=r"module 'toolwire\.tools' has no attribute 'x'"):
        getattr_("x")
