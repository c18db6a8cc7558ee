"""llm's tool plugins for toolwire: the tools of every installed ``llm-tools-*`` package."""

from ._settings import LlmToolsSettings

__all__ = ["LlmToolsSettings"]
