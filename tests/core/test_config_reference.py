"""The config reference in the user guide, ``toolwire config show`` and the checks of values all
come from the keys' declarations, so none can drift from the others."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import attrs
import pytest

from toolwire.cli import main
from toolwire.config import Config, ConfigError, config_from_dict
from toolwire.config._fields import declared, number
from toolwire.config._reference import TABLES, default_text, documented, update_document
from toolwire.config._show import effective_settings

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"

# Tables of named tables, whose keys show lists only once something is set.
_NAMED = {"[profiles.<name>]", "[surfaces.<name>]", "[i18n.<locale>.<tool>]"}
# Fields of a section that are not keys of its table (filled from tables of their own).
_NOT_KEYS = {"plugin_settings", "texts"}


def _guide_rows() -> dict[str, list[str]]:
    """The rows of every generated table of the guide, by ``section.key``."""
    text = GUIDE.read_text(encoding="utf-8")
    rows: dict[str, list[str]] = {}
    for header, table in re.findall(
        r"<!-- config-reference: (.+?) -->\n(.*?)<!-- end config-reference -->", text, re.DOTALL
    ):
        section = header.strip("[]")
        for line in table.splitlines()[2:]:
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows[f"{section}.{cells[0].strip('`')}"] = cells
    return rows


def test_the_guide_holds_the_generated_reference_of_every_section() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    assert sorted(documented(text)) == sorted(TABLES)
    # Regenerate with: toolwire config reference --update docs/user-guide.md
    assert update_document(text) == text


def test_every_field_of_every_section_is_a_declared_key() -> None:
    for header, cls in TABLES.items():
        for field in attrs.fields(cls):
            if field.name in _NOT_KEYS:
                continue
            spec = declared(field)
            assert spec is not None, f"{header} {field.name} declares no help"
            assert spec.help
            assert "|" not in spec.help
            assert "\n" not in spec.help


def test_config_show_and_the_guide_list_the_same_keys_and_defaults() -> None:
    rows = _guide_rows()
    shown = {key: value for key, value, _ in effective_settings(Config())}
    named_tables = {"prices", "providers", "profiles", "surfaces"}
    keys = {key for key in rows if f"[{key.rsplit('.', 1)[0]}]" not in _NAMED}
    assert set(shown) - named_tables == keys
    for key in sorted(keys):
        section, name = key.rsplit(".", 1)
        spec = declared(attrs.fields_dict(TABLES[f"[{section}]"])[name])
        assert spec is not None
        if spec.default_text is None:
            assert rows[key][2] == default_text(shown[key]), key


def _bounded() -> list[tuple[str, str, float, float | None]]:
    found = []
    for header, cls in TABLES.items():
        if header in _NAMED:
            continue
        for field in attrs.fields(cls):
            spec = declared(field)
            if spec is not None and spec.bounds is not None:
                found.append((header.strip("[]"), field.name, *spec.bounds))
    return found


@pytest.mark.parametrize(("section", "key", "low", "high"), _bounded())
def test_every_bound_is_checked_where_the_config_is_read(
    section: str, key: str, low: float, high: float | None
) -> None:
    config_from_dict({section: {key: low}})
    below = low - 1 if isinstance(low, int) else low - 0.5
    with pytest.raises(ConfigError) as info:
        config_from_dict({section: {key: below}}, file="t.toml")
    message = str(info.value)
    assert message.startswith(f"t.toml: $.{section}.{key} = {below!r}: expected ")
    assert f" {number(low)}" in message
    if high is not None:
        config_from_dict({section: {key: high}})
        above = high + 1 if isinstance(high, int) else high * 2
        with pytest.raises(ConfigError, match=re.escape(f"to {number(high)}")):
            config_from_dict({section: {key: above}}, file="t.toml")


def test_a_named_provider_is_checked_by_the_same_declarations() -> None:
    with pytest.raises(ConfigError, match=r"\$\.provider\.cloud\.max_retries = 101: expected an"):
        config_from_dict({"provider": {"cloud": {"max_retries": 101}}})


def test_config_reference_prints_and_updates_a_document(tmp_path: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["config", "reference"]) == 0
    printed = out.getvalue()
    for header in TABLES:
        assert f"### `{header}`" in printed
    assert "| `max_rounds` | integer, 1 to 10000 | `10` | model requests per run |" in printed
    stale = tmp_path / "guide.md"
    stale.write_text(
        "Intro.\n\n<!-- config-reference: [batch] -->\n| old |\n<!-- end config-reference -->\n"
        "\nOutro.\n",
        encoding="utf-8",
    )
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["config", "reference", "--update", str(stale)]) == 0
    text = stale.read_text(encoding="utf-8")
    assert "| old |" not in text
    assert "| `executor` | string | `local` |" in text
    assert text.startswith("Intro.\n\n")
    assert text.endswith("\nOutro.\n")


def test_a_marker_naming_no_section_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "guide.md"
    page.write_text("<!-- config-reference: [nope] -->\n<!-- end config-reference -->\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["config", "reference", "--update", str(page)]) == 1
    assert "[nope]: no such section" in err.getvalue()
