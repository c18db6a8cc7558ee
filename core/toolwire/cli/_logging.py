"""Where the command line's log records go: a log file, and stderr with ``--verbose``.

A tool that raises is logged with its traceback (the ``toolwire.tools`` logger). Without a
handler Python's last-resort handler would print that traceback on stderr, in the middle of a
chat card; people read the error result instead, and the traceback waits in the log file
(``$XDG_STATE_HOME/toolwire/toolwire.log``, else ``~/.local/state/toolwire/toolwire.log``;
``$TOOLWIRE_LOG_FILE`` names another, an empty one turns the file off). ``--verbose`` also
writes every record, tracebacks included, to stderr.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TextIO

LOG_FILE_ENV = "TOOLWIRE_LOG_FILE"
LOG_FILE_NAME = "toolwire.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_HANDLED = "_toolwire_cli_handler"


def log_file() -> Path | None:
    """The log file of the command line (None when ``$TOOLWIRE_LOG_FILE`` is empty)."""
    named = os.environ.get(LOG_FILE_ENV)
    if named is not None:
        return Path(named).expanduser() if named else None
    base = os.environ.get("XDG_STATE_HOME")
    root = Path(base) if base else Path.home() / ".local" / "state"
    return root / "toolwire" / LOG_FILE_NAME


class _LazyFileHandler(logging.FileHandler):
    """A file handler that makes its folder and file owner-only when it first writes (tracebacks
    show arguments and paths), and gives up quietly when it cannot: a log that cannot be
    written never fails a command."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", delay=True)

    def _open(self) -> TextIO:  # type: ignore[override]
        path = Path(self.baseFilename)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # A file made here is the owner's alone, whatever the folder or the umask allow; one
        # that exists keeps the mode its owner gave it.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)

    def handleError(self, record: logging.LogRecord) -> None:
        self.close()


def configure_logging(*, verbose: bool = False, err: TextIO | None = None) -> None:
    """Send the ``toolwire`` loggers' records (warnings and worse; everything with ``verbose``)
    to the log file, and with ``verbose`` to ``err`` as well (the logger's own level is left
    alone unless ``verbose``). Records never reach Python's
    last-resort handler. Calling it again replaces what an earlier call set."""
    root = logging.getLogger("toolwire")
    for handler in list(root.handlers):
        if getattr(handler, _HANDLED, False):
            root.removeHandler(handler)
            handler.close()
    handlers: list[logging.Handler] = []
    path = log_file()
    if path is not None:
        handlers.append(_LazyFileHandler(path))
    if verbose:
        handlers.append(logging.StreamHandler(err))
    if not handlers:
        handlers.append(logging.NullHandler())
    formatter = logging.Formatter(_FORMAT)
    for handler in handlers:
        setattr(handler, _HANDLED, True)
        handler.setFormatter(formatter)
        root.addHandler(handler)
    if verbose:
        root.setLevel(logging.DEBUG)
    else:
        for handler in handlers:
            handler.setLevel(logging.WARNING)
