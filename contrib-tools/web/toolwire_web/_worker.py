"""HTML conversion in a child process that a deadline, a cancellation or the host can kill.

A thread cannot be stopped, and the HTML parser is native code that holds on to it: a page
built to make the parser slow would keep running after its call was given up, and keep the
host from exiting. A child process is killed instead, and the next page starts a fresh one.

The parent and the child exchange one line of JSON each way per page (the body travels as
base64). The child is started with ``python -m toolwire_web._worker``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import asyncio

    from toolwire import ToolContext

# asyncio is imported where a conversion runs (in an event loop, so already loaded), not at
# import: enabling the plugin must not cost `toolwire plugins` the asyncio import.

__all__ = ["ConversionFailed", "ConversionWorker", "conversion_worker"]

# The most memory the child may map: a page over it fails alone instead of the machine.
_CHILD_ADDRESS_SPACE: Final = 2 * 1024**3
# The longest reply line: the Markdown of the largest page the retrieval lets through, with
# room for escapes.
_REPLY_LIMIT: Final = 256 * 1024 * 1024
_FIELDS: Final = ("markdown", "title", "description", "author", "date", "language", "degraded")
_STASH_KEY: Final = "toolwire_web.conversion_workers"
_EXIT_GRACE: Final = 1.0


class ConversionFailed(Exception):
    """A page could not be converted: the time ran out, or the child process failed.

    The message says which, for the tool's result.
    """


class ConversionWorker:
    """One child process converting pages, one page at a time, restarted after a kill.

    Use from one event loop; close with :meth:`aclose`.
    """

    def __init__(self) -> None:
        import asyncio

        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    async def convert_html(
        self,
        body: bytes,
        *,
        url: str,
        charset: str | None,
        time_limit: float,
        cancelled: asyncio.Event | None = None,
    ) -> dict[str, str | None]:
        """Convert an HTML page in the child; return its fields (see ``ExtractedPage``).

        :param time_limit: seconds the conversion may take; the child is killed when it runs out.
        :param cancelled: an event whose setting stops the conversion (the child is killed).
        :raises ConversionFailed: when the time runs out, the call is cancelled through
            ``cancelled``, or the child fails.
        """
        request = json.dumps(
            {"body": base64.b64encode(body).decode("ascii"), "url": url, "charset": charset}
        ).encode("ascii")
        async with self._lock:
            process = await self._started()
            try:
                line = await _within(self._exchange(process, request), time_limit, cancelled)
            except TimeoutError:
                await self._kill()
                raise ConversionFailed(
                    f"converting the page took longer than {time_limit:g} s "
                    "([tools.web] convert_timeout); it was stopped"
                ) from None
            except _Cancelled:
                await self._kill()
                raise ConversionFailed(
                    "the run was cancelled while the page was converted"
                ) from None
            except BaseException:
                await self._kill()
                raise
        if not line:
            code = await self._kill()
            raise ConversionFailed(f"the page converter stopped unexpectedly (exit status {code})")
        return _reply(line)

    async def aclose(self) -> None:
        """Stop the child: let it finish on end of input, kill it if it does not (idempotent)."""
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        import asyncio

        try:
            await asyncio.wait_for(process.wait(), _EXIT_GRACE)
        except TimeoutError:
            await _kill(process)

    async def _started(self) -> asyncio.subprocess.Process:
        import asyncio

        process = self._process
        if process is None or process.returncode is not None:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "toolwire_web._worker",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                limit=_REPLY_LIMIT,
            )
            self._process = process
        return process

    async def _exchange(self, process: asyncio.subprocess.Process, request: bytes) -> bytes:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(request + b"\n")
        with contextlib.suppress(ConnectionError):
            await process.stdin.drain()
        try:
            return await process.stdout.readline()
        except ValueError:  # a reply longer than the limit
            raise ConversionFailed(
                f"the converted page is larger than {_REPLY_LIMIT} bytes"
            ) from None

    async def _kill(self) -> int | None:
        process, self._process = self._process, None
        if process is None:
            return None
        return await _kill(process)


class _Cancelled(Exception):
    pass


async def _within(work: Any, time_limit: float, cancelled: asyncio.Event | None) -> bytes:
    """Await ``work`` for at most ``time_limit`` seconds, or until ``cancelled`` is set."""
    import asyncio

    task = asyncio.ensure_future(work)
    waiters: set[asyncio.Future[Any]] = {task}
    watcher = None if cancelled is None else asyncio.ensure_future(cancelled.wait())
    if watcher is not None:
        waiters.add(watcher)
    try:
        done, _ = await asyncio.wait(
            waiters, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        for waiter in waiters:
            if not waiter.done():
                waiter.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await waiter
    if task in done:
        result: bytes = task.result()
        return result
    if watcher is not None and watcher in done:
        raise _Cancelled
    raise TimeoutError


async def _kill(process: asyncio.subprocess.Process) -> int | None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    return await process.wait()


def _reply(line: bytes) -> dict[str, str | None]:
    """The fields of the child's reply, each checked to be text or None."""
    try:
        reply = json.loads(line)
    except ValueError:
        raise ConversionFailed("the page converter sent an unreadable reply") from None
    if not isinstance(reply, dict):
        raise ConversionFailed("the page converter sent an unreadable reply")
    if "error" in reply:
        raise ConversionFailed(f"the page could not be converted: {str(reply['error'])[:300]}")
    fields: dict[str, str | None] = {}
    for name in _FIELDS:
        value = reply.get(name)
        if value is not None and not isinstance(value, str):
            raise ConversionFailed(f"the page converter sent a {type(value).__name__} as {name}")
        fields[name] = value
    return fields


def conversion_worker(context: ToolContext | None) -> tuple[ConversionWorker, bool]:
    """The host's conversion worker for this event loop, and whether the caller must close it.

    With a host, the worker lives as long as the host (closed with it); without one, the
    caller gets a fresh worker to close after its call.
    """
    host: Any = context.services.get("host") if context is not None else None
    stash = getattr(host, "stash", None)
    if stash is None:
        return ConversionWorker(), True
    import asyncio

    workers: dict[int, ConversionWorker] = stash.setdefault(_STASH_KEY, {})
    key = id(asyncio.get_running_loop())
    worker = workers.get(key)
    if worker is None:
        worker = workers[key] = ConversionWorker()
        host.on_close(worker.aclose)
    return worker, False


# -- the child ---------------------------------------------------------------------------------


def _limit_memory() -> None:
    try:
        import resource
    except ImportError:  # not on POSIX: the time bound still holds
        return
    with contextlib.suppress(ValueError, OSError):
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = (
            _CHILD_ADDRESS_SPACE
            if hard == resource.RLIM_INFINITY
            else min(hard, _CHILD_ADDRESS_SPACE)
        )
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _convert_one(line: bytes) -> dict[str, Any]:
    from ._extract import extract_page

    try:
        request = json.loads(line)
        body = base64.b64decode(request["body"], validate=True)
        url, charset = request.get("url"), request.get("charset")
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        return {"error": f"unreadable request ({type(exc).__name__})"}
    try:
        try:
            page = extract_page(body, url=url, encoding=charset)
        except ValueError:  # a charset label nobody knows: let the page's <meta> decide
            page = extract_page(body, url=url)
    except (MemoryError, RecursionError, ValueError) as exc:
        return {"error": f"{type(exc).__name__} while reading the page"}
    return {name: getattr(page, name) for name in _FIELDS}


def main() -> None:
    """Convert pages read from stdin, one JSON line each, until stdin ends."""
    _limit_memory()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        reply = json.dumps(_convert_one(line), ensure_ascii=True).encode("ascii")
        stdout.write(reply + b"\n")
        stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
