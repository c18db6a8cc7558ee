"""Offering each tool when the user's words call for it, and always when configured so."""

from __future__ import annotations

import pytest

import toolwire_basics._plugin as plugin
from toolwire import Config, ConfigError, Host, OfferRequest, ToolResult
from toolwire.config import config_from_dict
from toolwire.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from toolwire_basics import calculator, convert_time, convert_units, current_time
from toolwire_basics._relevance import BasicsSettings, relevant_tools

TOOLS = [calculator, convert_time, convert_units, current_time]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is 17.5% of 2480?", ["calculator"]),
        ("What is the square root of two?", ["calculator"]),
        ("How many miles is 42 km?", ["convert_units"]),
        ("What is 100°F in Celsius?", ["convert_units"]),
        ("Convert 3 fl oz to ml", ["convert_units"]),
        ("What is 5 km plus 3 km in miles?", ["calculator", "convert_units"]),
        ("What time is it in Tokyo?", ["current_time"]),
        ("What day is it today?", ["current_time"]),
        ("Convert 9am London time to Tokyo time.", ["convert_time"]),
        ("When is 14:30 Europe/Paris in UTC?", ["convert_time"]),
        ("Denver noon -> Berlin", ["convert_time"]),
        ("Hello, who are you?", []),
        ("How many seconds are there in a week?", ["convert_units"]),
        ("How many hours are in 3 weeks?", ["convert_units"]),
        ("How many legs does a dog have?", []),
        ("7 m/s -> mph", ["convert_units"]),
        ("centimetres in a kilometer", ["convert_units"]),
        ("What is a kilo in Spanish?", []),
        ("wat tme is it in Athens?", ["current_time"]),
        ("whats 15 precent of 80", ["calculator"]),
        ("Hi! what color is the sky on a clear day?", []),
        ("What day of the week is it in Tokyo?", ["current_time"]),
        ("What is 403 m² in square feet?", ["convert_units"]),
        ("Convert 2025-03-14 15:30 Paris time to Tokyo.", ["convert_time"]),
        ("What do I earn for 6 hours at £45 an hour?", ["calculator"]),
        ("7.5 hours a day for 5 days, how many hours?", ["calculator", "convert_units"]),
    ],
)
def test_relevant_tools(text: str, expected: list[str]) -> None:
    assert relevant_tools(text) == expected


def _request(
    *messages: object, settings: object = None, chosen_tool: str | None = None
) -> OfferRequest:
    return OfferRequest(
        run_id="r",
        round=1,
        messages=tuple(messages),
        api="x",
        settings=settings or {},
        chosen_tool=chosen_tool,
    )


def test_only_user_turns_count() -> None:
    call = ToolCall(id="c", name="calculator", arguments={"expression": "1"})
    request = _request(
        UserMessage("Hello"),
        AssistantMessage(parts=(call,)),
        ToolResultMessage(call_id="c", name="calculator", result=ToolResult.ok("It is 12:00 UTC")),
    )
    assert current_time.resolve(request) is None
    assert calculator.resolve(request) is None


def test_a_relevant_tool_offers_its_own_function() -> None:
    spec = calculator.resolve(_request(UserMessage("What is 2 + 2?")))
    assert spec == calculator.function_spec()


def test_a_tool_the_run_names_is_offered_whatever_the_words() -> None:
    question = UserMessage("what time is it in Tokyo")
    assert calculator.resolve(_request(question)) is None
    named = _request(question, chosen_tool="calculator")
    assert calculator.resolve(named) == calculator.function_spec()
    assert current_time.resolve(named) == current_time.function_spec()  # its words still count
    assert convert_units.resolve(named) is None  # named is only the calculator
    assert convert_units.resolve(_request(question, chosen_tool="current_time")) is None


@pytest.mark.parametrize("settings", [BasicsSettings(offer="always"), {"offer": "always"}])
def test_always_offers_everything(settings: object) -> None:
    request = _request(UserMessage("Hello"), settings=settings)
    assert all(tool.resolve(request) is not None for tool in TOOLS)


def test_settings_class_is_used_by_the_host() -> None:
    config = config_from_dict(
        {"plugins": {"enable": ["basics"]}, "tools": {"basics": {"offer": "always"}}}
    )
    host = Host.load(config)
    assert host.plugin_settings("basics") == BasicsSettings(offer="always")


def test_a_wrong_setting_is_refused_naming_the_key() -> None:
    config = config_from_dict(
        {"plugins": {"enable": ["basics"]}, "tools": {"basics": {"offer": "sometimes"}}}
    )
    with pytest.raises(ConfigError, match=r"\$\.tools\.basics\.offer = 'sometimes'"):
        Host.load(config).plugin_settings("basics")


def test_the_plugin_module_registers_all_four_tools() -> None:
    assert sorted(Host.load(Config(), plugins=[plugin]).tools) == sorted(t.name for t in TOOLS)
