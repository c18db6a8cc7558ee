"""About how many tokens a message takes, with the instructions sent along with it.

No tokenizer fits every model, and none is at hand offline for most of them: the count is an
estimate people read as "≈" (a word of up to six letters is one token, longer words one more
per six letters, a punctuation mark one, each letter of a script written without spaces one),
close enough to know whether a message is a line or a book.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from .._trust import levels_in_use
from ..usage import estimate_tokens

if TYPE_CHECKING:
    from ..host._host import Host


@attrs.frozen
class MessageCount:
    """The estimate for one message: its own tokens and those of the instructions sent with it
    (the base system prompt and the registered instructions of the tools it would offer)."""

    message: int
    instructions: int

    @property
    def total(self) -> int:
        """Both together."""
        return self.message + self.instructions

    def to_json(self) -> dict[str, int]:
        """``{"message", "instructions", "total"}``."""
        return {"message": self.message, "instructions": self.instructions, "total": self.total}


def count_message(host: Host, text: str, *, tool_choice: str = "auto") -> MessageCount:
    """The estimate for ``text`` sent on ``host``: with ``[loop] system_prompt`` and the
    registered instructions of every tool the config offers (none for ``tool_choice="none"``,
    only the named tool's for a tool's name). Needs no provider and no event loop."""
    from .._selection import Selection, first_reason

    parts = [host.config.loop.system_prompt or ""]
    if tool_choice != "none":
        try:
            selection = Selection.from_config(host.config, None, None, host.tools)
        except ValueError:  # an undefined profile offers nothing
            selection = None
        with levels_in_use(host.config.trust.levels):
            trust = host.config.provider.trust_level
            for tool in host.tools.values():
                if not tool.instructions or selection is None:
                    continue
                if tool_choice not in ("auto", "required") and tool.name != tool_choice:
                    continue
                if first_reason(selection, tool, trust, len(tool.name), "") is None:
                    parts.append(tool.instructions)
    return MessageCount(
        message=estimate_tokens(text), instructions=sum(estimate_tokens(p) for p in parts)
    )
