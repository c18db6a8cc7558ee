"""Building the web tools (what ``toolwire tools list`` does) compiles no pattern of the
package and imports nothing a call needs: the patterns, tables and modules come on first use."""

from __future__ import annotations

from startup_probe import build_tools


def test_building_the_tools_compiles_no_pattern_and_imports_no_call_machinery() -> None:
    found = build_tools(
        "toolwire_web",
        (
            "html",
            "base64",
            "uuid",
            "toolwire.messages",
            "toolwire.tools._paging",
            "toolwire_web._backends",
            "toolwire_web._page",
        ),
    )
    assert found["tools"] == ["read_web_page", "web_search"]
    assert found["compiled"] == []
    assert found["modules"] == []


def test_the_settings_defaults_match_the_patterns_they_skip() -> None:
    from toolwire_web import _settings

    defaults = _settings.WebSettings()
    assert _settings._http_url().fullmatch(defaults.brave_url)
    assert _settings._env_name_pattern().fullmatch(defaults.brave_api_key_env)
