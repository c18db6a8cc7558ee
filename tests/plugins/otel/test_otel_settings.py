"""How the settings and the OTEL_* variables combine (no exporter is built here)."""

from __future__ import annotations

import pytest
from toolwire_otel import OtelConfigError, OtelSettings
from toolwire_otel._settings import (
    CAPTURE_CONTENT_ENV,
    resolve_capture,
    resolve_exporter,
    resolve_protocol,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, False),
        ("true", True),
        ("TRUE", True),
        ("false", False),
        ("SPAN_ONLY", True),
        ("span_and_event", True),
        ("NO_CONTENT", False),
    ],
)
def test_content_capture_follows_the_conventions_switch(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: bool
) -> None:
    if value is None:
        monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    else:
        monkeypatch.setenv(CAPTURE_CONTENT_ENV, value)
    assert resolve_capture(OtelSettings()) is expected


def test_the_setting_wins_over_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "true")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    settings = OtelSettings(capture_content=False, protocol="http/protobuf", traces_exporter="none")
    assert resolve_capture(settings) is False
    assert resolve_protocol(settings, "traces") == "http/protobuf"
    assert resolve_exporter(settings, "traces") == "none"


def test_the_signal_specific_variable_wins_over_the_general_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", raising=False)
    assert resolve_protocol(OtelSettings(), "traces") == "grpc"
    assert resolve_protocol(OtelSettings(), "metrics") == "http/protobuf"


def test_an_unknown_protocol_names_the_variable_the_value_and_the_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    with pytest.raises(OtelConfigError) as info:
        resolve_protocol(OtelSettings(), "traces")
    assert str(info.value) == (
        "OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json': expected one of grpc, http/protobuf"
    )


def test_flush_timeout_must_be_positive() -> None:
    with pytest.raises(OtelConfigError, match=r"flush_timeout = -1: expected a number of seconds"):
        OtelSettings(flush_timeout=-1)
