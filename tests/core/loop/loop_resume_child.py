"""Child process of the resume crash tests: approves the deferred charge and is killed later."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loop_resume_tools import RUN_ID, SCRIPT, make_config, plugin

from toolwire import Host
from toolwire.loop import Approve, ToolCallingLoop
from toolwire.testing import ScriptedModel


async def main(workdir: Path, url: str | None) -> None:
    host = Host.load(config=make_config(workdir, url), plugins=[plugin(workdir)])
    loop = ToolCallingLoop(host, adapter=ScriptedModel(script=SCRIPT))
    run = loop.load(RUN_ID)
    await loop.resume(run, {d.call_id: Approve() for d in run.deferred})


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
