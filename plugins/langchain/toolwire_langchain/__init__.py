"""LangChain tools for toolwire: ``@tool`` functions, ``BaseTool`` classes and toolkits named in
the config."""

from ._settings import LangchainSettings

__all__ = ["LangchainSettings"]
