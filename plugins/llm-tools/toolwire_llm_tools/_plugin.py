"""The ``llm-tools`` plugin: the tools of every installed ``llm-tools-*`` package.

Importing this module is cheap: ``llm`` and the tool packages are imported when the host collects
its tools, never for ``toolwire --help`` or ``toolwire plugins``.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import toolwire

from ._settings import PLUGIN_NAME, LlmToolsSettings

if TYPE_CHECKING:
    from toolwire import Host, Tool

    from ._loader import LlmTools

# The host structures one LlmToolsSettings per host (compared by identity) and calls
# toolwire_tools with it: the tools and toolbox threads made for that host are found through
# it, and go with it.
_STATES: weakref.WeakKeyDictionary[LlmToolsSettings, LlmTools] = weakref.WeakKeyDictionary()


class LlmToolsFailed(Exception):
    """Some llm tool packages, toolboxes or tools cannot be used; the message names each."""


def state_for(settings: Any) -> LlmTools | None:
    """The llm tools of the host whose ``[tools.llm-tools]`` is ``settings``."""
    if not isinstance(settings, LlmToolsSettings):
        return None
    state = _STATES.get(settings)
    if state is None:
        from ._loader import LlmTools

        state = _STATES[settings] = LlmTools(settings)
    return state


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.llm-tools]`` is structured into :class:`LlmToolsSettings`."""
    return LlmToolsSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_configure(host: Host) -> None:
    """End the toolboxes' threads made for ``host`` when it closes."""
    settings = host.plugin_settings(PLUGIN_NAME)

    async def close() -> None:
        state = _STATES.get(settings)
        if state is not None:
            await state.aclose()

    if isinstance(settings, LlmToolsSettings):
        host.on_close(close)


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[Tool]:
    """The configured tools of every chosen llm tool package."""
    state = state_for(settings)
    return state.tools() if state is not None else []


@toolwire.hookimpl(specname="toolwire_tools")
def report_problems(settings: Any) -> None:
    """Report the packages, toolboxes and tools that cannot be used as this plugin's failure,
    so ``toolwire plugins`` and ``doctor`` show them; every other tool stays registered."""
    state = state_for(settings)
    if state is None:
        return
    state.tools()
    if state.problems:
        raise LlmToolsFailed("; ".join(state.problems))
