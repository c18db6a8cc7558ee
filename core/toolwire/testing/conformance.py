"""The adapter conformance suite as a pytest plugin.

An adapter package runs the whole suite against its adapter and a fake server of its API::

    # tests/test_conformance.py of the adapter package
    import my_adapter._plugin
    from toolwire.testing.conformance import AdapterConformance
    from my_adapter.testing import FakeMyServer

    pytest_plugins = ["toolwire.testing.conformance"]

    class TestMyAdapter(AdapterConformance):
        adapter = "my-api"                  # the API name the adapter registers
        plugin = my_adapter._plugin          # the object holding its hookimpls
        server = FakeMyServer                # a FakeProviderServer subclass for the API

Each test runs the adapter through the real loop (``Host.load`` + ``host.run``) against the fake
server, streamed and not: single call, parallel calls (also interleaved), calls without ids, text
beside a call, no-argument tools, unicode arguments, error results, tool choice, aliased names,
multi-round history, turn state sent back unchanged, streaming equal to non-streaming, stream
events, cut-off arguments, HTTP errors, rate limits with the wait the server asked for, dropped
connections, and the API key (sent in a header, never in the URL, never leaked). What differs
between APIs is said by attributes of the suite class and of the server (see
:class:`AdapterConformance` and :class:`~toolwire.testing.FakeProviderServer`). The tests are
async: the package's tests need pytest-asyncio (``asyncio_mode = "auto"`` or not: the suite
marks its tests).

This module holds fixtures and hooks only; the assertions live in the suite module, which is
registered for pytest's assertion rewriting here, before it is imported (so this module itself
is left as it is: PYTEST_DONT_REWRITE).
"""

from __future__ import annotations

import pytest

pytest.register_assert_rewrite("toolwire.testing._conformance")

from ._conformance import (  # noqa: E402  (after the rewrite registration, on purpose)
    ABSENT,
    KEY,
    KEY_ENV,
    AdapterConformance,
    ConformanceKit,
    Outcome,
)

__all__ = [
    "ABSENT",
    "AdapterConformance",
    "ConformanceKit",
    "Outcome",
    "conformance",
    "conformance_stream",
    "streamed_conformance",
]


@pytest.fixture(params=[False, True], ids=["complete", "streamed"])
def conformance_stream(request: pytest.FixtureRequest) -> bool:
    """Each conformance test runs with a non-streamed and a streamed answer."""
    return bool(request.param)


@pytest.fixture
def conformance(
    request: pytest.FixtureRequest, conformance_stream: bool, monkeypatch: pytest.MonkeyPatch
) -> ConformanceKit:
    """The kit of the conformance test being run (the test class is the suite)."""
    suite = request.instance
    if not isinstance(suite, AdapterConformance):
        raise TypeError("the conformance fixture is for subclasses of AdapterConformance")
    monkeypatch.setenv(KEY_ENV, KEY)
    return ConformanceKit(suite, conformance_stream)


@pytest.fixture
def streamed_conformance(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> ConformanceKit:
    """The kit for tests that choose streaming themselves (run once, not per mode)."""
    suite = request.instance
    if not isinstance(suite, AdapterConformance):
        raise TypeError("the conformance fixture is for subclasses of AdapterConformance")
    monkeypatch.setenv(KEY_ENV, KEY)
    return ConformanceKit(suite, True)


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``conformance`` marker."""
    config.addinivalue_line("markers", "conformance: the toolwire adapter conformance suite")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of conformance suites."""
    for item in items:
        cls = getattr(item, "cls", None)
        if isinstance(cls, type) and issubclass(cls, AdapterConformance):
            item.add_marker(pytest.mark.conformance)
