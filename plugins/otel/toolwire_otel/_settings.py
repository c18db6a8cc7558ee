"""``[tools.otel]``: the plugin's settings, and how they combine with the ``OTEL_*`` variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

import attrs

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
PROTOCOLS = ("grpc", "http/protobuf")
EXPORTERS = ("console", "none", "otlp")

# The conventions' opt-in switch: "true"/"false" in the first GenAI instrumentations, the
# content-capturing modes of the newer ones. Content is recorded on spans only.
_CAPTURE_VALUES = {
    "true": True,
    "false": False,
    "span_only": True,
    "span_and_event": True,
    "event_only": True,
    "no_content": False,
}


class OtelConfigError(ValueError):
    """A setting or ``OTEL_*`` variable has a value the plugin cannot use; the message names the
    setting or variable, the value and what would be valid."""


@attrs.frozen(kw_only=True)
class OtelSettings:
    """``[tools.otel]`` of ``toolwire.toml``. Every field is optional: unset fields fall back to
    the standard ``OTEL_*`` environment variables, then to the OpenTelemetry defaults.

    :ivar service_name: ``service.name`` of the resource (else ``OTEL_SERVICE_NAME``, else
        ``toolwire``).
    :ivar endpoint: the OTLP base URL (else ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` /
        ``OTEL_EXPORTER_OTLP_ENDPOINT``); over HTTP ``/v1/traces`` and ``/v1/metrics`` are added.
    :ivar protocol: ``http/protobuf`` or ``grpc`` (else ``OTEL_EXPORTER_OTLP_PROTOCOL``).
    :ivar headers: headers of every export request; they replace ``OTEL_EXPORTER_OTLP_HEADERS``.
    :ivar traces_exporter: ``otlp``, ``console`` or ``none`` (else ``OTEL_TRACES_EXPORTER``).
    :ivar metrics_exporter: ``otlp``, ``console`` or ``none`` (else ``OTEL_METRICS_EXPORTER``).
    :ivar capture_content: record messages, tool arguments and results on spans (else
        ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``; off by default). Sensitive
        arguments stay redacted and the provider's API key is scrubbed either way.
    :ivar agent_name: ``gen_ai.agent.name`` of run spans.
    :ivar flush_timeout: seconds closing the host waits for the last spans to be exported.
    """

    service_name: str | None = None
    endpoint: str | None = None
    protocol: Literal["http/protobuf", "grpc"] | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    traces_exporter: Literal["otlp", "console", "none"] | None = None
    metrics_exporter: Literal["otlp", "console", "none"] | None = None
    capture_content: bool | None = None
    agent_name: str = "toolwire"
    flush_timeout: float = attrs.field(default=5.0)

    @flush_timeout.validator
    def _positive(self, attribute: attrs.Attribute[float], value: float) -> None:
        if not value > 0:
            raise OtelConfigError(
                f"[tools.otel] flush_timeout = {value!r}: expected a number of seconds above 0"
            )


def _env(*names: str) -> tuple[str, str] | None:
    """The first of the variables that is set and not blank, with its name."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return name, value
    return None


def _choice(
    setting: str, value: str | None, env: tuple[str, ...], valid: tuple[str, ...], default: str
) -> str:
    if value is not None:
        where, raw = f"[tools.otel] {setting}", value
    else:
        found = _env(*env)
        if found is None:
            return default
        where, raw = found
    chosen = raw.strip().lower()
    if chosen not in valid:
        raise OtelConfigError(f"{where} = {raw!r}: expected one of {', '.join(valid)}")
    return chosen


def resolve_protocol(settings: OtelSettings, signal: Literal["traces", "metrics"]) -> str:
    """The OTLP protocol of one signal: the setting, the per-signal variable, the general one."""
    return _choice(
        "protocol",
        settings.protocol,
        (f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"),
        PROTOCOLS,
        "http/protobuf",
    )


def resolve_exporter(settings: OtelSettings, signal: Literal["traces", "metrics"]) -> str:
    """Which exporter a signal uses (``otlp`` unless told otherwise)."""
    value = settings.traces_exporter if signal == "traces" else settings.metrics_exporter
    return _choice(
        f"{signal}_exporter", value, (f"OTEL_{signal.upper()}_EXPORTER",), EXPORTERS, "otlp"
    )


def resolve_capture(settings: OtelSettings) -> bool:
    """Whether content is recorded: the setting, else the conventions' variable, else off."""
    if settings.capture_content is not None:
        return settings.capture_content
    found = _env(CAPTURE_CONTENT_ENV)
    if found is None:
        return False
    name, raw = found
    capture = _CAPTURE_VALUES.get(raw.lower())
    if capture is None:
        valid = ", ".join(sorted(_CAPTURE_VALUES))
        raise OtelConfigError(f"{name} = {raw!r}: expected one of {valid} (any case)")
    return capture
