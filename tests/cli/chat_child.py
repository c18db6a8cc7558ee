"""``toolwire chat`` as a program, with the tools of the terminal tests registered.

Run as ``python chat_child.py [--config FILE] chat [options]``: the real command line parser and
the real chat command, on a host that also has the tools below (a test cannot install a plugin
distribution for them).
"""

from __future__ import annotations

import asyncio
import sys

import toolwire
from toolwire import Host, ToolContext, ToolResult, TrustLevel
from toolwire.cli._chat import run_chat
from toolwire.cli._commands import _parser


@toolwire.tool(side_effects=["read_only"], idempotent=True, icon="🐢", title="Slow echo")
async def slow_echo(text: str, context: ToolContext) -> str:
    """Echo a text back, reporting progress on the way.

    Args:
        text: The text to echo.
    """
    for step in range(1, 6):
        context.report_progress(f"step {step} of 5", step / 5)
        await asyncio.sleep(0.3)
    return f"echo: {len(text)} characters"


@toolwire.tool(side_effects=["writes_files"], requires_approval=True, title="Write note")
def write_note(path: str, body: str) -> str:
    """Write a note to a file (asks first).

    Args:
        path: Where to write.
        body: What to write.
    """
    return f"wrote {len(body)} characters to {path}"


@toolwire.tool(side_effects=["read_only"])
async def wait_forever(seconds: int) -> str:
    """Wait a long time (to be interrupted).

    Args:
        seconds: How long.
    """
    await asyncio.sleep(seconds)
    return "waited"


@toolwire.tool(side_effects=["read_only"], title="Medical record")
def medical_record(patient: str) -> ToolResult:
    """Read a patient's record (only a highly trusted provider may see it).

    Args:
        patient: Who.
    """
    return ToolResult.ok(f"{patient}: blood type 0+", required_trust=TrustLevel.HIGH)


class ChatTools:
    @toolwire.hookimpl
    def toolwire_tools(self) -> list[toolwire.Tool]:
        return [slow_echo, write_note, wait_forever, medical_record]


def main() -> int:
    args = _parser().parse_args(sys.argv[1:])
    assert args.command == "chat", args
    host = Host.load(args.config, plugins=[ChatTools()])
    return run_chat(host, continue_id=args.continue_id, list_only=args.list, expanded=args.expanded)


if __name__ == "__main__":
    sys.exit(main())
