"""``toolwire run`` on a terminal: rendering, approval prompts, ``--json``, exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from loop_support import make_host, scripted_loop

import toolwire
from toolwire import Config, Host, Retry, ToolResult
from toolwire.cli._render import ApprovalPrompter, TerminalRenderer, run_cli
from toolwire.config import LedgerConfig, ProviderConfig
from toolwire.loop import Approve, DeferredRequest, Deny
from toolwire.messages import AssistantMessage, TextPart
from toolwire.testing import tool_call
from toolwire.tools import Source


@toolwire.tool
def lookup(topic: Annotated[str, "Topic."], context: toolwire.ToolContext) -> ToolResult:
    """Look a topic up."""
    context.report_progress("reading", 0.5)
    return ToolResult.ok(
        f"{topic} facts",
        sources=[
            Source("https://example.org/a", "A page"),
            Source("https://example.org/a", "A page"),
        ],
    )


@toolwire.tool(requires_approval=True, sensitive_arguments={"token"})
def deploy(target: Annotated[str, "Where."], token: Annotated[str, "Secret."] = "") -> str:
    """Deploy."""
    return f"deployed to {target}"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_renderer_shows_calls_progress_answer_and_sources(tmp_path: Path) -> None:
    host = make_host(tmp_path, [lookup])
    loop, _ = scripted_loop(
        host,
        [
            AssistantMessage(
                parts=(TextPart("Let me check."), tool_call("lookup", {"topic": "owls"}))
            ),
            "Owls are birds.",
        ],
    )
    out = io.StringIO()
    renderer = TerminalRenderer(out)
    async for event in loop.stream("owls?", stream=True):
        renderer(event)
    assert out.getvalue() == (
        "Let me check.\n"
        "╭ lookup\n"
        "│ topic: owls\n"
        "│ … reading (50%)\n"
        "╰ ✓ owls facts\n"
        "  ↳ A page — https://example.org/a\n"
        "Owls are birds.\n"
        "\nSources:\n"
        "  [1] A page — https://example.org/a\n"
    )


async def test_renderer_without_streaming_prints_whole_turns(tmp_path: Path) -> None:
    host = make_host(tmp_path, [lookup])
    loop, _ = scripted_loop(host, [tool_call("nope", {}), "Sorry."])
    out = io.StringIO()
    renderer = TerminalRenderer(out)
    async for event in loop.stream("x"):
        renderer(event)
    assert out.getvalue() == (
        "╭ nope\n╰ ? unknown tool 'nope' (return_error; offered: lookup)\nSorry.\n"
    )


def _request(**arguments: Any) -> DeferredRequest:
    return DeferredRequest(
        call_id="c1",
        tool="deploy",
        arguments=arguments or {"target": "prod"},
        reason="approval",
        detail="tool deploy asks for approval",
        round=1,
    )


@pytest.mark.parametrize(
    ("answers", "decision"),
    [
        ("y\n", Approve()),
        ("no\nToo risky.\n", Deny("Too risky.")),
        ("n\n\n", Deny()),
        ("s\nUse staging.\n", Retry("Use staging.")),
        (
            'maybe\ne\nnot json\ne\n[1]\ne\n{"target": "staging"}\n',
            Approve({"target": "staging"}),
        ),
        ("", None),
        (
            'e\n{"target": "x", "token": "[redacted]"}\n',
            Approve({"target": "x", "token": "s3cr3t"}),
        ),
    ],
)
async def test_approval_prompter(
    answers: str, decision: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EDITOR", raising=False)  # edits are typed at the prompt here
    monkeypatch.delenv("VISUAL", raising=False)
    out = io.StringIO()
    prompter = ApprovalPrompter(
        io.StringIO(answers), out, sensitive=lambda name: frozenset({"token"})
    )
    answer = await prompter(_request(target="prod", token="s3cr3t"))
    if isinstance(decision, Retry):  # an exception: compared by what it says
        assert isinstance(answer, Retry)
        assert answer.message == decision.message
    else:
        assert answer == decision
    text = out.getvalue()
    # Every argument is shown whole, the sensitive one redacted.
    assert "deploy needs approval: tool deploy asks for approval\n  target: prod\n" in text
    assert "  token: [redacted]\n" in text
    assert "s3cr3t" not in text
    if "maybe" in answers:
        assert "Please answer one of [y]es / [n]o / [e]dit / [s]end back" in text
        assert "Not valid JSON" in text
        assert "Expected a JSON object, got list" in text


def _cli_host(tmp_path: Path, script: list[Any]) -> Host:
    from loop_support import tools_plugin

    config = Config(
        provider=ProviderConfig(options={"script": script}),
        ledger=LedgerConfig(path=str(tmp_path / "ledger.sqlite3")),
    )
    return Host.load(config=config, plugins=[tools_plugin(lookup, deploy)])


DEPLOY_SCRIPT: list[Any] = [
    {"tool_calls": [{"name": "deploy", "arguments": {"target": "prod", "token": "tkn-123"}}]},
    "Deployed.",
]


def _adapterless_host(tmp_path: Path, script: list[Any]) -> Host:
    """The scripted adapter straight from the default plugin (no prompted wrapper needed)."""
    host = _cli_host(tmp_path, script)
    model = host.adapter_classes()["scripted"](host.config.provider)

    async def get_adapter() -> Any:
        return model

    host.get_adapter = get_adapter  # type: ignore[method-assign]
    return host


def test_run_cli_json_output(tmp_path: Path) -> None:
    host = _adapterless_host(tmp_path, [tool_call_config("lookup", {"topic": "owls"}), "Birds."])
    out = io.StringIO()
    code = run_cli(host, "owls?", json_output=True, stdin=io.StringIO(), stdout=out)
    assert code == 0
    data = json.loads(out.getvalue())
    assert data["stop_reason"] == "answered"
    assert data["text"] == "Birds."
    assert data["sources"] == [{"url": "https://example.org/a", "title": "A page"}]


def tool_call_config(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_run_cli_approve_all_and_deny_all(tmp_path: Path) -> None:
    out = io.StringIO()
    code = run_cli(
        _adapterless_host(tmp_path, DEPLOY_SCRIPT),
        "ship it",
        approve_all=True,
        stdin=io.StringIO(),
        stdout=out,
    )
    assert code == 0
    assert "╭ deploy · unclassified · asks first\n│ target: prod\n│ token: [redacted]\n" in (
        out.getvalue()
    )
    assert "╰ ✓ deployed to prod" in out.getvalue()
    assert "tkn-123" not in out.getvalue()
    out = io.StringIO()
    code = run_cli(
        _adapterless_host(tmp_path, DEPLOY_SCRIPT),
        "ship it",
        deny_all=True,
        stdin=io.StringIO(),
        stdout=out,
    )
    assert code == 0
    assert "╰ ✗ denied: Denied: the run was started with --deny-all." in out.getvalue()
    err = io.StringIO()
    assert (
        run_cli(
            _adapterless_host(tmp_path, DEPLOY_SCRIPT),
            "x",
            approve_all=True,
            deny_all=True,
            stderr=err,
        )
        == 2
    )


def test_run_cli_prompts_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EDITOR", raising=False)  # the edit is typed at the prompt
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("TOOLWIRE_GRANTS_FILE", str(tmp_path / "grants.toml"))
    out = FakeTerminal()
    code = run_cli(
        _adapterless_host(tmp_path, DEPLOY_SCRIPT),
        "ship it",
        stdin=FakeTerminal('e\n{"target": "staging"}\n'),
        stdout=out,
    )
    assert code == 0
    text = out.getvalue()
    assert "deploy needs approval: " in text
    assert "  token: [redacted]\n" in text
    assert "tkn-123" not in text
    assert "✓\x1b[0m deployed to staging" in text  # a terminal: in colour
    assert text.index("needs approval") > text.index("token")  # the card is complete first


def test_run_cli_without_a_terminal_lists_the_deferred_calls(tmp_path: Path) -> None:
    out = io.StringIO()
    code = run_cli(
        _adapterless_host(tmp_path, DEPLOY_SCRIPT), "ship it", stdin=io.StringIO(), stdout=out
    )
    assert code == 1
    text = out.getvalue()
    assert "[stopped: deferred: waiting for a decision on: deploy (call_1_0: approval)]" in text
    assert 'call_1_0: deploy(target="prod", token="[redacted]")' in text
    out = io.StringIO()
    assert (
        run_cli(
            _adapterless_host(tmp_path, DEPLOY_SCRIPT),
            "ship it",
            json_output=True,
            stdin=io.StringIO(),
            stdout=out,
        )
        == 1
    )
    data = json.loads(out.getvalue())
    assert data["deferred"][0]["arguments"] == {"target": "prod", "token": "[redacted]"}
    assert "tkn-123" not in out.getvalue()
