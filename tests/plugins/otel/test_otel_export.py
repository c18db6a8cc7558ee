"""The real pipeline: the ``otel`` entry point enabled by config, OTLP/HTTP export to a loopback
receiver decoded with the OpenTelemetry protobuf definitions, and a collector that is down."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
import types
from collections.abc import AsyncIterator
from typing import Annotated, Any

import pytest
from aiohttp import web
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import toolwire
from toolwire import Host
from toolwire.config import ConfigError, config_from_dict
from toolwire.messages import UserMessage

OTEL_VARIABLES = (
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_TRACES_SAMPLER",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
)


@toolwire.tool
def add(a: Annotated[int, "First."], b: Annotated[int, "Second."]) -> int:
    """Add two numbers."""
    return a + b


TOOLS = types.SimpleNamespace(
    __name__="export_tools", toolwire_tools=toolwire.hookimpl(lambda settings: [add])
)


class Receiver:
    """A loopback OTLP/HTTP collector: it keeps every request body by path."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[bytes]] = {}
        self.headers: list[dict[str, str]] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        if request.headers.get("content-type") != "application/x-protobuf":
            return web.Response(status=415)
        self.bodies.setdefault(request.path, []).append(await request.read())
        self.headers.append({k.lower(): v for k, v in request.headers.items()})
        return web.Response(body=b"", content_type="application/x-protobuf")

    def spans(self) -> list[Any]:
        out = []
        for body in self.bodies.get("/v1/traces", []):
            message = ExportTraceServiceRequest()
            message.ParseFromString(body)
            for resource in message.resource_spans:
                for scope in resource.scope_spans:
                    out.extend((resource.resource, span) for span in scope.spans)
        return out

    def metric_names(self) -> set[str]:
        names = set()
        for body in self.bodies.get("/v1/metrics", []):
            message = ExportMetricsServiceRequest()
            message.ParseFromString(body)
            for resource in message.resource_metrics:
                for scope in resource.scope_metrics:
                    names.update(m.name for m in scope.metrics)
        return names


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in OTEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    collector = Receiver()
    app = web.Application()
    app.router.add_post("/v1/traces", collector.handle)
    app.router.add_post("/v1/metrics", collector.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    collector.url = f"http://127.0.0.1:{port}"
    yield collector
    await runner.cleanup()


def _host(otel: dict[str, Any], *script: Any) -> Host:
    """A host with the ``otel`` entry point enabled and the in-box scripted model."""
    config = config_from_dict(
        {
            "plugins": {"enable": ["otel"]},
            "provider": {
                "adapter": "scripted",
                "model": "gpt-x",
                "options": {"script": list(script)},
            },
            "ledger": {"enabled": False},
            "tools": {"otel": otel},
        }
    )
    return Host.load(config, plugins=[TOOLS])


def _calls(*arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": "add", "arguments": a} for a in arguments]}


def _attributes(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        value = kv.value
        kind = value.WhichOneof("value")
        if kind == "array_value":
            out[kv.key] = [v.string_value for v in value.array_value.values]
        else:
            out[kv.key] = getattr(value, kind)
    return out


async def test_spans_and_metrics_reach_an_otlp_http_collector(receiver: Receiver) -> None:
    otel = {
        "endpoint": receiver.url,
        "service_name": "otel-export-test",
        "headers": {"x-collector-token": "t0ken"},
    }
    host = _host(otel, _calls({"a": 2, "b": 3}), "5")
    info = host.plugin_info("otel")
    assert info is not None
    assert info.loaded
    assert info.error is None
    run = await host.run("add")
    await host.aclose()  # flushes: nothing is lost at the end of the program
    assert run.stop_reason == "answered"

    spans = receiver.spans()
    names = sorted(span.name for _, span in spans)
    assert names == ["chat gpt-x", "chat gpt-x", "execute_tool add", "invoke_agent toolwire"]
    resource = {kv.key: kv.value.string_value for kv in spans[0][0].attributes}
    assert resource["service.name"] == "otel-export-test"
    by_name = {span.name: span for _, span in spans}
    agent = by_name["invoke_agent toolwire"]
    tool = by_name["execute_tool add"]
    assert tool.parent_span_id == agent.span_id
    assert tool.trace_id == agent.trace_id
    assert _attributes(tool)["gen_ai.tool.name"] == "add"
    chat = _attributes(by_name["chat gpt-x"])
    assert chat["gen_ai.provider.name"] == "scripted"
    assert chat["gen_ai.request.model"] == "gpt-x"
    # The scripted model reports no usage, so no token histogram; the wire tests cover it.
    assert receiver.metric_names() >= {
        "gen_ai.client.operation.duration",
        "gen_ai.execute_tool.duration",
    }
    assert all(h.get("x-collector-token") == "t0ken" for h in receiver.headers)


async def test_otel_variables_configure_the_exporter(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-the-environment")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")
    host = _host({}, "hello")
    await host.run("hi")
    await host.aclose()
    spans = receiver.spans()
    assert sorted(span.name for _, span in spans) == ["chat gpt-x", "invoke_agent toolwire"]
    resource = {kv.key: kv.value.string_value for kv in spans[0][0].attributes}
    assert resource["service.name"] == "from-the-environment"
    assert "/v1/metrics" not in receiver.bodies


async def test_the_sampler_variable_is_honoured(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    host = _host({"endpoint": receiver.url, "metrics_exporter": "none"}, "hello")
    await host.run("hi")
    await host.aclose()
    assert receiver.spans() == []


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_collector_that_is_down_costs_a_warning_not_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    caplog.set_level(logging.WARNING, logger="toolwire_otel")
    host = _host(
        {"endpoint": endpoint, "flush_timeout": 0.5},
        _calls({"a": 1, "b": 1}, {"a": 2, "b": 2}),
        "done",
    )
    run = await host.run("add twice")
    assert run.stop_reason == "answered"
    assert run.text == "done"
    await host.aclose()
    warnings = [r.getMessage() for r in caplog.records if r.name == "toolwire_otel"]
    assert any(endpoint in w and "runs are not affected" in w for w in warnings), warnings


@pytest.mark.parametrize(
    ("otel", "named"),
    [({"protocol": "smoke"}, "$.tools.otel.protocol = 'smoke'"), ({"flush_timeout": 0}, "0")],
)
def test_a_bad_settings_section_is_a_config_error_at_load(otel: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _host({"endpoint": "http://127.0.0.1:4318", **otel}, "unused")
    assert "$.tools.otel" in str(caught.value)
    assert named in str(caught.value)


@pytest.mark.parametrize(
    ("otel", "variable", "value", "named"),
    [
        ({}, "OTEL_EXPORTER_OTLP_PROTOCOL", "carrier-pigeon", "OTEL_EXPORTER_OTLP_PROTOCOL"),
        ({}, "OTEL_TRACES_EXPORTER", "zipkin", "OTEL_TRACES_EXPORTER"),
        ({}, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "maybe", "CAPTURE_MESSAGE"),
    ],
)
async def test_bad_variables_are_reported_naming_the_value_and_the_host_still_runs(
    monkeypatch: pytest.MonkeyPatch,
    otel: dict[str, Any],
    variable: str | None,
    value: str | None,
    named: str,
) -> None:
    if variable is not None and value is not None:
        monkeypatch.setenv(variable, value)
    host = _host({"endpoint": f"http://127.0.0.1:{_closed_port()}", **otel}, "still here")
    info = host.plugin_info("otel")
    assert info is not None
    assert named in (info.error or ""), info.error
    shown = value if value is not None else next(iter(otel.values()))
    assert repr(shown) in (info.error or "") or str(shown) in (info.error or "")
    run = await host.run("hi")
    await host.aclose()
    assert run.text == "still here"


def test_grpc_protocol_uses_the_grpc_exporter_or_says_what_to_install() -> None:
    from toolwire_otel import OtelConfigError, OtelSettings
    from toolwire_otel._pipeline import Pipeline

    settings = OtelSettings(
        protocol="grpc", endpoint=f"http://127.0.0.1:{_closed_port()}", flush_timeout=0.2
    )
    try:
        import opentelemetry.exporter.otlp.proto.grpc  # noqa: F401
    except ImportError:
        with pytest.raises(OtelConfigError, match=r"toolwire-otel\[grpc\]"):
            Pipeline.from_settings(settings)
        return
    pipeline = Pipeline.from_settings(settings)
    try:
        targets = [type(e._inner).__module__ for e in pipeline._exporters]
        assert targets == [
            "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
            "opentelemetry.exporter.otlp.proto.grpc.metric_exporter",
        ]
    finally:
        pipeline.close()


NEVER_CLOSED = """
import asyncio, sys
from toolwire import Host
from toolwire.config import config_from_dict
config = config_from_dict({
    "plugins": {"enable": ["otel"]},
    "provider": {"adapter": "scripted"},
    "ledger": {"enabled": False},
    "tools": {"otel": {"endpoint": sys.argv[1], "metrics_exporter": "none"}},
})
host = Host.load(config)
run = asyncio.run(host.run("hello"))  # the host is never closed
print(run.stop_reason)
"""


async def test_spans_of_a_program_that_never_closes_its_host_are_exported_at_exit(
    receiver: Receiver,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        NEVER_CLOSED,
        receiver.url,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, err.decode()
    assert out.decode().strip() == "answered"
    assert sorted(span.name for _, span in receiver.spans()) == ["chat", "invoke_agent toolwire"]


async def test_a_pipeline_that_cannot_be_built_fails_the_plugin_once_and_runs_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if toolwire-otel[grpc] were not installed: importing the gRPC exporter fails.
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc.trace_exporter", None)
    seen: list[Any] = []
    watch = types.SimpleNamespace(
        __name__="watch", toolwire_event=toolwire.hookimpl(lambda event: seen.append(event))
    )
    config = config_from_dict(
        {
            "plugins": {"enable": ["otel"]},
            "provider": {"adapter": "scripted", "options": {"script": ["one", "two"]}},
            "ledger": {"enabled": False},
            "tools": {"otel": {"protocol": "grpc", "metrics_exporter": "none"}},
        }
    )
    host = Host.load(config, plugins=[TOOLS, watch])
    first = await host.run("hi")
    second = await host.run([*first.messages, UserMessage("again")])
    await host.aclose()
    assert (first.text, second.text) == ("one", "two")
    failures = [e for e in seen if e.kind == "plugin_failed"]
    assert len(failures) == 1
    assert "toolwire-otel[grpc]" in failures[0].error
