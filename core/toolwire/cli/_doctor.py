"""What ``toolwire doctor`` checks beyond the plugins and tool lint: the provider and the offer."""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..host._host import Host
    from ..tools import Tool


def provider_problems(host: Host) -> list[str]:
    """Why a run with this config could not talk to its provider (empty: nothing found).

    No adapter at all, an adapter name no enabled plugin registers, and an HTTP adapter without
    ``[provider] model`` (every HTTP API names the model in each request).
    """
    from ..adapters._http import HTTPProviderAdapter

    provider = host.provider_config
    classes = host.adapter_classes()
    registered = ", ".join(classes) or "none"
    if provider.adapter is None:
        return [
            "no provider: set [provider] adapter (registered adapters: "
            f"{registered}) with its base_url and model, or enable the llamacpp plugin for the "
            "embedded model"
        ]
    adapter_cls = classes.get(provider.adapter)
    if adapter_cls is None:
        return [
            f"[provider] adapter = {provider.adapter!r}: no enabled plugin registers this adapter; "
            f"registered adapters: {registered}"
        ]
    if issubclass(adapter_cls, HTTPProviderAdapter) and not provider.model:
        return [
            f"[provider] model is not set: {provider.adapter} names the model in every request "
            '(for example model = "qwen3:4b")'
        ]
    return []


class _Watched(tuple):  # type: ignore[type-arg]
    """The messages of the doctor's request, noting whether a resolver read them."""

    read = False

    def __iter__(self) -> Any:
        self.read = True
        return super().__iter__()

    def __getitem__(self, index: Any) -> Any:
        self.read = True
        return super().__getitem__(index)

    def __len__(self) -> int:
        self.read = True
        return super().__len__()


def withdrawn_tools(host: Host) -> dict[str, tuple[str, str]]:
    """The tools selected for every round that a round may leave out, each with its severity
    and why.

    A resolver that withdraws the tool without reading the conversation withdraws it from
    every conversation (``error``: a search tool without a backend); one that read the
    conversation first offers the tool when a conversation calls for it (``info``: the basics
    tools' relevance test).
    """
    from .._request import OfferRequest
    from .._trust import levels_in_use
    from ..messages import UserMessage
    from ..tools import Activation

    provider = host.provider_config
    with levels_in_use(host.config.trust.levels):
        trust = provider.trust_level
    out: dict[str, tuple[str, str]] = {}
    for name, tool in host.tools.items():
        if tool.activation is not Activation.SELECTED:
            continue  # offered from the conversation: nothing to judge without one
        messages = _Watched((UserMessage("doctor"),))
        request = OfferRequest(
            run_id="doctor",
            round=1,
            messages=messages,
            api=provider.adapter or "",
            model=provider.model,
            provider_trust=trust,
            settings=_settings(host, tool),
        )
        reason = _withdrawn(host, tool, request)
        if reason is None:
            continue
        if messages.read:
            out[name] = (
                "info",
                "offered when the conversation calls for it: its plugin reads the conversation "
                "before offering it",
            )
        else:
            out[name] = ("error", reason)
    return out


def _settings(host: Host, tool: Tool) -> Any:
    try:
        return host.plugin_settings(tool.plugin) or {}
    except Exception:
        return {}


def _withdrawn(host: Host, tool: Tool, request: Any) -> str | None:
    from ..loop import NOT_OFFERED

    section = f"[tools.{tool.plugin}]" if tool.plugin else "its settings"
    try:
        spec: Any = host.hook.toolwire_resolve_function(tool=tool, request=request)
        if inspect.isawaitable(spec):
            spec = asyncio.run(_awaited(spec))
    except Exception as exc:
        return f"resolving it raised {type(exc).__name__}: {exc}"
    if spec is None or spec is NOT_OFFERED:
        return f"never offered with this config: its plugin withdraws it (check {section})"
    return None


async def _awaited(value: Any) -> Any:
    return await value
