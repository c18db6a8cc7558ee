"""``[i18n]``: titles and descriptions people read, per locale; never what a model reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import toolwire
from toolwire import Host
from toolwire.cli import main
from toolwire.config import ConfigError, ToolTexts, config_from_dict
from toolwire.host._display import environment_locale, tool_display

FRENCH = {
    "i18n": {
        "locale": "fr",
        "fr": {"convert_units": {"title": "Convertir", "description": "Convertit des unités."}},
        "pt-BR": {"convert_units": {"title": "Converter unidades"}},
    }
}


@toolwire.tool(title="Convert units", icon="📏")
def convert_units(value: float, unit: str) -> str:
    """Convert a quantity between units."""
    return f"{value} {unit}"


def test_the_section_is_read_per_locale_and_tool() -> None:
    i18n = config_from_dict(FRENCH).i18n
    assert i18n.locale == "fr"
    assert i18n.texts["fr"]["convert_units"] == ToolTexts(
        title="Convertir", description="Convertit des unités."
    )
    assert i18n.texts["pt-br"]["convert_units"].description is None


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ({"i18n": {"locale": "français!"}}, "$.i18n.locale"),
        ({"i18n": {"fr": {"convert_units": {"titel": "x"}}}}, "titel"),
        ({"i18n": {"fr": "Convertir"}}, "$.i18n.fr"),
        ({"i18n": {"fr": {"convert_units": {"title": 3}}}}, "$.i18n.fr.convert_units.title"),
    ],
)
def test_bad_tables_are_refused_naming_the_key(raw: dict[str, object], where: str) -> None:
    with pytest.raises(ConfigError, match=rf"{where.replace('$', chr(92) + '$')}"):
        config_from_dict(raw)


def test_a_translation_is_found_for_the_language_and_falls_back_to_the_tool() -> None:
    i18n = config_from_dict(FRENCH).i18n
    french = tool_display(convert_units, i18n)
    assert (french.title, french.description, french.locale) == (
        "Convertir",
        "Convertit des unités.",
        "fr",
    )
    assert tool_display(convert_units, i18n, "fr_CA").title == "Convertir"  # fr-ca, then fr
    brazilian = tool_display(convert_units, i18n, "pt-BR")
    assert brazilian.title == "Converter unidades"
    assert brazilian.description == "Convert a quantity between units."  # not translated
    english = tool_display(convert_units, i18n, "en")
    assert (english.title, english.locale, english.icon) == ("Convert units", None, "📏")


def test_the_environment_gives_the_locale_when_the_config_does_not() -> None:
    assert environment_locale({"LANG": "fr_FR.UTF-8"}) == "fr-fr"
    assert environment_locale({"LC_ALL": "C", "LANG": "de_DE"}) == "de-de"
    assert environment_locale({"LANG": "C.UTF-8"}) is None


def test_what_the_model_reads_is_never_translated(tmp_path: Path) -> None:
    host = Host.load(config_from_dict(FRENCH))
    host.add_tool(convert_units)
    assert host.tool_display("convert_units").title == "Convertir"
    spec = host.tools["convert_units"].function_spec()
    assert spec.description == "Convert a quantity between units."
    with pytest.raises(KeyError, match="no tool named 'nope'"):
        host.tool_display("nope")


def test_tools_list_and_show_print_the_display_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLWIRE_PLUGINS", raising=False)
    monkeypatch.setenv("LANG", "C")
    (tmp_path / "toolwire.toml").write_text(
        '[plugins]\nenable = ["basics"]\n'
        '[i18n.de.convert_units]\ntitle = "Einheiten"\ndescription = "Rechnet Einheiten um."\n'
    )
    assert main(["tools", "list", "--locale", "de"]) == 0
    assert "Rechnet Einheiten um." in capsys.readouterr().out
    assert main(["tools", "show", "convert_units", "--locale", "de"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["display"] == {
        "locale": "de",
        "title": "Einheiten",
        "description": "Rechnet Einheiten um.",
    }
    assert shown["description"] != "Rechnet Einheiten um."
    assert main(["tools", "show", "convert_units"]) == 0
    assert "display" not in json.loads(capsys.readouterr().out)
