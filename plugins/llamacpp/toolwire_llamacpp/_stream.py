"""Reading constrained output as it arrives: answer text, or one call in the json dialect."""

from __future__ import annotations

import json
import re
from typing import Final

from toolwire.adapters import CallAssembler, EmitEvent, ModelRequest

from ._grammar import CALL_OPEN

# What the grammar writes before a call's arguments: `<tool_call>` `{"name": "…", "arguments": `.
_CALL_HEAD: Final = re.compile(r'<tool_call>\n?\{ ?"name": ?("(?:[^"\\]|\\.)*"), ?"arguments": ?')


def _no_events(event: object) -> None:
    return None


class OutputReader:
    """Turns the pieces of one constrained reply into stream events.

    The grammar admits an answer (text that never opens a call) or exactly one call, so the
    first characters decide: text that stops matching ``<tool_call>`` is an answer and streams
    as ``TextDelta``; a call is announced once its name is complete, and its arguments stream as
    ``ToolCallArgumentsDelta`` up to the end of the arguments object. The final call is read by
    the prompted parser (see the adapter), which emits ``ToolCallCompleted``.
    """

    def __init__(self, request: ModelRequest, emit: EmitEvent, call_id: str) -> None:
        self.call_id = call_id
        self.assembler = CallAssembler(
            request, emit if request.stream else _no_events, id_factory=lambda: call_id
        )
        self.text = ""
        self.mode: str | None = None
        self.name: str | None = None
        self._fed = 0
        self._arguments_end: int | None = None
        self._depth = 0
        self._in_string = False
        self._escaped = False

    @property
    def started_call(self) -> bool:
        """True once a call's name was announced."""
        return self.name is not None

    def feed(self, piece: str) -> None:
        """Take the next piece of generated text."""
        self.text += piece
        if self.mode is None:
            if self.text.startswith(CALL_OPEN):
                self.mode = "call"
            elif not CALL_OPEN.startswith(self.text):
                self.mode = "answer"
                self.assembler.text(self.text)
                return
            else:
                return
        if self.mode == "answer":
            self.assembler.text(piece)
            return
        self._read_call()

    def finish(self) -> None:
        """The reply is over: text held back while it could still open a call is an answer."""
        if self.mode is None and self.text:
            self.mode = "answer"
            self.assembler.text(self.text)

    def _read_call(self) -> None:
        if self.name is None:
            head = _CALL_HEAD.match(self.text)
            if head is None:
                return
            self.name = json.loads(head[1])
            self.assembler.begin("call", call_id=self.call_id, name=self.name)
            self._fed = head.end()
        if self._arguments_end is not None:
            return
        end = self._scan_arguments()
        upto = end if end is not None else len(self.text)
        delta = self.text[self._fed : upto]
        self._fed = upto
        if delta:
            self.assembler.arguments("call", delta)
        self._arguments_end = end

    def _scan_arguments(self) -> int | None:
        """Where the arguments object ends (exclusive), once it has; strings are skipped."""
        for index in range(self._fed, len(self.text)):
            ch = self.text[index]
            if self._in_string:
                if self._escaped:
                    self._escaped = False
                elif ch == "\\":
                    self._escaped = True
                elif ch == '"':
                    self._in_string = False
            elif ch == '"':
                self._in_string = True
            elif ch in "{[":
                self._depth += 1
            elif ch in "}]":
                self._depth -= 1
                if self._depth == 0:
                    return index + 1
        return None
