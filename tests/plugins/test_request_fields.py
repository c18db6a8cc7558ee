"""What the loop decides about tools is never overridden by extra request fields, and tools the
provider runs itself have their own setting."""

from __future__ import annotations

import re
from typing import Any

import pytest

from toolwire import FunctionSpec
from toolwire.adapters import ModelRequest, NamedToolChoice, ProviderError
from toolwire.config import ConfigError, ProviderConfig, config_from_dict
from toolwire.messages import UserMessage
from toolwire_anthropic import render_messages_request
from toolwire_gemini import render_request as render_gemini_request
from toolwire_openai import render_chat_request, render_responses_request

SPEC = FunctionSpec(
    name="add",
    description="Add.",
    parameters={"type": "object", "properties": {"a": {"type": "integer"}}},
)
SEARCH = {"type": "web_search"}
SERVER_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}


def request(**fields: Any) -> ModelRequest:
    values: dict[str, Any] = {"run_id": "r", "round": 1, "messages": (UserMessage("hi"),)}
    values.update(fields)
    return ModelRequest(**values)


RENDERERS = [
    render_chat_request,
    render_responses_request,
    render_messages_request,
    render_gemini_request,
]


@pytest.mark.parametrize("key", ["tools", "tool_choice", "parallel_tool_calls"])
def test_options_may_not_set_the_tool_fields_in_a_config_file(key: str) -> None:
    with pytest.raises(ConfigError, match=rf"\$\.provider\.options\.{key} = .*the loop decides"):
        config_from_dict({"provider": {"options": {key: "x"}}})


@pytest.mark.parametrize("render", RENDERERS)
@pytest.mark.parametrize("key", ["tools", "tool_choice", "parallel_tool_calls"])
def test_nor_in_a_config_built_in_python_nor_in_a_request(render: Any, key: str) -> None:
    config = ProviderConfig(model="m", options={key: "x"})
    with pytest.raises(ProviderError, match=rf"\[provider\] options set {key}, which the loop"):
        render(request(functions=(SPEC,)), config)
    with pytest.raises(ProviderError, match=rf"the request's options set {key}"):
        render(request(functions=(SPEC,), options={key: "x"}), ProviderConfig(model="m"))


@pytest.mark.parametrize("render", RENDERERS)
def test_other_options_still_reach_the_body(render: Any) -> None:
    body = render(request(), ProviderConfig(model="m", options={"seed": 7}))
    assert body["seed"] == 7


@pytest.mark.parametrize("render", [render_chat_request, render_responses_request])
def test_a_request_without_tools_never_carries_the_parallel_flag(render: Any) -> None:
    config = ProviderConfig(model="m", accepts_parallel_tool_calls=True)
    assert "parallel_tool_calls" not in render(request(parallel_tool_calls=False), config)
    with_tools = render(request(functions=(SPEC,), parallel_tool_calls=False), config)
    assert with_tools["parallel_tool_calls"] is False


def test_provider_tools_follow_the_local_tools_on_the_responses_api() -> None:
    config = ProviderConfig(model="m", provider_tools=(SEARCH,))
    body = render_responses_request(request(functions=(SPEC,)), config)
    assert [t.get("name", t["type"]) for t in body["tools"]] == ["add", "web_search"]
    alone = render_responses_request(request(), config)
    assert alone["tools"] == [SEARCH]


def test_anthropic_server_tools_follow_the_local_tools() -> None:
    config = ProviderConfig(model="m", provider_tools=(SERVER_SEARCH,))
    body = render_messages_request(request(functions=(SPEC,)), config)
    assert body["tools"][1] == SERVER_SEARCH
    assert render_messages_request(request(), config)["tools"] == [SERVER_SEARCH]


def test_chat_completions_refuses_provider_tools_naming_the_adapter_to_use() -> None:
    config = ProviderConfig(model="m", provider_tools=(SEARCH,))
    with pytest.raises(ProviderError, match="use the adapter 'openai-responses'"):
        render_chat_request(request(functions=(SPEC,)), config)


def test_a_provider_tool_needs_a_type() -> None:
    with pytest.raises(ConfigError, match=r"\$\.provider\.provider_tools\[0\].*\"type\""):
        config_from_dict({"provider": {"provider_tools": [{"name": "web_search"}]}})


@pytest.mark.parametrize("render", RENDERERS)
@pytest.mark.parametrize(
    ("choice", "offered", "says"),
    [
        (
            NamedToolChoice("nope"),
            (SPEC,),
            "tool_choice names the tool 'nope', which is not offered in this request "
            "(offered: add)",
        ),
        ("required", (), "tool_choice 'required' needs at least one offered tool"),
        ("sometimes", (SPEC,), "tool_choice 'sometimes' is not valid; use 'auto', 'none'"),
    ],
)
def test_every_adapter_refuses_an_unsatisfiable_tool_choice_in_the_same_words(
    render: Any, choice: Any, offered: tuple[FunctionSpec, ...], says: str
) -> None:
    with pytest.raises(ProviderError, match=re.escape(says)) as refused:
        render(request(functions=offered, tool_choice=choice), ProviderConfig(model="m"))
    assert refused.value.api == str(refused.value).split(":", 1)[0]
