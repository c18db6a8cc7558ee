"""toolwire-otel: runs, model requests and tool calls as OpenTelemetry traces and metrics.

Importing this package imports nothing of OpenTelemetry; the SDK is loaded when a host with the
``otel`` plugin enabled starts.
"""

from ._settings import OtelConfigError, OtelSettings

__all__ = ["OtelConfigError", "OtelSettings"]
