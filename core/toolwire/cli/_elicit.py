"""A tool's question to the person (:mod:`toolwire.elicitation`), asked on the terminal.

The question's texts come from outside (an MCP server): they are printed inert. A form asks
each field in turn (its title, whether it is required, its choices), again until the typed
value fits; an empty answer to the first question declines, Ctrl-D cancels.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TextIO

from ..elicitation import ElicitationAnswer, ElicitationRequest, form_fields
from ._text import inert

Ask = Callable[[str], Awaitable[str | None]]

_TRIES = 3


class TerminalElicitor:
    """Puts :class:`ElicitationRequest` s to the person at the terminal through ``ask`` (one
    line per question), writing to ``out``; ``pause`` readies the screen first."""

    def __init__(self, out: TextIO, ask: Ask, pause: Callable[[], None] = lambda: None) -> None:
        self.out = out
        self.ask = ask
        self.pause = pause

    async def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        self.pause()
        during = f" (while running {request.tool})" if request.tool else ""
        self.out.write(f"\n{inert(request.source)} asks{during}:\n  {inert(request.message)}\n")
        if request.url is not None:
            self.out.write(f"  It asks you to open: {inert(request.url)}\n")
        self.out.flush()
        fields = form_fields(request.schema)
        verb = "Open it" if request.url is not None else "Answer"
        reply = await self.ask(f"{verb}? [y]es, [n]o: ")
        if reply is None:
            return ElicitationAnswer("cancel")
        if reply.strip().lower() not in ("y", "yes"):
            return ElicitationAnswer("decline")
        content: dict[str, object] = {}
        for field in fields:
            note = " (required)" if field.required else ""
            if field.choices:
                note += f" [{' / '.join(field.choices)}]"
            if field.description:
                self.out.write(f"  {inert(field.description)}\n")
            for _ in range(_TRIES):
                text = await self.ask(f"  {inert(field.title)}{note}: ")
                if text is None:
                    return ElicitationAnswer("cancel")
                try:
                    value = field.parse(text)
                except ValueError as exc:
                    self.out.write(f"  expected {inert(str(exc))}\n")
                    continue
                if value is None and field.required:
                    self.out.write("  this one is required\n")
                    continue
                if value is not None:
                    content[field.name] = value
                break
            else:
                return ElicitationAnswer("cancel")
        return ElicitationAnswer("accept", content)
