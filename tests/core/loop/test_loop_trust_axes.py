"""Trust on two axes, confidence and data security (``self_hosted``), each raised by results
and carried across continued conversations; and an organisation's own confidence levels."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from loop_support import make_host, scripted_loop, tools_plugin

import toolwire
from toolwire import Host, ToolResult, TrustLevel, UserMessage
from toolwire._trust import DEFAULT_LEVELS, use_levels
from toolwire.config import ConfigError, ProviderConfig, config_from_dict
from toolwire.loop import Run
from toolwire.messages import required_trust
from toolwire.testing import tool_call


@pytest.fixture(autouse=True)
def _default_scheme() -> Iterator[None]:
    yield
    use_levels(DEFAULT_LEVELS)


@toolwire.tool
def contract() -> ToolResult:
    """Read a contract (confidential: high confidence)."""
    return ToolResult.ok("clause 7", required_trust=TrustLevel.HIGH)


@toolwire.tool
def payroll() -> ToolResult:
    """Read the payroll (must stay on our machines, whoever reads it)."""
    return ToolResult.ok("salaries", required_trust=TrustLevel.SELF_HOSTED)


def test_levels_read_write_and_compare_axis_by_axis() -> None:
    high_here = TrustLevel.parse("high+self_hosted")
    assert (high_here.confidence, high_here.self_hosted) == ("high", True)
    assert TrustLevel.parse(high_here.label) == high_here
    assert TrustLevel.parse("self_hosted") == TrustLevel(None, True)
    assert TrustLevel.parse(3) == TrustLevel.HIGH  # a record of an earlier version
    # a provider must meet each axis; neither axis makes up for the other
    assert high_here.satisfies(TrustLevel.HIGH)
    assert high_here.satisfies(TrustLevel.SELF_HOSTED)
    assert not TrustLevel.HIGH.satisfies(TrustLevel.SELF_HOSTED)
    assert not TrustLevel.parse("low+self_hosted").satisfies(TrustLevel.MEDIUM)
    assert TrustLevel.HIGH.strictest(TrustLevel.SELF_HOSTED) == high_here
    with pytest.raises(ValueError, match="unknown trust level 'secret'"):
        TrustLevel.parse("secret")
    with pytest.raises(TypeError):
        assert TrustLevel.HIGH > TrustLevel.LOW  # type: ignore[operator]


def test_the_provider_states_each_axis() -> None:
    assert ProviderConfig(trust="medium").trust_level == TrustLevel.MEDIUM
    both = ProviderConfig(trust="medium", data_security="self_hosted").trust_level
    assert both == TrustLevel.parse("medium+self_hosted")
    # "self_hosted" alone, as before: a model on your own machine is trusted with everything
    assert ProviderConfig(trust="self_hosted").trust_level == TrustLevel.highest()
    with pytest.raises(ConfigError, match=r"\$\.provider\.data_security = 'on_premises'"):
        config_from_dict({"provider": {"data_security": "on_premises"}})


async def _run_both(tmp_path: Path) -> Run:
    host = make_host(tmp_path, [contract, payroll], provider=ProviderConfig(trust="self_hosted"))
    loop, _ = scripted_loop(host, [[tool_call("contract"), tool_call("payroll")], "Noted."])
    try:
        return await loop.run("Read the contract and the payroll.")
    finally:
        await host.aclose()


async def test_results_raise_each_axis_and_the_run_keeps_both(tmp_path: Path) -> None:
    run = await _run_both(tmp_path)
    assert run.stop_reason == "answered"
    assert run.required_trust == TrustLevel.parse("high+self_hosted")
    assert required_trust(run.messages) == run.required_trust


@pytest.mark.parametrize(
    ("trust", "data_security", "answered"),
    [
        ("high", None, False),  # trusted enough, but the payroll must not leave
        ("medium", "self_hosted", False),  # ours, but not trusted with the contract
        ("high", "self_hosted", True),
    ],
)
async def test_a_continued_conversation_needs_both_axes(
    tmp_path: Path, trust: str, data_security: str | None, answered: bool
) -> None:
    run = await _run_both(tmp_path)
    stored = Run.from_json(json.loads(json.dumps(run.to_json())))
    provider = ProviderConfig(trust=trust, data_security=data_security)  # type: ignore[arg-type]
    host = make_host(tmp_path, [contract, payroll], provider=provider)
    loop, model = scripted_loop(host, lambda request: "Still clause 7.")
    try:
        continued = await loop.run([*stored.messages, UserMessage("And now?")])
    finally:
        await host.aclose()
    assert (continued.stop_reason == "answered") is answered, continued.detail
    assert (len(model.requests) == 1) is answered
    if not answered:
        assert continued.stop_reason == "trust"
        assert "'high+self_hosted'" in (continued.detail or "")


async def test_an_organisation_adds_its_own_confidence_levels(tmp_path: Path) -> None:
    config = config_from_dict(
        {
            "trust": {"levels": ["public", "low", "medium", "internal", "high", "secret"]},
            "provider": {"trust": "internal"},
            "ledger": {"path": str(tmp_path / "ledger.sqlite3")},
        }
    )
    assert TrustLevel.levels() == (
        "public", "low", "medium", "internal", "high", "secret", "self_hosted"
    )  # fmt: skip
    internal = config.provider.trust_level
    assert internal.satisfies(TrustLevel.MEDIUM)
    assert not internal.satisfies(TrustLevel.HIGH)

    @toolwire.tool(min_provider_trust="secret")
    def vault() -> str:
        """Open the vault."""
        return "gold"

    @toolwire.tool
    def wiki() -> ToolResult:
        """Read the internal wiki."""
        return ToolResult.ok("page", required_trust="internal")

    host = Host.load(config, plugins=[tools_plugin(vault, wiki)])
    try:
        assert await host.why_not_offered("vault") == (
            "it needs a provider trusted at least 'secret'; the provider is 'internal'"
        )
        loop, _ = scripted_loop(host, [[tool_call("wiki")], "Read it."])
        run = await loop.run("What does the wiki say?")
    finally:
        await host.aclose()
    assert run.stop_reason == "answered"
    assert run.required_trust == TrustLevel("internal")


@pytest.mark.parametrize(
    ("levels", "words"),
    [
        (["low", "high", "medium"], "keep 'low', 'medium' and 'high' in that order"),
        (["low", "medium", "self_hosted", "high"], "'self_hosted' is the data-security level"),
        (["low", "medium", "high", "high"], "a level is named twice"),
        (["low", "medium", "high", "Top Secret"], "'Top Secret' is not a level name"),
    ],
)
def test_a_scheme_that_would_break_the_built_in_levels_is_refused(
    levels: list[str], words: str
) -> None:
    with pytest.raises(ConfigError, match=r"\$\.trust\.levels") as caught:
        config_from_dict({"trust": {"levels": levels}})
    assert words in str(caught.value)


def test_a_host_loaded_from_a_shipped_config_uses_its_scheme(tmp_path: Path) -> None:
    levels = ("low", "medium", "internal", "high")
    config = config_from_dict({"trust": {"levels": list(levels)}})
    use_levels(DEFAULT_LEVELS)  # another process (a Ray worker) knows only the default
    with pytest.raises(ValueError, match="unknown trust level 'internal'"):
        TrustLevel.parse("internal")
    Host.load(config)
    assert TrustLevel.parse("internal") == TrustLevel("internal")
