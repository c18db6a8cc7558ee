"""``run_in_thread``: a sync call on a worker thread, or on an executor of the caller's."""

from __future__ import annotations

import contextvars
import functools
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from toolwire.tools import run_in_thread

REQUEST = contextvars.ContextVar("REQUEST", default="none")


async def test_a_single_thread_executor_keeps_a_connection_usable():
    with ThreadPoolExecutor(max_workers=1) as own:
        connection = own.submit(sqlite3.connect, ":memory:").result()
        # On the loop's default pool the connection refuses to be used (made in another thread).
        with pytest.raises(sqlite3.ProgrammingError, match="same thread"):
            await run_in_thread(functools.partial(connection.execute, "select 1"))

        def answer() -> tuple[int]:
            row: tuple[int] = connection.execute("select 6 * 7").fetchone()
            return row

        for _ in range(3):
            assert await run_in_thread(answer, executor=own) == (42,)
        await run_in_thread(connection.close, executor=own)


async def test_the_callers_context_variables_reach_the_thread():
    REQUEST.set("r-17")
    with ThreadPoolExecutor(max_workers=1) as own:
        assert await run_in_thread(REQUEST.get, executor=own) == "r-17"
    assert await run_in_thread(REQUEST.get) == "r-17"


async def test_exceptions_come_back_as_themselves():
    def stop() -> None:
        raise StopIteration("no more")

    def leave() -> None:
        raise GeneratorExit

    def fail() -> None:
        raise KeyError("k")

    with ThreadPoolExecutor(max_workers=1) as own:
        # An asyncio future cannot carry StopIteration: handed over as it is, the call would
        # never finish. Raised in the coroutine, it is the RuntimeError of PEP 479.
        with pytest.raises(RuntimeError, match="StopIteration") as raised:
            await run_in_thread(stop, executor=own)
        assert isinstance(raised.value.__cause__, StopIteration)
        with pytest.raises(GeneratorExit):
            await run_in_thread(leave, executor=own)
        with pytest.raises(KeyError):
            await run_in_thread(fail)


async def test_the_call_runs_on_the_executors_thread():
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="own") as own:
        names = {await run_in_thread(lambda: threading.current_thread().name, executor=own)}
        names.add(await run_in_thread(lambda: threading.current_thread().name, executor=own))
    assert len(names) == 1
    assert names.pop().startswith("own")
