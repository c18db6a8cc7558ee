"""`toolwire doctor` is not ok when a run could not work: no model, an unknown adapter, a tool
its plugin never offers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolwire.cli import main

pytest.importorskip("toolwire_web", reason="needs toolwire-web installed")
pytest.importorskip("toolwire_openai", reason="needs toolwire-openai installed")


def _doctor(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
) -> tuple[int, dict[str, object], str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    (tmp_path / "toolwire.toml").write_text(
        '[plugins]\nenable = ["openai", "web"]\n' + text, encoding="utf-8"
    )
    code = main(["doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert main(["doctor"]) == code
    return code, report, capsys.readouterr().out


GOOD = (
    '[provider]\nadapter = "openai-chat"\nmodel = "qwen3:4b"\n'
    '[tools.web]\nsearch_backend = "none"\n'
)


def test_a_complete_config_is_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report, text = _doctor(tmp_path, monkeypatch, capsys, GOOD)
    assert code == 0
    assert report["provider"] == {
        "adapter": "openai-chat",
        "model": "qwen3:4b",
        "ok": True,
        "problems": [],
    }
    assert "provider openai-chat (model qwen3:4b): ok" in text


def test_no_model_is_not_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report, text = _doctor(
        tmp_path, monkeypatch, capsys, GOOD.replace('model = "qwen3:4b"\n', "")
    )
    assert code == 1
    assert report["provider"]["ok"] is False  # type: ignore[index]
    assert "provider: FAIL" in text
    assert "[provider] model is not set: openai-chat names the model in every request" in text


def test_an_unknown_adapter_is_not_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, text = _doctor(
        tmp_path, monkeypatch, capsys, GOOD.replace('"openai-chat"', '"openai-chats"')
    )
    assert code == 1
    assert "[provider] adapter = 'openai-chats': no enabled plugin registers this adapter" in text
    assert "registered adapters: openai-chat, openai-responses" in text


def test_no_provider_at_all_is_not_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, text = _doctor(tmp_path, monkeypatch, capsys, "")
    assert code == 1
    assert "no provider: set [provider] adapter" in text


def test_web_search_without_a_backend_is_not_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = '[provider]\nadapter = "openai-chat"\nmodel = "m"\n'
    code, report, text = _doctor(tmp_path, monkeypatch, capsys, config)
    assert code == 1
    (entry,) = [t for t in report["tools"] if t["name"] == "web_search"]  # type: ignore[attr-defined]
    (finding,) = [f for f in entry["findings"] if f["code"] == "not-offered"]
    assert finding["severity"] == "error"
    assert "never offered with this config" in finding["message"]
    assert "check [tools.web]" in finding["message"]
    assert "tool web_search [web]: ok" not in text
    assert "tool read_web_page [web]: ok" in text
    # Saying there is to be no search leaves the tool out, and the rest is ok.
    code, report, _ = _doctor(
        tmp_path, monkeypatch, capsys, config + '[tools.web]\nsearch_backend = "none"\n'
    )
    assert code == 0
    assert "web_search" not in {t["name"] for t in report["tools"]}  # type: ignore[attr-defined]


def test_tools_offered_when_relevant_are_not_called_never_offered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("toolwire_basics", reason="needs toolwire-basics installed")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    (tmp_path / "toolwire.toml").write_text(
        '[plugins]\nenable = ["openai", "basics"]\n'
        '[provider]\nadapter = "openai-chat"\nmodel = "qwen3:4b"\n',
        encoding="utf-8",
    )
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for entry in report["tools"]:
        codes = {f["code"]: f for f in entry["findings"]}
        assert "not-offered" not in codes, entry
        finding = codes["offered-when-relevant"]
        assert finding["severity"] == "info"
        assert "never offered" not in finding["message"]
    assert main(["doctor"]) == 0
    assert "never offered" not in capsys.readouterr().out
