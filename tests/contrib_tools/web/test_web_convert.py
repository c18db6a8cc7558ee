"""HTML conversion in a child process: stopped by its time bound, by cancellation, and at close."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from web_support import Servers, make_host, results, run_model

from toolwire import ToolStatus
from toolwire.testing import tool_call
from toolwire_web._worker import ConversionFailed, ConversionWorker

ARTICLE = (
    b"<html><head><title>Tides</title></head><body><article><p>The tides at Brest are large, "
    b"semi-diurnal, and were measured by hand for centuries.</p></article></body></html>"
)


async def _convert(
    worker: ConversionWorker, time_limit: float, cancelled: asyncio.Event | None = None
) -> dict[str, str | None]:
    return await worker.convert_html(
        ARTICLE, url="https://x.example/", charset=None, time_limit=time_limit, cancelled=cancelled
    )


def _child_pid(worker: ConversionWorker) -> int:
    process = worker._process
    assert process is not None
    return process.pid


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_page_is_converted_in_a_child_process() -> None:
    worker = ConversionWorker()
    try:
        fields = await _convert(worker, 30)
        assert fields["title"] == "Tides"
        assert (fields["markdown"] or "").startswith("The tides at Brest are large")
        assert fields["degraded"] is None
        assert _child_pid(worker) != os.getpid()
    finally:
        await worker.aclose()


async def test_the_time_bound_kills_the_child_and_the_next_page_gets_a_new_one() -> None:
    worker = ConversionWorker()
    try:
        await _convert(worker, 30)
        first = _child_pid(worker)
        # The child must decode, parse and answer in a microsecond: it cannot.
        with pytest.raises(ConversionFailed, match=r"longer than 1e-06 s .*convert_timeout"):
            await _convert(worker, 1e-6)
        assert worker._process is None
        assert _gone(first)
        fields = await _convert(worker, 30)
        assert fields["title"] == "Tides"
        assert _child_pid(worker) != first
    finally:
        await worker.aclose()


async def test_cancellation_of_the_run_kills_the_child() -> None:
    worker = ConversionWorker()
    cancelled = asyncio.Event()
    try:
        await _convert(worker, 30)
        pid = _child_pid(worker)
        os.kill(pid, signal.SIGSTOP)  # a child stuck in the parser
        asyncio.get_running_loop().call_later(0.2, cancelled.set)
        with pytest.raises(ConversionFailed, match="cancelled"):
            await _convert(worker, 60, cancelled=cancelled)
        assert _gone(pid)
    finally:
        await worker.aclose()


async def test_a_task_cancelled_while_converting_kills_the_child() -> None:
    worker = ConversionWorker()
    await _convert(worker, 30)
    pid = _child_pid(worker)
    os.kill(pid, signal.SIGSTOP)
    task = asyncio.ensure_future(_convert(worker, 60))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _gone(pid)
    await worker.aclose()


async def test_a_child_that_dies_is_reported_and_replaced() -> None:
    worker = ConversionWorker()
    try:
        await _convert(worker, 30)
        os.kill(_child_pid(worker), signal.SIGKILL)
        # The status is -9, or 255 when asyncio's child watcher finds the child already reaped.
        with pytest.raises(
            ConversionFailed, match=r"stopped unexpectedly \(exit status (-9|255)\)"
        ):
            await _convert(worker, 30)
        fields = await _convert(worker, 30)
        assert fields["title"] == "Tides"
    finally:
        await worker.aclose()


async def test_closing_stops_the_child() -> None:
    worker = ConversionWorker()
    await _convert(worker, 30)
    pid = _child_pid(worker)
    await worker.aclose()
    assert _gone(pid)
    await worker.aclose()  # idempotent


@pytest.mark.usefixtures("loopback_only")
async def test_read_web_page_reports_a_conversion_out_of_time(
    tmp_path: Path, servers: Servers
) -> None:
    site = servers.site
    host, _ = make_host(tmp_path, private_hosts=[site.entry], convert_timeout=0.001)
    url = site.url("/article")
    run, _ = await run_model(host, [tool_call("read_web_page", {"url": url}), "Done."], url)
    (result,) = results(run)
    assert result.status is ToolStatus.ERROR
    assert f"could not read {url}" in (result.content or "")
    assert "[tools.web] convert_timeout" in (result.content or "")
