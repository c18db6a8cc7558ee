"""A plugin's settings that do not fit are config errors, in every command, naming key and value."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire.cli import main

pytest.importorskip("toolwire_web", reason="needs toolwire-web installed")
pytest.importorskip("toolwire_llamacpp", reason="needs toolwire-llamacpp installed")


def _write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    (tmp_path / "toolwire.toml").write_text(
        '[plugins]\nenable = ["web", "llamacpp"]\n[ledger]\nenabled = false\n' + text,
        encoding="utf-8",
    )


@pytest.mark.parametrize("command", [["tools", "list"], ["plugins"], ["doctor"], ["run", "hi"]])
def test_a_typo_in_the_llamacpp_section_is_a_settings_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    _write(tmp_path, monkeypatch, "[providers.llamacpp]\nn_thread = 2\n")
    assert main(command) == 2
    err = capsys.readouterr().err
    assert "$.providers.llamacpp.n_thread: unknown key 'n_thread'" in err
    assert "n_threads" in err  # among the valid keys
    assert "no provider adapter named" not in err


def test_a_wrong_type_in_the_llamacpp_section_names_key_value_and_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, monkeypatch, '[providers.llamacpp]\nn_ctx = "4096"\n')
    assert main(["run", "What is 2 + 2?"]) == 2
    err = capsys.readouterr().err
    assert "$.providers.llamacpp.n_ctx = '4096': wrong type (str); expected an integer" in err


def test_allowed_ports_as_a_string_is_refused_not_read_as_digits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, monkeypatch, '[tools.web]\nallowed_ports = "80"\n')
    assert main(["tools", "list"]) == 2
    captured = capsys.readouterr()
    assert (
        "$.tools.web.allowed_ports = '80': wrong type (str); expected a list of integers"
        in captured.err
    )
    assert "'8'" not in captured.err
    assert "read_web_page" not in captured.out  # no listing that silently lacks the tools


def test_a_value_the_plugin_refuses_is_a_settings_error_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, monkeypatch, "[tools.web]\nallowed_ports = [80, 70000]\n")
    assert main(["tools", "list"]) == 2
    err = capsys.readouterr().err
    assert "$.tools.web" in err
    assert "allowed_ports contains 70000: expected port numbers from 1 to 65535" in err


def test_valid_settings_list_the_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, monkeypatch, "[tools.web]\nallowed_ports = [80, 443]\n")
    assert main(["tools", "list"]) == 0
    assert "read_web_page" in capsys.readouterr().out
