"""In fresh interpreters: nothing of OpenTelemetry is imported unless the plugin is enabled, and
an application's own tracer provider is used instead of a new one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

NOT_ENABLED = """
import json, sys
from toolwire import Config, Host
from toolwire.config import PluginsConfig, ProviderConfig
host = Host.load(
    Config(plugins=PluginsConfig(enable=("openai",)), provider=ProviderConfig(adapter="scripted"))
)
run = host.run_sync("hello")
print(json.dumps({"otel": info.loaded if (info := host.plugin_info("otel")) else None,
                  "modules": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
"""

ENABLED_WITHOUT_A_RUN = """
import json, sys
from toolwire import Config, Host
from toolwire.config import PluginsConfig
host = Host.load(Config(plugins=PluginsConfig(enable=("otel",))))
info = host.plugin_info("otel")
print(json.dumps({"otel": info.loaded and info.error is None, "tools": list(host.tools),
                  "modules": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
"""

APPLICATION_PROVIDER = """
import json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from toolwire import Config, Host
from toolwire.config import PluginsConfig, ProviderConfig

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
tracer = trace.get_tracer("application")

host = Host.load(
    Config(plugins=PluginsConfig(enable=("otel",)), provider=ProviderConfig(adapter="scripted"))
)
with tracer.start_as_current_span("request handler") as outer:
    run = host.run_sync("hello")
# The host closed at the end of run_sync; the application's provider must still work.
with tracer.start_as_current_span("after the host closed"):
    pass
spans = {s.name: s for s in exporter.get_finished_spans()}
agent = spans["invoke_agent toolwire"]
print(json.dumps({
    "names": sorted(spans),
    "agent_parent": agent.parent.span_id if agent.parent else None,
    "outer": outer.get_span_context().span_id,
}))
"""


def _run(script: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_METRICS_EXPORTER"] = "none"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_host_without_the_plugin_enabled_imports_no_opentelemetry() -> None:
    result = _run(NOT_ENABLED)
    assert result["otel"] is False, "installed but not enabled"
    assert result["modules"] == []


def test_an_enabled_plugin_imports_the_sdk_only_when_a_run_starts() -> None:
    result = _run(ENABLED_WITHOUT_A_RUN)
    assert result["otel"] is True
    assert result["modules"] == []


def test_the_applications_tracer_provider_is_used_and_parents_the_run() -> None:
    result = _run(APPLICATION_PROVIDER)
    assert result["names"] == [
        "after the host closed",
        "chat",
        "invoke_agent toolwire",
        "request handler",
    ]
    assert result["agent_parent"] == result["outer"]
