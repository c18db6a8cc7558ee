"""Child process of the Ctrl-C test: a run whose tool waits, among plugins that raise
KeyboardInterrupt themselves; the parent sends SIGINT while the tool waits."""

from __future__ import annotations

import asyncio
import json
import sys
import types
from pathlib import Path

import toolwire
from toolwire import Config, Host
from toolwire.config import LedgerConfig
from toolwire.loop import ToolCallingLoop
from toolwire.messages import ToolResultMessage
from toolwire.testing import ScriptedModel, tool_call


def main(workdir: Path) -> None:
    @toolwire.tool
    async def wait() -> str:
        """Wait until interrupted."""
        (workdir / "waiting").write_text("")
        await asyncio.Event().wait()  # until the Ctrl-C cancels it
        return "waited"

    @toolwire.tool
    def after() -> str:
        """Never reached."""
        return "after"

    @toolwire.hookimpl
    def toolwire_event(event: object) -> None:
        raise KeyboardInterrupt("a plugin's own, not the user's")

    plugins = [
        types.SimpleNamespace(
            __name__="tools", toolwire_tools=toolwire.hookimpl(lambda settings: [wait, after])
        ),
        types.SimpleNamespace(__name__="hostile", toolwire_event=toolwire_event),
    ]
    config = Config(ledger=LedgerConfig(path=str(workdir / "ledger.sqlite3")))
    host = Host.load(config=config, plugins=plugins)
    script = [[tool_call("wait", id="a"), tool_call("after", id="b")], "done"]
    loop = ToolCallingLoop(host, adapter=ScriptedModel(script=script))
    try:
        asyncio.run(loop.run("wait, then after"))
    except KeyboardInterrupt:
        run = loop.last_run
        assert run is not None
        results = {
            m.call_id: m.result.model_text()
            for m in run.messages
            if isinstance(m, ToolResultMessage)
        }
        print(json.dumps({"stop_reason": run.stop_reason, "results": results}))
        sys.exit(130)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
