"""The ``web`` plugin: discovery, its settings, what its tools declare, the address rule."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest
from web_support import make_host

import toolwire_web
import toolwire_web._plugin as plugin
from toolwire import ConfigError, SideEffect, TrustLevel, UserMessage
from toolwire.messages import AssistantMessage, TextPart, ToolResultMessage
from toolwire.tools import Source, ToolResult
from toolwire_web import WebSettings, read_web_page, web_search
from toolwire_web._addresses import address_given


def test_entry_point_names_the_plugin_module() -> None:
    points = importlib.metadata.entry_points(group="toolwire.plugins")
    (point,) = [p for p in points if p.name == "web"]
    assert point.value == "toolwire_web._plugin"
    assert point.dist is not None
    assert point.dist.name == "toolwire-web"


def test_package_exports() -> None:
    assert toolwire_web.__all__ == [
        "WebSettings",
        "read_web_page",
        "search_confluence",
        "web_search",
    ]


def test_host_registers_both_tools_with_structured_settings(tmp_path: Path) -> None:
    host, _ = make_host(tmp_path, private_hosts=["intranet.local"], max_result_chars=5000)
    assert sorted(host.tools) == ["read_web_page", "web_search"]
    assert {t.plugin for t in host.tools.values()} == {"web"}
    settings = host.plugin_settings("web")
    assert isinstance(settings, WebSettings)
    assert settings.private_hosts == ("intranet.local",)
    assert settings.max_result_chars == 5000


@pytest.mark.parametrize("tool", [read_web_page, web_search])
def test_the_tools_are_network_reads_returning_untrusted_content(tool: Any) -> None:
    assert tool.policy.side_effects == frozenset({SideEffect.NETWORK, SideEffect.READ_ONLY})
    assert tool.policy.idempotent
    assert tool.returns_untrusted_content
    assert tool.description
    assert tool.instructions
    for schema in tool.parameters["properties"].values():
        assert len(schema["description"]) > 20
    assert tool.parameters["additionalProperties"] is False


def test_web_search_pages_from_one() -> None:
    page = web_search.parameters["properties"]["page"]
    assert page["minimum"] == 1
    assert page["default"] == 1
    assert web_search.parameters["required"] == ["query"]


@pytest.mark.parametrize(
    ("section", "words"),
    [
        ({"private_hosts": ["http://intranet.local/"]}, "private_hosts entry 'http://intranet"),
        ({"private_hosts_trust": "total"}, "private_hosts_trust = 'total': unknown trust level"),
        ({"free_address_choice": "maybe"}, "free_address_choice"),
        ({"search_backend": "searxng"}, "search_backend = 'searxng' needs searxng_url"),
        ({"searxng_url": "searx.local"}, "expected an http:// or https:// URL"),
        ({"allowed_ports": [0]}, "allowed_ports contains 0"),
        (
            {"max_result_chars": 10},
            "max_result_chars = 10: expected a finite number of at least 500",
        ),
        ({"brave_api_key_env": "BSA-123.key"}, "the NAME of an environment variable"),
        ({"privat_hosts": []}, "unknown key 'privat_hosts'"),
    ],
)
def test_bad_settings_are_config_errors_naming_the_key(
    tmp_path: Path, section: dict[str, Any], words: str
) -> None:
    # Refused when the host loads, not later when the plugin's tools are collected.
    with pytest.raises(ConfigError) as info:
        make_host(tmp_path, **section)
    assert words in str(info.value)
    assert "tools.web" in str(info.value)


def test_settings_give_the_read_policy_by_provider_trust() -> None:
    settings = WebSettings(private_hosts=("127.0.0.1:8081",), allowed_ports=(80, 443))
    trusted = settings.read_policy(TrustLevel.SELF_HOSTED)
    assert trusted.private_hosts == ("127.0.0.1:8081",)
    assert trusted.allowed_ports == frozenset({80, 443})
    assert settings.read_policy(TrustLevel.HIGH).private_hosts == ()
    search = settings.search_policy("http://127.0.0.1:8081/")
    assert search.private_hosts == ("127.0.0.1:8081",)
    assert settings.search_policy("http://127.0.0.1:9999/").private_hosts == ()


def test_the_reader_is_worded_by_the_settings_and_no_instructions_hook_is_needed() -> None:
    default, searcher = plugin.toolwire_tools(WebSettings())
    assert default is read_web_page
    assert searcher is web_search
    free, _ = plugin.toolwire_tools(WebSettings(free_address_choice="on"))
    assert free.name == "read_web_page"
    assert "addresses you choose yourself" in (free.instructions or "")
    assert "addresses you choose yourself" not in (default.instructions or "")
    assert not hasattr(plugin, "toolwire_system_prompt_instructions")
    assert plugin.toolwire_settings_class("web") is WebSettings
    assert plugin.toolwire_settings_class("other") is None


# -- the address rule --------------------------------------------------------------------------


def _conversation(*texts: str, results: tuple[str, ...] = ()) -> list[Any]:
    messages: list[Any] = [UserMessage(text) for text in texts]
    for number, text in enumerate(results):
        messages.append(
            ToolResultMessage(call_id=f"c{number}", name="web_search", result=ToolResult.ok(text))
        )
    return messages


@pytest.mark.parametrize(
    ("url", "text"),
    [
        ("https://a.example/x", "see https://a.example/x"),
        ("https://a.example/x", "see https://a.example/x."),
        ("https://a.example/x", "(https://a.example/x)"),
        ("https://a.example/x", "[link](https://a.example/x)."),
        ("https://a.example/x", '{"url": "https://a.example/x"}'),
        ("https://a.example/x", "read a.example/x please"),
        ("https://a.example/", "read https://a.example"),
        ("https://a.example", "read https://a.example/"),
        ("https://a.example/?a=1&b=2", "<a href='https://a.example/?a=1&amp;b=2'>"),
        ("http://a.example/x", "https://a.example/x"),
    ],
)
def test_addresses_given_word_for_word(url: str, text: str) -> None:
    assert address_given(url, _conversation(text))


@pytest.mark.parametrize(
    ("url", "text"),
    [
        ("https://a.example/x?q=secret", "see https://a.example/x"),
        ("https://a.example/", "see https://a.example/x"),
        ("https://a.example/x", "see https://a.example/xyz"),
        ("https://a.example/x", "see https://evil-a.example/x"),
        ("https://a.example/x", "https://evil.example/?u=a.example/x"),
        ("https://a.example/x", "see https://a.example/x.html"),
        ("", "anything"),
    ],
)
def test_addresses_not_given(url: str, text: str) -> None:
    assert not address_given(url, _conversation(text))


def test_tool_results_and_their_sources_count_but_the_models_words_do_not() -> None:
    messages = _conversation("hello", results=("result https://r.example/1",))
    assert address_given("https://r.example/1", messages)
    cited = ToolResultMessage(
        call_id="c9",
        name="x",
        result=ToolResult.ok("no text", sources=[Source("https://s.example/")]),
    )
    assert address_given("https://s.example/", [cited])
    own = AssistantMessage(parts=[TextPart("I will read https://m.example/")])
    assert not address_given("https://m.example/", [UserMessage("hi"), own])
