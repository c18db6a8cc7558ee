"""Surfaces: which tools each one offers (``[surfaces.<name>]``, closed offers for hosted
surfaces) and what a call of a guarded tool meets there (asked about, or refused)."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Annotated, Any

import attrs
import pytest
from loop_support import make_host, scripted_loop, tools_plugin

import toolwire
from toolwire import Approve, Config, Host, Surface
from toolwire.cli import main
from toolwire.cli._commands import render_init_config
from toolwire.config import ConfigError, PolicyConfig, config_from_dict
from toolwire.loop import Selection

SIDE_EFFECTS: list[str] = []


@toolwire.tool(side_effects=["destructive"])
def wipe(target: Annotated[str, "What to wipe."]) -> str:
    """Wipe a target."""
    SIDE_EFFECTS.append(target)
    return f"wiped {target}"


@toolwire.tool(side_effects=["read_only"])
def look(target: Annotated[str, "What to look at."]) -> str:
    """Look at a target."""
    return f"{target} looks fine"


@toolwire.tool(
    side_effects=["read_only"],
    activation="context",
    resolver=lambda tool, request: tool.function_spec(),
)
def hint(topic: Annotated[str, "The topic."]) -> str:
    """A hint that offers itself from the conversation."""
    return f"hint about {topic}"


TOOLS = (wipe, look, hint)


def _config(data: dict[str, Any], surface: Surface | str | None = None) -> Config:
    config = config_from_dict(data)
    return attrs.evolve(config, surface=Surface.of(surface)) if surface is not None else config


def _offered(data: dict[str, Any], surface: Surface | str | None, **run: Any) -> list[str]:
    config = _config(data, surface)
    selection = Selection.from_config(config, run.get("tools"), run.get("profile"))
    return [t.name for t in selection.candidates({t.name: t for t in TOOLS})]


@pytest.fixture(autouse=True)
def _clean() -> None:
    SIDE_EFFECTS.clear()


# -- which tools a surface offers ---------------------------------------------------------------


def test_an_empty_allow_list_allows_every_tool_and_deny_always_wins() -> None:
    data = {"surfaces": {"chat": {"allow": [], "deny": ["wipe"]}}}
    assert _offered(data, "chat") == ["hint", "look"]
    # the same empty allow list in a profile allows every tool too (it used to allow none)
    data = {"tools": {"profile": "p"}, "profiles": {"p": {"allow": []}}}
    assert _offered(data, None) == ["hint", "look", "wipe"]


def test_a_surface_allow_list_narrows_only_its_own_surface() -> None:
    data = {"surfaces": {"web": {"allow": ["look", "hint", "wipe"], "deny": ["wipe"]}}}
    assert _offered(data, "web") == ["hint", "look"]
    data = {"surfaces": {"web": {"allow": ["look"]}}}
    assert _offered(data, "web") == ["look"]
    assert _offered(data, "chat") == ["hint", "look", "wipe"]
    assert _offered(data, None) == ["hint", "look", "wipe"]


def test_context_tools_are_candidates_on_every_surface_that_allows_them() -> None:
    data = {"tools": {"enable": ["look"]}}  # a context tool needs no enabling
    for surface in ("run", "chat", "web", "batch", "mcp-serve"):
        assert _offered(data, surface) == ["hint", "look"], surface
    assert _offered({**data, "surfaces": {"batch": {"deny": ["hint"]}}}, "batch") == ["look"]
    assert _offered({**data, "surfaces": {"web": {"allow": ["look"]}}}, "web") == ["look"]


def test_a_hosted_surface_whose_config_names_no_tools_offers_none() -> None:
    for surface in ("batch", "mcp-serve", Surface(name="web", interactive=True, hosted=True)):
        assert _offered({}, surface) == [], surface
        # a run naming its tools, [tools] enable, or the surface's allow list open it
        assert _offered({}, surface, tools=("look",)) == ["hint", "look"]
        assert _offered({"tools": {"enable": ["wipe"]}}, surface) == ["hint", "wipe"]
        name = Surface.of(surface).name
        assert _offered({"surfaces": {name: {"allow": ["look"]}}}, surface) == ["look"]
    # interactive use keeps offering every tool of the enabled plugins
    for surface in ("run", "chat", "web", None):
        assert _offered({}, surface) == ["hint", "look", "wipe"]
    assert _offered({}, Surface(name="run", interactive=False)) == ["hint", "look", "wipe"]


async def test_a_closed_offer_is_said_at_load_and_why_names_it(tmp_path: Path) -> None:
    host = make_host(tmp_path, TOOLS)
    try:
        assert host.offer_notice is None
        notice = host.use_surface("batch")
        assert notice == host.offer_notice
        assert notice == (
            "toolwire: the batch surface is hosted and the config names no tools, so it offers "
            "none to a run that names none itself: name them in [tools] enable or "
            "[surfaces.batch] allow."
        )
        reason = await host.why_not_offered("look")
        assert reason is not None
        assert "the batch surface is hosted" in reason
        loop, model = scripted_loop(host, ["nothing to do"])
        run = await loop.run("go")
        assert model.requests[0].functions == ()
        assert run.stop_reason == "answered"
    finally:
        await host.aclose()


def test_surfaces_are_named_and_checked() -> None:
    assert Surface.of("mcp-serve").hosted
    assert not Surface.of("mcp-serve").interactive
    assert Surface.of("chat").interactive
    assert not Surface.of("chat").hosted
    with pytest.raises(ValueError, match="no built-in surface is named 'kiosk'"):
        Surface.of("kiosk")
    with pytest.raises(ValueError, match="surface name 'Kiosk!'"):
        Surface(name="Kiosk!", interactive=True)
    with pytest.raises(ConfigError, match=r"\$\.surfaces\.Web: 'Web' is not a surface name"):
        config_from_dict({"surfaces": {"Web": {}}})
    with pytest.raises(ConfigError, match=r"\$\.surfaces\.web\.alow: unknown key 'alow'"):
        config_from_dict({"surfaces": {"web": {"alow": []}}})
    with pytest.raises(ConfigError, match=r"\$\.policy\.guarded\[0\] = 'explosive'"):
        config_from_dict({"policy": {"guarded": ["explosive"]}})


# -- guarded side effects -----------------------------------------------------------------------


def _wipe_script() -> list[Any]:
    return [{"tool_calls": [{"name": "wipe", "arguments": {"target": "disk"}}]}, "done"]


async def _run_on(
    tmp_path: Path, surface: Surface | str | None, policy: PolicyConfig | None = None, **run: Any
) -> toolwire.Run:
    host = make_host(tmp_path, TOOLS, policy=policy)
    if surface is not None:
        host.use_surface(surface)
    try:
        loop, _ = scripted_loop(host, _wipe_script())
        return await loop.run("wipe the disk", tools=["wipe"], **run)
    finally:
        await host.aclose()


async def test_interactive_surfaces_ask_before_a_guarded_tool(tmp_path: Path) -> None:
    for surface in ("run", "chat", "web", Surface(name="helpdesk", interactive=True)):
        run = await _run_on(tmp_path, surface)
        assert run.stop_reason == "deferred", surface
        (request,) = run.deferred
        assert request.reason == "approval"
        assert "'destructive'" in request.detail
        assert "([policy] guarded)" in request.detail
        assert SIDE_EFFECTS == []
    asked: list[str] = []

    def approve(request: Any) -> Any:
        asked.append(request.tool)
        return Approve()

    run = await _run_on(tmp_path, "chat", approval=approve)
    assert (run.stop_reason, asked, SIDE_EFFECTS) == ("answered", ["wipe"], ["disk"])


async def test_unattended_surfaces_refuse_a_guarded_tool(tmp_path: Path) -> None:
    for surface in ("batch", "mcp-serve", Surface(name="run", interactive=False)):
        run = await _run_on(tmp_path, surface)
        assert run.stop_reason == "answered", surface
        (record,) = run.tool_calls
        assert record.result is not None
        assert record.result.status.value == "blocked"
        text = record.result.model_text()
        assert "'destructive' need a person's approval ([policy] guarded)" in text
        assert "unattended" in text
        assert "[policy] unattended_allow" in text
    assert SIDE_EFFECTS == []


async def test_the_config_says_otherwise(tmp_path: Path) -> None:
    # no guard: interactive surfaces run the tool without asking
    run = await _run_on(tmp_path, "chat", PolicyConfig(guarded=()))
    assert run.stop_reason == "answered"
    assert SIDE_EFFECTS == ["disk"]
    # unattended surfaces run what unattended_allow lists
    run = await _run_on(tmp_path, "batch", PolicyConfig(unattended_allow=("destructive",)))
    assert run.stop_reason == "answered"
    assert SIDE_EFFECTS == ["disk", "disk"]
    # a tool approved in advance for the surface (`mcp serve --approve wipe`)
    approved = Surface(name="mcp-serve", interactive=False, hosted=True, approved={"wipe"})
    run = await _run_on(tmp_path, approved)
    assert SIDE_EFFECTS == ["disk", "disk", "disk"]
    # a host that names no surface applies [policy] only, as before
    run = await _run_on(tmp_path, None)
    assert run.stop_reason == "answered"
    assert len(SIDE_EFFECTS) == 4
    # require_approval still applies on every surface: a batch run defers what it allows
    policy = PolicyConfig(require_approval=("destructive",), unattended_allow=("destructive",))
    run = await _run_on(tmp_path, "batch", policy)
    assert run.stop_reason == "deferred"
    assert len(SIDE_EFFECTS) == 4


def test_init_writes_the_rule_out_and_it_is_the_default(tmp_path: Path) -> None:
    text = render_init_config(["basics"])
    assert 'guarded = ["destructive", "external_spend", "payment", "shell"]' in text
    assert "unattended_allow = []" in text
    assert "else scripted" not in text
    assert "a run is refused" in text
    path = tmp_path / "toolwire.toml"
    path.write_text(text, encoding="utf-8")
    from toolwire.config import load_config

    assert load_config(path, search=False).policy == PolicyConfig()


# -- the commands declare their surfaces --------------------------------------------------------


def _write_cli_config(tmp_path: Path, extra: str = "") -> Path:
    script = '[{ tool_calls = [{ name = "wipe", arguments = { target = "disk" } }] }, "done"]'
    path = tmp_path / "toolwire.toml"
    path.write_text(
        '[plugins]\nenable = []\n[provider]\nadapter = "scripted"\n'
        f"[provider.options]\nscript = {script}\n"
        f'[ledger]\npath = "{tmp_path / "ledger.sqlite3"}"\n{extra}',
        encoding="utf-8",
    )
    return path


class _Piped(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_run_without_a_terminal_is_unattended_and_approve_all_lifts_the_guard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write_cli_config(tmp_path)
    monkeypatch.setattr(sys, "stdin", _Piped(""))
    monkeypatch.setattr(Host, "load", _with_tools(Host.load))
    assert main(["--config", str(config), "run", "--json", "wipe it"]) == 0
    out = capsys.readouterr().out
    assert '"status": "blocked"' in out
    assert "the run surface runs unattended" in out
    assert SIDE_EFFECTS == []
    assert main(["--config", str(config), "run", "--json", "--approve-all", "wipe it"]) == 0
    assert SIDE_EFFECTS == ["disk"]


def _with_tools(load: Any) -> Any:
    def loaded(config: Any = None, **kwargs: Any) -> Host:
        kwargs["plugins"] = [*kwargs.get("plugins", ()), tools_plugin(*TOOLS)]
        return load(config, **kwargs)

    return loaded


def test_tools_list_and_why_show_a_surfaces_offer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write_cli_config(tmp_path, '[surfaces.web]\nallow = ["look"]\n')
    monkeypatch.setattr(Host, "load", _with_tools(Host.load))
    assert main(["--config", str(config), "tools", "why", "wipe", "--surface", "web"]) == 0
    assert capsys.readouterr().out == (
        "wipe: it is not in the allow list of the web surface ([surfaces.web] allow)\n"
    )
    assert main(["--config", str(config), "tools", "list", "--surface", "batch"]) == 0
    listed = capsys.readouterr().out
    assert listed.count("not offered") == 3
    assert "the batch surface is hosted" in listed
    assert main(["--config", str(config), "tools", "why", "wipe", "--surface", "kiosk"]) == 2
    assert "no built-in surface is named 'kiosk'" in capsys.readouterr().err
