"""Stopping a generation that repeats itself, and keeping only what came before the repeat."""

from __future__ import annotations


class RepeatStop:
    """Holds back the last ``window`` pieces of a generation and tells when it loops.

    A run of ``window`` pieces (tokens, as the runtime streams them) that the generation already
    wrote, written again, means a small model has started to loop: greedy decoding never leaves
    a loop once in it, so the rest would repeat up to the token limit. The run written again is
    still held back when that is seen, and is dropped: the text passed on ends where the
    repetition began.
    """

    def __init__(self, window: int) -> None:
        if window < 1:
            raise ValueError(f"the repeat window must be at least 1 piece, not {window}")
        self.window = window
        self._pieces: list[str] = []
        self._seen: set[tuple[str, ...]] = set()
        self.repeated = False

    def feed(self, piece: str) -> str:
        """Take the next piece; return the text now safe to pass on.

        Once the pieces repeat a run written before (:attr:`repeated`), nothing more is passed
        on: the caller stops the generation.
        """
        if self.repeated:
            return ""
        pieces = self._pieces
        pieces.append(piece)
        left = pieces[-self.window - 1] if len(pieces) > self.window else ""
        if len(pieces) >= self.window:
            run = tuple(pieces[-self.window :])
            if run in self._seen:
                self.repeated = True
            else:
                self._seen.add(run)
        return left

    def flush(self) -> str:
        """The text still held back, once the generation ended without repeating itself."""
        return "" if self.repeated else "".join(self._pieces[-self.window :])
