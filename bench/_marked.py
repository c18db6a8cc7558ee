"""Run a Python program with a mark at every HTTP request it makes, for valgrind's callgrind.

``python bench/_marked.py -m toolwire ARGS`` runs ``python -m toolwire ARGS``;
``python bench/_marked.py SCRIPT ARGS`` runs ``SCRIPT ARGS``. Before each request aiohttp's
``ClientSession`` makes, and once at the end, the program calls ``os.getppid()``, which neither
toolwire nor aiohttp calls: under ``valgrind --tool=callgrind --dump-before=getppid`` every
dump is then one request-to-request window, the same cut for any client built on aiohttp.
(``ClientSession._request`` is aiohttp's own; this file is a bench tool and pins nothing.)
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

import aiohttp


def _marked(request: Any) -> Any:
    def marked(self: aiohttp.ClientSession, *args: Any, **kwargs: Any) -> Any:
        os.getppid()
        return request(self, *args, **kwargs)

    return marked


def main() -> None:
    aiohttp.ClientSession._request = _marked(aiohttp.ClientSession._request)  # type: ignore[method-assign]
    argv = sys.argv[1:]
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    finally:
        os.getppid()


if __name__ == "__main__":
    main()
