"""A host process for the orphan tests: ``python host_child.py CONFIG MODE``.

``kill``: start the servers, say ``ready``, then die by SIGKILL (no cleanup runs at all).
``exit``: start the servers, say ``ready``, then leave without closing the host.
"""

from __future__ import annotations

import os
import signal
import sys

from toolwire import Host


def main() -> None:
    config, mode = sys.argv[1], sys.argv[2]
    host = Host.load(config)
    names = sorted(host.tools)
    print("ready", len(names), flush=True)
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    # mode "exit": fall off the end with the host open


if __name__ == "__main__":
    main()
