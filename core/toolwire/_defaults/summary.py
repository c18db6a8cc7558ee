"""Default summary of older turns: the run's own provider writes it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._markers import hookimpl

if TYPE_CHECKING:
    from ..context import SummaryRequest

INSTRUCTIONS = (
    "You keep a long conversation inside the context window. Summarise the part of it below "
    "so that you can go on with the task from the summary alone: what was asked, what was "
    "decided and done, every fact and figure the tool results gave that may still matter "
    "(with the tool and call that gave it), and what is still open. Write plain prose and "
    "lists, no preamble."
)


@hookimpl(trylast=True)
async def toolwire_summarize_conversation(request: SummaryRequest) -> str | None:
    """Ask the run's provider, without tools, to summarise the turns."""
    # Imported here: a host that never compacts (``toolwire plugins``) loads none of it.
    from ..context import transcript
    from ..messages import SystemMessage, UserMessage

    answer = await request.ask(
        (SystemMessage(INSTRUCTIONS), UserMessage(transcript(request.messages)))
    )
    return answer.text.strip() or None
