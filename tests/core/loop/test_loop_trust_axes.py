"""Trust on two axes, confidence and data security (``self_hosted``), each raised by results
and carried across continued conversations; and an organisation's own confidence levels."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loop_support import make_host, scripted_loop, tools_plugin

import toolwire
from toolwire import Host, ToolResult, TrustLevel, UserMessage
from toolwire._trust import DEFAULT_LEVELS, levels_in_use, use_levels
from toolwire.config import ConfigError, ProviderConfig, config_from_dict
from toolwire.loop import Run, ToolCallingLoop
from toolwire.messages import required_trust
from toolwire.testing import tool_call
from toolwire.tools import ToolDefinitionError


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
    assert TrustLevel.levels() == (*DEFAULT_LEVELS, "self_hosted")  # the process keeps its own
    with levels_in_use(config.trust.levels):  # what the config's host reads levels in
        assert TrustLevel.levels() == (
            "public", "low", "medium", "internal", "high", "secret", "self_hosted"
        )  # fmt: skip
        internal = config.provider.trust_level
        assert internal.satisfies(TrustLevel.MEDIUM)
        assert not internal.satisfies(TrustLevel.HIGH)

    @toolwire.tool(min_provider_trust="secret")  # made before any host knows the level
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


def test_a_tool_naming_a_level_its_host_lacks_is_refused_naming_the_levels() -> None:
    @toolwire.tool(min_provider_trust="secret+self_hosted")
    def vault() -> str:
        """Open the vault."""
        return "gold"

    host = Host.load(config_from_dict({"ledger": {"enabled": False}}))
    with pytest.raises(ToolDefinitionError, match=r"'secret\+self_hosted' is not a level of"):
        host.add_tool(vault)
    with pytest.raises(ToolDefinitionError, match="unknown trust level 'Top Secret'"):
        toolwire.tool(name="vault", min_provider_trust="Top Secret")(lambda: "gold")


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


def test_a_host_loaded_from_a_shipped_config_uses_its_scheme_and_leaves_the_default() -> None:
    levels = ("low", "medium", "internal", "high")
    config = config_from_dict(
        {"trust": {"levels": list(levels)}, "provider": {"trust": "internal"}}
    )
    host = Host.load(config)
    with pytest.raises(ValueError, match="unknown trust level 'internal'"):
        TrustLevel.parse("internal")  # outside the host: the process's default scheme
    assert ToolCallingLoop(host)._trust == TrustLevel("internal")
    use_levels(levels)  # a process that reads levels without a host chooses its default
    assert TrustLevel.parse("internal") == TrustLevel("internal")


def _scheme_host(tmp_path: Path, levels: list[str], own: str, name: str) -> Host:
    """A host whose provider and whose tool ``name`` stand at ``own``, a level of ``levels``."""

    def read() -> ToolResult:
        return ToolResult.ok(f"{name} page", required_trust=own)

    tool = toolwire.tool(name=name, description=f"Read the {name} page.")(read)
    config = config_from_dict(
        {
            "trust": {"levels": levels},
            "provider": {"trust": own},
            "ledger": {"path": str(tmp_path / f"{name}.sqlite3")},
        }
    )
    return Host.load(config, plugins=[tools_plugin(tool)])


async def test_two_hosts_of_one_process_each_keep_their_own_levels(tmp_path: Path) -> None:
    # Loaded one after the other: the second's scheme must not become the first's.
    internal = _scheme_host(tmp_path, ["low", "medium", "internal", "high"], "internal", "wiki")
    secret = _scheme_host(tmp_path, ["low", "medium", "high", "secret"], "secret", "vault")
    wiki_started, vault_done = asyncio.Event(), asyncio.Event()

    async def wiki_turn(request: Any) -> Any:  # its answer waits for the vault's whole run
        if request.round == 1:
            wiki_started.set()
            return [tool_call("wiki")]
        await vault_done.wait()
        return "Read it."

    async def vault_turn(request: Any) -> Any:  # starts once the wiki's run is under way
        await wiki_started.wait()
        return [tool_call("vault")] if request.round == 1 else "Opened it."

    wiki_loop, _ = scripted_loop(internal, wiki_turn)
    vault_loop, _ = scripted_loop(secret, vault_turn)

    async def vault_run() -> Run:
        try:
            return await vault_loop.run("Open the vault.")
        finally:
            vault_done.set()

    try:
        wiki, vault = await asyncio.gather(wiki_loop.run("Read the wiki."), vault_run())
        assert await internal.why_not_offered("wiki") is None
        assert await secret.why_not_offered("vault") is None
    finally:
        await internal.aclose()
        await secret.aclose()
    assert (wiki.stop_reason, vault.stop_reason) == ("answered", "answered"), (
        wiki.detail,
        vault.detail,
    )
    assert wiki.required_trust == TrustLevel("internal")
    assert vault.required_trust == TrustLevel("secret")
    assert TrustLevel.levels() == (*DEFAULT_LEVELS, "self_hosted")


async def test_a_host_run_inside_another_hosts_tool_uses_its_own_levels(tmp_path: Path) -> None:
    inner = _scheme_host(tmp_path, ["low", "medium", "high", "secret"], "secret", "vault")
    inner_loop, _ = scripted_loop(inner, [[tool_call("vault")], "Opened it."])

    @toolwire.tool
    async def ask_vault() -> ToolResult:
        """Ask the vault's own agent."""
        run = await inner_loop.run("Open the vault.")
        assert run.required_trust == TrustLevel("secret")
        return ToolResult.ok(run.text, required_trust="internal")  # in the outer host's scheme

    config = config_from_dict(
        {
            "trust": {"levels": ["low", "medium", "internal", "high"]},
            "provider": {"trust": "internal"},
            "ledger": {"path": str(tmp_path / "outer.sqlite3")},
        }
    )
    outer = Host.load(config, plugins=[tools_plugin(ask_vault)])
    loop, _ = scripted_loop(outer, [[tool_call("ask_vault")], "The vault is open."])
    try:
        run = await loop.run("Open the vault through its agent.")
    finally:
        await outer.aclose()
        await inner.aclose()
    assert run.stop_reason == "answered", run.detail
    assert run.tool_calls[0].result is not None
    assert run.tool_calls[0].result.model_text() == "Opened it."
    assert run.required_trust == TrustLevel("internal")


async def test_a_stored_run_read_outside_its_host_is_continued_in_the_hosts_levels(
    tmp_path: Path,
) -> None:
    host = _scheme_host(tmp_path, ["low", "medium", "internal", "high"], "internal", "wiki")
    loop, _ = scripted_loop(host, [[tool_call("wiki")], "Read it.", "Still read."])
    try:
        first = await loop.run("Read the wiki.")
        # A web chat's store reads the run back where no host works: the level is kept as written.
        stored = Run.from_json(json.loads(json.dumps(first.to_json())))
        assert stored.required_trust == TrustLevel("internal")
        continued = await loop.run([*stored.messages, UserMessage("And now?")])
    finally:
        await host.aclose()
    assert continued.stop_reason == "answered", continued.detail
    assert continued.required_trust == TrustLevel("internal")
