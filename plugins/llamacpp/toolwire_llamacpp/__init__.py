"""An embedded local model for toolwire: a GGUF model in-process, tools through a GBNF grammar."""

from ._adapter import LlamaCppAdapter
from ._grammar import GrammarError, ToolGrammar, build_grammar, tool_grammar
from ._settings import LlamaCppError, LlamaCppSettings, default_model_path

__all__ = [
    "GrammarError",
    "LlamaCppAdapter",
    "LlamaCppError",
    "LlamaCppSettings",
    "ToolGrammar",
    "build_grammar",
    "default_model_path",
    "tool_grammar",
]
