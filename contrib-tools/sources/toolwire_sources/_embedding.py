"""Embeddings from WordLlama's 256-dimension weights, which ship inside its wheel."""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MODEL = "wordllama-l2_supercat-256"
DIMENSIONS = 256
_lock = threading.Lock()


class EmbeddingUnavailable(RuntimeError):
    """The WordLlama weights or tokenizer could not be loaded."""


@functools.cache
def _model() -> Any:
    # The weights and the tokenizer are files of the wordllama package. WordLlama.load() looks
    # for the tokenizer under "tokenizer/" while the wheel ships it under "tokenizers/", and then
    # downloads it; loading the two files directly never reaches the network.
    import wordllama  # type: ignore[import-untyped]
    from safetensors import safe_open
    from wordllama import WordLlama
    from wordllama.inference import WordLlamaInference  # type: ignore[import-untyped]

    root = Path(wordllama.__file__).parent
    weights = root / "weights" / "l2_supercat_256.safetensors"
    tokenizer_file = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
    for needed in (weights, tokenizer_file):
        if not needed.is_file():
            raise EmbeddingUnavailable(
                f"{needed} is missing from the wordllama package; reinstall wordllama>=0.3.9"
            )
    tokenizer = WordLlama.load_tokenizer(tokenizer_file)
    with safe_open(str(weights), framework="np", device="cpu") as handle:
        embedding = handle.get_tensor("embedding.weight")
    return WordLlamaInference(embedding, tokenizer, binary=False)


def embed(texts: list[str]) -> npt.NDArray[np.float32]:
    """Unit-length embeddings of ``texts``, one row each (zero rows for texts with no tokens)."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    with _lock:
        model = _model()
    vectors = np.asarray(model.embed(texts), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: npt.NDArray[np.float32] = vectors / norms
    return unit
