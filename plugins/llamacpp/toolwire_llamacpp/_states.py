"""System prompts the model evaluated, kept so that a later request starting with one skips it."""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._settings import LlamaCppError

if TYPE_CHECKING:
    import llama_cpp


class PromptStates:
    """The context's state right after each of the last ``limit`` system prompts evaluated.

    The system prompt holds the offered tools, so it changes with the question, and llama.cpp
    keeps only the prompt it evaluated last. A request whose system prompt was evaluated for an
    earlier one (the same tools) restores the state saved then instead of evaluating it again:
    a system prompt of 700 tokens is some 5 s of CPU for the 135M model on one core. A state
    holds the prompt's keys and values (about 23 kB a token for the 135M model).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.restored = 0
        self._saved: OrderedDict[tuple[int, ...], bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._saved)

    def prepare(self, llama: llama_cpp.Llama, head: Sequence[int]) -> None:
        """Make the context start with ``head``: kept there, restored, or evaluated and saved."""
        if self.limit < 1 or not head:
            return
        import llama_cpp

        key = tuple(head)
        current = llama.input_ids[: llama.n_tokens].tolist()
        shared = int(llama_cpp.Llama.longest_token_prefix(current, key))
        if shared == len(key):
            if key in self._saved:
                self._saved.move_to_end(key)
            return
        saved = self._saved.get(key)
        if saved is not None:
            self._restore(llama, key, saved)
            self._saved.move_to_end(key)
            self.restored += 1
            return
        llama.n_tokens = shared  # evaluation starts after what the context shares with head
        llama.eval(key[shared:])
        self._saved[key] = self._save(llama)
        while len(self._saved) > self.limit:
            self._saved.popitem(last=False)

    def clear(self) -> None:
        """Drop every saved state (the model is being freed)."""
        self._saved.clear()

    @staticmethod
    def _save(llama: llama_cpp.Llama) -> bytes:
        import llama_cpp

        size = llama_cpp.llama_state_get_size(llama.ctx)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_get_data(llama.ctx, buffer, size)
        return bytes(buffer)[:written]

    @staticmethod
    def _restore(llama: llama_cpp.Llama, key: tuple[int, ...], saved: bytes) -> None:
        import llama_cpp

        buffer = (ctypes.c_uint8 * len(saved)).from_buffer_copy(saved)
        if llama_cpp.llama_state_set_data(llama.ctx, buffer, len(saved)) != len(saved):
            raise LlamaCppError("llama.cpp could not restore a saved system prompt's state")
        llama.input_ids[: len(key)] = key
        llama.n_tokens = len(key)
