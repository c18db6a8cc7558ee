"""Child process of the ledger crash test: starts the run and is killed while calls block."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loop_crash_tools import RUN_ID, SCRIPT, make_config, plugin

from toolwire import Host
from toolwire.loop import ToolCallingLoop
from toolwire.testing import ScriptedModel


async def main(workdir: Path) -> None:
    host = Host.load(config=make_config(workdir), plugins=[plugin(workdir)])
    loop = ToolCallingLoop(host, adapter=ScriptedModel(script=SCRIPT))
    await loop.run("pay, charge, fetch and note", run_id=RUN_ID)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
