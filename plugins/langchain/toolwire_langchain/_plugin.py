"""The ``langchain`` plugin: the LangChain tools named in ``[tools.langchain] tools``.

Importing this module is cheap: ``langchain_core`` (seconds to import) and the tools' modules
are imported only when the host collects its tools and some are named, never for
``toolwire --help``, ``toolwire plugins``, or a config that names none.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import toolwire

from ._settings import PLUGIN_NAME, LangchainSettings

if TYPE_CHECKING:
    from toolwire import Tool

    from ._loader import LangchainTools

# The host structures one LangchainSettings per host (compared by identity) and calls
# toolwire_tools with it: the tools made for that host are found through it.
_STATES: weakref.WeakKeyDictionary[LangchainSettings, LangchainTools] = weakref.WeakKeyDictionary()


class LangchainToolsFailed(Exception):
    """Some named LangChain tools cannot be used; the message names each."""


def state_for(settings: Any) -> LangchainTools | None:
    """The LangChain tools of the host whose ``[tools.langchain]`` is ``settings`` (None when
    it names none)."""
    if not isinstance(settings, LangchainSettings) or not settings.tools:
        return None
    state = _STATES.get(settings)
    if state is None:
        from ._loader import LangchainTools

        state = _STATES[settings] = LangchainTools(settings)
    return state


@toolwire.hookimpl
def toolwire_settings_class(plugin_name: str) -> type | None:
    """``[tools.langchain]`` is structured into :class:`LangchainSettings`."""
    return LangchainSettings if plugin_name == PLUGIN_NAME else None


@toolwire.hookimpl
def toolwire_tools(settings: Any) -> list[Tool]:
    """The named LangChain tools that could be loaded."""
    state = state_for(settings)
    return state.tools() if state is not None else []


@toolwire.hookimpl(specname="toolwire_tools")
def report_problems(settings: Any) -> None:
    """Report the named tools that cannot be used as this plugin's failure, so ``toolwire
    plugins`` and ``doctor`` show them; every other tool stays registered."""
    state = state_for(settings)
    if state is None:
        return
    state.tools()
    if state.problems:
        raise LangchainToolsFailed("; ".join(state.problems))
