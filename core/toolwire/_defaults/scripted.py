"""Default plugin: the scripted in-process model, so ``[provider] adapter = "scripted"`` works."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._markers import hookimpl

if TYPE_CHECKING:
    from ..adapters import ProviderAdapter


@hookimpl(trylast=True)
def toolwire_provider_adapters(settings: Any) -> Iterable[type[ProviderAdapter]]:
    """:class:`toolwire.testing.ScriptedModel` under the API name ``scripted``."""
    from ..testing._scripted import ScriptedModel

    return [ScriptedModel]
