"""Config mistakes of the first hour: TOML syntax, strings for arrays, $TOOLWIRE_PLUGINS."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from toolwire import Host
from toolwire.cli import main
from toolwire.config import ConfigError, load_config, structure_section


def _load(tmp_path: Path, text: str) -> ConfigError:
    path = tmp_path / "toolwire.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return caught.value


def test_a_bare_word_for_a_boolean_names_line_key_and_what_is_valid(tmp_path: Path) -> None:
    error = _load(tmp_path, '[provider]\nadapter = "openai-chat"\nstream = yes\n')
    assert str(error) == (
        f"{tmp_path / 'toolwire.toml'}: line 3: [provider] stream = yes: not a TOML value; "
        "expected a boolean (true or false)"
    )
    assert error.path == "$.provider.stream"


def test_a_bare_word_for_a_string_says_to_quote_it(tmp_path: Path) -> None:
    error = _load(tmp_path, "[provider]\nmodel = qwen3\n")
    assert "line 2: [provider] model = qwen3: not a TOML value; expected a string" in str(error)
    assert 'a string needs quotes: model = "qwen3"' in str(error)


def test_a_duplicate_key_names_both_lines(tmp_path: Path) -> None:
    error = _load(tmp_path, "[loop]\nmax_rounds = 3\nconcurrency = 2\nmax_rounds = 4\n")
    assert "line 4: [loop] max_rounds is set twice (first on line 2)" in str(error)
    assert "keep one of them" in str(error)
    assert error.path == "$.loop.max_rounds"


def test_a_duplicate_table_names_both_headers(tmp_path: Path) -> None:
    error = _load(tmp_path, '[provider]\nmodel = "m"\n\n[loop]\nmax_rounds = 3\n[provider]\n')
    assert "line 6: the table [provider] is declared twice (first on line 1)" in str(error)


def test_other_syntax_errors_name_line_column_and_the_text(tmp_path: Path) -> None:
    error = _load(tmp_path, "[loop]\nmax_rounds = 1_\n")
    assert "line 2, column 15: not valid TOML (expected newline" in str(error)
    assert "'max_rounds = 1_'" in str(error)
    error = _load(tmp_path, "[plugins]\nenable = [\n")
    assert "not valid TOML at the end of the file" in str(error)


@attrs.frozen(kw_only=True)
class PortSettings:
    allowed_ports: tuple[int, ...] = (80, 443)
    hosts: list[str] = attrs.field(factory=list)
    tags: frozenset[str] = frozenset()


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("allowed_ports", "80", "a list of integers"),
        ("hosts", "example.org", "a list of strings"),
        ("tags", "ab", "a list of strings"),
    ],
)
def test_a_string_is_not_read_as_an_array_of_its_characters(
    key: str, value: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        structure_section({key: value}, PortSettings, file="t.toml", path="$.tools.web")
    assert str(caught.value) == (
        f"t.toml: $.tools.web.{key} = {value!r}: wrong type (str); expected {expected}"
    )


def test_arrays_still_structure() -> None:
    settings = structure_section(
        {"allowed_ports": [8080], "hosts": ["a"], "tags": ["x", "x"]},
        PortSettings,
        file="t.toml",
        path="$.tools.web",
    )
    assert settings == PortSettings(allowed_ports=(8080,), hosts=["a"], tags=frozenset({"x"}))
    with pytest.raises(ConfigError, match=r"allowed_ports\[1\] = 'x': wrong type"):
        structure_section({"allowed_ports": [1, "x"]}, PortSettings, file="t", path="$.t")


def test_toolwire_plugins_errors_are_blamed_on_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolwire.toml").write_text('[plugins]\nenable = ["basics"]\n', encoding="utf-8")
    monkeypatch.setenv("TOOLWIRE_PLUGINS", "basics,not-a-plugin")
    with pytest.raises(ConfigError) as caught:
        Host.load()
    message = str(caught.value)
    assert message.startswith(
        "$TOOLWIRE_PLUGINS = 'basics,not-a-plugin': item 2 = 'not-a-plugin': no installed plugin"
    )
    assert "toolwire.toml" not in message
    assert "<config>" not in message
    assert main(["plugins"]) == 2
    assert "$TOOLWIRE_PLUGINS" in capsys.readouterr().err
