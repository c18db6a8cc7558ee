"""The pure verdicts the loop's stages take about budgets and typed answers."""

from __future__ import annotations

import dataclasses

from toolwire.adapters import AdapterCapabilities, NamedToolChoice
from toolwire.config import LimitsConfig
from toolwire.loop._answer import (
    Answered,
    Refused,
    answer_tool_name,
    forced_choice,
    output_mode,
    read_answer,
)
from toolwire.loop._budget import overrun, price_for
from toolwire.messages import AssistantMessage, TextPart, ToolCall
from toolwire.output import OutputSpec
from toolwire.usage import ModelPrice, Usage


@dataclasses.dataclass
class City:
    name: str


SPEC = OutputSpec.of(City)


def test_prices_are_found_by_the_answers_model_its_dated_stem_or_the_configured_one() -> None:
    mini = ModelPrice(input=0.4, output=1.6)
    full = ModelPrice(input=2.0, output=8.0)
    prices = {"gpt-4.1": full, "gpt-4.1-mini": mini}
    assert price_for(prices, "gpt-4.1-mini", None) is mini
    assert price_for(prices, "gpt-4.1-mini-2025-04-14", None) is mini  # the longest stem
    assert price_for(prices, "gpt-4.1-2025-04-14", "x") is full
    assert price_for(prices, "other", "gpt-4.1") is full
    assert price_for(prices, None, None) is None
    assert price_for({}, "gpt-4.1", "gpt-4.1") is None


def test_a_price_counts_cached_input_and_cache_writes_at_their_own_rates() -> None:
    price = ModelPrice(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)
    usage = Usage(
        input_tokens=1_000_000,
        cache_read_tokens=600_000,
        cache_write_tokens=100_000,
        output_tokens=10_000,
        reasoning_tokens=5_000,
    )
    # 300k fresh at 3, 600k cached at 0.3, 100k written at 3.75, 10k out at 15 (reasoning inside).
    assert price.cost(usage) == 0.9 + 0.18 + 0.375 + 0.15
    assert ModelPrice(input=1, output=2).cost(Usage()) == 0


def test_the_first_limit_reached_is_named() -> None:
    limits = LimitsConfig(max_input_tokens=1000, max_output_tokens=100, max_cost=0.01)
    assert overrun(limits, Usage(input_tokens=999, output_tokens=99), 0.009) is None
    over = overrun(limits, Usage(input_tokens=1000, output_tokens=5), None)
    assert over is not None
    assert (over.limit, over.value) == ("max_input_tokens", 1000)
    assert "1,000 of 1000 ([limits] max_input_tokens)" in over.detail
    cost = overrun(limits, Usage(input_tokens=10), 0.0125)
    assert cost is not None
    assert cost.limit == "max_cost"
    assert overrun(LimitsConfig(), Usage(input_tokens=10**9), 10.0) is None


def test_the_path_follows_what_the_adapter_can_do() -> None:
    assert output_mode(AdapterCapabilities(native_output=True)) == "native"
    assert output_mode(AdapterCapabilities()) == "tool"
    assert output_mode(AdapterCapabilities(native_tools=False)) == "prompted"
    assert answer_tool_name({"search"}) == "final_answer"
    assert answer_tool_name({"final_answer", "final_answer_2"}) == "final_answer_3"


def test_the_answer_tool_is_forced_as_far_as_the_api_allows() -> None:
    every = AdapterCapabilities()
    assert forced_choice("auto", "final_answer", False, every) == NamedToolChoice("final_answer")
    assert forced_choice("auto", "final_answer", True, every) == "required"
    assert forced_choice("none", "final_answer", True, every) == "none"
    named = NamedToolChoice("search")
    assert forced_choice(named, "final_answer", True, every) == named
    plain = AdapterCapabilities(tool_choice=frozenset({"auto", "none"}))
    assert forced_choice("auto", "final_answer", False, plain) == "auto"


def _turn(*parts: object) -> AssistantMessage:
    return AssistantMessage(parts=parts)  # type: ignore[arg-type]


def test_an_answer_is_read_from_the_text_or_from_the_answer_tool() -> None:
    text = read_answer(SPEC, "native", _turn(TextPart('{"name": "Nice"}')), "final_answer")
    assert text == Answered(City("Nice"), '{"name": "Nice"}')
    call = ToolCall(id="c", name="final_answer", arguments={"name": "Nice"})
    tool = read_answer(SPEC, "tool", _turn(call), "final_answer")
    assert tool == Answered(City("Nice"), '{"name": "Nice"}', call)
    # Calls of other tools first: no answer yet.
    other = ToolCall(id="d", name="search", arguments={})
    assert read_answer(SPEC, "tool", _turn(other), "final_answer") is None
    assert read_answer(SPEC, "native", _turn(other), "final_answer") is None


def test_a_wrong_answer_says_what_is_wrong() -> None:
    prose = read_answer(SPEC, "prompted", _turn(TextPart("It is Nice.")), "final_answer")
    assert isinstance(prose, Refused)
    assert prose.call is None
    assert "one JSON object" in str(prose.error)
    bad = ToolCall(id="c", name="final_answer", arguments={"town": "Nice"})
    refused = read_answer(SPEC, "tool", _turn(bad), "final_answer")
    assert isinstance(refused, Refused)
    assert refused.call == bad
    assert "name: missing" in str(refused.error)
    no_call = read_answer(SPEC, "tool", _turn(TextPart("Nice")), "final_answer")
    assert isinstance(no_call, Refused)
    assert "calling the tool final_answer" in str(no_call.error)
    unparsed = ToolCall(id="c", name="final_answer", raw_arguments="{", invalid_reason="cut")
    cut = read_answer(SPEC, "tool", _turn(unparsed), "final_answer")
    assert isinstance(cut, Refused)
    assert "cut" in str(cut.error)
