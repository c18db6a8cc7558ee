"""The OpenTelemetry side: tracer and meter providers, exporters, flushing at host close.

This module imports the OpenTelemetry SDK; it is imported only when a host with the plugin
enabled starts.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, Literal

from opentelemetry import metrics, trace
from opentelemetry.metrics import Meter, MeterProvider
from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricExportResult,
    MetricReader,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.trace import Tracer, TracerProvider

from ._settings import OtelConfigError, OtelSettings, resolve_exporter, resolve_protocol

INSTRUMENTATION = "toolwire_otel"
logger = logging.getLogger("toolwire_otel")


class ReportingSpanExporter(SpanExporter):
    """An exporter that says, once per outage, when the collector does not take the spans.

    The export runs in the batch processor's thread, never in the run's; a failure costs the
    spans of that batch and one warning, never the run.
    """

    def __init__(self, inner: SpanExporter, target: str) -> None:
        self._inner = inner
        self.target = target
        self._failing = False
        self._stopped = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._stopped:
            return SpanExportResult.FAILURE
        try:
            result = self._inner.export(spans)
        except Exception as exc:  # an exporter must not take the processor's thread down
            logger.warning("toolwire-otel: exporting spans to %s raised %r", self.target, exc)
            return SpanExportResult.FAILURE
        _report(self, result is SpanExportResult.SUCCESS, f"{len(spans)} span(s)")
        return result

    def shutdown(self) -> None:
        """Stop exporting; an export waiting to retry gives up at once. Safe to call twice."""
        if not self._stopped:
            self._stopped = True
            self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._inner.force_flush(timeout_millis)


class ReportingMetricExporter(MetricExporter):
    """The metrics counterpart of :class:`ReportingSpanExporter`."""

    def __init__(self, inner: MetricExporter, target: str) -> None:
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self._inner = inner
        self.target = target
        self._failing = False
        self._stopped = False

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        if self._stopped:
            return MetricExportResult.FAILURE
        try:
            result = self._inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        except Exception as exc:
            logger.warning("toolwire-otel: exporting metrics to %s raised %r", self.target, exc)
            return MetricExportResult.FAILURE
        _report(self, result is MetricExportResult.SUCCESS, "metrics")
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self._inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        """Stop exporting, like :meth:`ReportingSpanExporter.shutdown`."""
        if not self._stopped:
            self._stopped = True
            self._inner.shutdown(timeout_millis=timeout_millis, **kwargs)


def _report(exporter: ReportingSpanExporter | ReportingMetricExporter, ok: bool, what: str) -> None:
    if ok:
        if exporter._failing:
            exporter._failing = False
            logger.info("toolwire-otel: %s accepts telemetry again", exporter.target)
        return
    if not exporter._failing:
        exporter._failing = True
        logger.warning(
            "toolwire-otel: could not export %s to %s (is the collector running?); telemetry "
            "is dropped until it answers, runs are not affected",
            what,
            exporter.target,
        )


class Pipeline:
    """A host's tracer and meter, and what closing the host must flush or shut down.

    When the application already set a global tracer (or meter) provider, that one is used and
    only flushed at close; otherwise the plugin builds its own from the settings and the
    ``OTEL_*`` variables, and shuts it down at close.
    """

    def __init__(
        self,
        tracer_provider: TracerProvider,
        meter_provider: MeterProvider,
        *,
        owned: Sequence[Any] = (),
        exporters: Sequence[ReportingSpanExporter | ReportingMetricExporter] = (),
        flush_timeout: float = 5.0,
    ) -> None:
        self.tracer: Tracer = tracer_provider.get_tracer(INSTRUMENTATION)
        self.meter: Meter = meter_provider.get_meter(INSTRUMENTATION)
        self._providers = (tracer_provider, meter_provider)
        self._owned = tuple(owned)
        self._exporters = tuple(exporters)
        self._flush_timeout = flush_timeout
        self._closed = threading.Event()

    @classmethod
    def from_settings(cls, settings: OtelSettings) -> Pipeline:
        """The application's providers when it set them, else new ones built from settings."""
        owned: list[Any] = []
        exporters: list[ReportingSpanExporter | ReportingMetricExporter] = []
        tracer_provider = trace.get_tracer_provider()
        resource: Resource | None = None
        if _is_default(tracer_provider):
            resource = _resource(settings)
            tracer_provider = _tracer_provider(settings, resource, exporters)
            owned.append(tracer_provider)
        meter_provider = metrics.get_meter_provider()
        if _is_default(meter_provider):
            meter_provider = _meter_provider(settings, resource or _resource(settings), exporters)
            owned.append(meter_provider)
        return cls(
            tracer_provider,
            meter_provider,
            owned=owned,
            exporters=exporters,
            flush_timeout=settings.flush_timeout,
        )

    def close(self) -> None:
        """Flush every provider, and shut down those the plugin built.

        The flush gets ``flush_timeout`` seconds in all (the SDK's own flush waits as long as
        an export retries); what is not delivered by then is dropped with a warning, so an
        unreachable collector cannot hold the host's close.
        """
        if self._closed.is_set():
            return
        self._closed.set()
        flushing = threading.Thread(target=self._flush, name="toolwire-otel-flush", daemon=True)
        flushing.start()
        flushing.join(self._flush_timeout)
        if flushing.is_alive():
            targets = ", ".join(sorted({e.target for e in self._exporters})) or "the exporters"
            logger.warning(
                "toolwire-otel: telemetry to %s was not delivered within flush_timeout = %g s "
                "(is the collector running?); the rest is dropped, runs are not affected",
                targets,
                self._flush_timeout,
            )
        # Stopping the exporters first makes an export that waits to retry give up at once.
        for exporter in self._exporters:
            try:
                exporter.shutdown()
            except Exception as exc:
                logger.warning("toolwire-otel: stopping an exporter failed: %r", exc)
        millis = int(self._flush_timeout * 1000)
        for provider in self._owned:
            try:
                if isinstance(provider, SdkMeterProvider):
                    provider.shutdown(timeout_millis=millis)
                else:
                    provider.shutdown()
            except Exception as exc:
                logger.warning("toolwire-otel: shutting telemetry down failed: %r", exc)

    def _flush(self) -> None:
        millis = int(self._flush_timeout * 1000)
        for provider in self._providers:
            flush = getattr(provider, "force_flush", None)
            if flush is None:
                continue
            try:
                flush(timeout_millis=millis)
            except Exception as exc:
                logger.warning("toolwire-otel: flushing telemetry failed: %r", exc)


def _is_default(provider: object) -> bool:
    """True for the API's placeholder providers (nothing was set up by the application)."""
    return type(provider).__name__ in {
        "ProxyTracerProvider",
        "NoOpTracerProvider",
        "_ProxyMeterProvider",
        "NoOpMeterProvider",
    }


def _resource(settings: OtelSettings) -> Resource:
    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
    resource = Resource.create(
        {SERVICE_NAME: settings.service_name} if settings.service_name else {}
    )
    name = str(resource.attributes.get(SERVICE_NAME, ""))
    if not name or name.startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "toolwire"}))
    return resource


def _tracer_provider(
    settings: OtelSettings,
    resource: Resource,
    exporters: list[ReportingSpanExporter | ReportingMetricExporter],
) -> SdkTracerProvider:
    # No sampler given: the SDK reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
    provider = SdkTracerProvider(resource=resource, shutdown_on_exit=True)
    kind = resolve_exporter(settings, "traces")
    if kind != "none":
        exporter: SpanExporter
        if kind == "console":
            exporter = ConsoleSpanExporter()
        else:
            exporter = ReportingSpanExporter(*_otlp(settings, "traces"))
            exporters.append(exporter)
        processor: SpanProcessor = BatchSpanProcessor(exporter)
        provider.add_span_processor(processor)
    return provider


def _meter_provider(
    settings: OtelSettings,
    resource: Resource,
    exporters: list[ReportingSpanExporter | ReportingMetricExporter],
) -> SdkMeterProvider:
    readers: list[MetricReader] = []
    kind = resolve_exporter(settings, "metrics")
    if kind == "console":
        readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter()))
    elif kind == "otlp":
        exporter = ReportingMetricExporter(*_otlp(settings, "metrics"))
        exporters.append(exporter)
        readers.append(PeriodicExportingMetricReader(exporter))
    return SdkMeterProvider(resource=resource, metric_readers=readers, shutdown_on_exit=True)


def _otlp(settings: OtelSettings, signal: Literal["traces", "metrics"]) -> tuple[Any, str]:
    """An OTLP exporter for ``signal`` by the configured protocol, and where it sends to.

    Without an endpoint setting the exporters read ``OTEL_EXPORTER_OTLP_*`` themselves
    (endpoint, headers, timeout, certificates, compression).
    """
    protocol = resolve_protocol(settings, signal)
    headers = dict(settings.headers) or None
    endpoint = settings.endpoint
    if protocol == "grpc":
        try:
            if signal == "traces":
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                    OTLPSpanExporter as GrpcSpanExporter,
                )

                grpc_exporter: Any = GrpcSpanExporter(endpoint=endpoint, headers=headers)
            else:
                from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                    OTLPMetricExporter as GrpcMetricExporter,
                )

                grpc_exporter = GrpcMetricExporter(endpoint=endpoint, headers=headers)
        except ImportError as exc:
            raise OtelConfigError(
                f"OTLP protocol 'grpc' needs the gRPC exporter, which is not installed ({exc}); "
                "install toolwire-otel[grpc], or use protocol 'http/protobuf'"
            ) from exc
        return grpc_exporter, endpoint or "the gRPC endpoint of OTEL_EXPORTER_OTLP_ENDPOINT"
    path = f"v1/{signal}"
    url = f"{endpoint.rstrip('/')}/{path}" if endpoint else None
    if signal == "traces":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        span_exporter = OTLPSpanExporter(endpoint=url, headers=headers)
        return span_exporter, span_exporter._endpoint
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    metric_exporter = OTLPMetricExporter(endpoint=url, headers=headers)
    return metric_exporter, metric_exporter._endpoint
