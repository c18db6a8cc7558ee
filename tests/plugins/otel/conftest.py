"""Fixtures of the toolwire-otel tests: in-memory span and metric readers, hosts over them."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("toolwire_otel")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolwire_otel._observer import TelemetryObserver
from toolwire_otel._pipeline import Pipeline

import toolwire


class Telemetry:
    """What one host exported: finished spans and collected metrics."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.metrics = InMemoryMetricReader()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.meter_provider = MeterProvider(metric_readers=[self.metrics])

    def plugin(self, *, capture: bool = False) -> Any:
        """A plugin that observes its host with this telemetry (as ``otel`` does with its own)."""
        pipeline = Pipeline(self.tracer_provider, self.meter_provider)

        def toolwire_configure(host: toolwire.Host) -> None:
            observer = TelemetryObserver(host, pipeline, capture=capture, agent_name="toolwire")
            host.plugin_manager.register(observer, name="otel.telemetry")

        return types.SimpleNamespace(
            __name__="otel_test", toolwire_configure=toolwire.hookimpl(toolwire_configure)
        )

    def histogram_points(self, name: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        points: list[Any] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        points.extend(metric.data.data_points)
        return points


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    t = Telemetry()
    yield t
    t.tracer_provider.shutdown()
    t.meter_provider.shutdown()
