"""A paced fake-server reply streams its events spread over time, as slow hosts do."""

from __future__ import annotations

import time

import aiohttp

from toolwire.testing import FakeOpenAIChatServer, Reply, tool_call


async def test_a_paced_reply_waits_between_its_events():
    turn = tool_call("echo", {"text": "x" * 200})
    async with FakeOpenAIChatServer([Reply(turn=turn, pace=0.01)], chunk_size=8) as server:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        async with aiohttp.ClientSession() as session:
            arrivals = []
            async with session.post(server.url, json=body) as response:
                async for line in response.content:
                    if line.startswith(b"data: "):
                        arrivals.append(time.monotonic())
    # At least one pause of 10 ms sits between each two of the 25+ argument events.
    assert len(arrivals) > 25
    assert arrivals[-1] - arrivals[0] >= (len(arrivals) - 1) * 0.01
