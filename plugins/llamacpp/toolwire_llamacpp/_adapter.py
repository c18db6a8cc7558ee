"""``LlamaCppAdapter``: a GGUF model run in-process, calling tools through a constrained prompt."""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from toolwire.adapters import (
    AdapterCapabilities,
    EmitEvent,
    ModelRequest,
    NamedToolChoice,
    ProviderAdapter,
)
from toolwire.events import ToolCallCompleted, ToolChoiceDegraded
from toolwire.messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    SystemMessage,
    TextPart,
    ToolResultMessage,
    UserMessage,
)
from toolwire.prompted import (
    coalesce_tool_results,
    ensure_resolvable_user_turn,
    parse_tool_calls,
    render_prompted_tools,
    with_tool_instructions,
)
from toolwire.tools import FunctionSpec
from toolwire.usage import Usage

from ._copies import Copies
from ._grammar import Choice, ToolGrammar, tool_grammar
from ._runtime import ChatTurn, LoadedModel, Piece
from ._settings import LlamaCppSettings, check_runtime, resolve_model_path
from ._shown import without_held_patterns
from ._stream import OutputReader

if TYPE_CHECKING:
    from toolwire.config import ProviderConfig

_ALL_CHOICES = frozenset({"auto", "none", "required", "named"})
_CALLS_SHARE = 2 / 3
"""The share of ``turn_cpu_budget`` a question may use before no call is asked any more: the
rest is the answer's."""
_TURNS_KEPT = 64
"""How many questions' CPU the adapter remembers (runs in flight at once, with room)."""


class LlamaCppAdapter(ProviderAdapter):
    """A local GGUF model (default: SmolLM2-135M-Instruct) run with llama-cpp-python.

    Tools go through the prompt in the ``json`` dialect, and the model's output is held by a
    GBNF grammar to a final answer or exactly one call of an offered tool whose arguments fit
    the tool's schema; the text is then read back by the prompted parser. The grammar is the
    tool channel, so the adapter declares native tools and the host sends it the functions.

    The model is loaded at the first request (on the adapter's worker thread) and freed by
    :meth:`aclose`. Settings come from ``[providers.llamacpp]``; ``[provider] model``,
    ``max_tokens``, ``temperature`` and ``options`` override them.
    """

    api: ClassVar[str] = "llamacpp"
    plugin_settings: ClassVar[LlamaCppSettings] = LlamaCppSettings()

    @classmethod
    def configured(cls, settings: LlamaCppSettings) -> type[LlamaCppAdapter]:
        """This adapter class with ``settings`` as its defaults (what the plugin registers)."""
        return type(
            cls.__name__, (cls,), {"plugin_settings": settings, "__module__": cls.__module__}
        )

    # The transport's class is not public API; this adapter never sends over HTTP.
    def __init__(self, config: ProviderConfig, transport: Any = None) -> None:
        super().__init__(config, transport)
        check_runtime()
        self.settings = self.plugin_settings.merged(
            config.options,
            model_path=config.model,
            max_tokens=config.max_tokens,
            temperature=config.temperature,
        )
        self.model = LoadedModel(self.settings, resolve_model_path(self.settings))
        self._spent: OrderedDict[tuple[str, int], float] = OrderedDict()

    @property
    def capabilities(self) -> AdapterCapabilities:
        """Every tool choice (the grammar enforces it), streaming, one call per reply."""
        return AdapterCapabilities(
            native_tools=True,
            tool_choice=_ALL_CHOICES,
            streaming=True,
            binds_strict_schemas=False,
            accepts_parallel_tool_calls=False,
        )

    def render_tools(self, functions: tuple[FunctionSpec, ...]) -> str:
        """The tool text added to the system prompt (the grammar is :func:`tool_grammar`'s)."""
        return render_prompted_tools(self.shown(functions), "json", several_calls=False)

    def shown(self, functions: Sequence[FunctionSpec]) -> list[FunctionSpec]:
        """The functions as the model reads them: under the copy grammar, without the patterns
        it holds strings to (see :func:`without_held_patterns`)."""
        if not (self.settings.constrain and self.settings.copy_arguments):
            return list(functions)
        return [without_held_patterns(function) for function in functions]

    async def complete(self, request: ModelRequest, emit: EmitEvent) -> AssistantMessage:
        """Generate the reply, streaming its text or its call as events when asked to.

        An answer that can only be the statement of the results (``answer_step`` ``result``)
        is not generated: the grammar would admit that one text and nothing else.
        """
        offered = request.functions if request.tool_choice != "none" else ()
        choice = self.effective_choice(request, offered)
        statement = self.statement(request, choice)
        if statement is not None:
            return self.stated(request, emit, statement)
        asked, shown = request, offered
        turn = (request.run_id, _last_user_index(request.messages))
        spent = self._spent.get(turn, 0.0)
        budget = self.settings.turn_cpu_budget
        if budget is not None and offered and choice != "none" and spent >= budget * _CALLS_SHARE:
            emit(
                ToolChoiceDegraded(
                    run_id=request.run_id,
                    round=request.round,
                    requested=(
                        "named"
                        if isinstance(request.tool_choice, NamedToolChoice)
                        else request.tool_choice
                    ),
                    sent="none",
                    detail=(
                        f"the {self.api} model has spent {spent:.1f} s of CPU on this question; "
                        f"turn_cpu_budget ({budget:g} s) leaves calls the first "
                        f"{budget * _CALLS_SHARE:.1f} s: it answers from what it knows, without "
                        "a tool"
                    ),
                )
            )
            choice = "none"
            asked, shown = _up_to_last_user(request), ()
        elif self.answers_unaided(request, choice):
            # Every call of this turn was refused: the answer comes from what the model knows,
            # asked as if no tool had been offered (told of refusals, a small model tells the
            # user that the tool does not exist).
            asked, shown = _up_to_last_user(request), ()
        turns = self.conversation(asked, shown)
        functions = offered if choice != "none" else ()
        grammar: ToolGrammar | None = None
        if offered and self.settings.constrain:
            copies = None
            if self.settings.copy_arguments:
                copies = Copies.from_texts(
                    (m.text for m in request.messages if isinstance(m, UserMessage)),
                    numbers_together=self.settings.numbers_together,
                )
            grammar = tool_grammar(
                functions,
                choice,
                max_string_length=self.settings.max_string_length,
                copies=copies,
                distinct_copies=self.settings.distinct_copies,
                refused=_refused_calls(request.messages) if self.settings.vary_retries else None,
            )
        call_id = _free_call_id(request)
        reader = OutputReader(request, emit, call_id)
        last = Piece(text="")
        async for piece in self.model.generate(
            turns,
            grammar=grammar.text if grammar is not None else None,
            max_tokens=self.token_limit(asked, shown),
            temperature=self.settings.temperature,
            # A call is held to its schema by the grammar; only an answer can run on.
            repeat_window=(
                self.settings.repeat_window if grammar is None or grammar.allows_answer else None
            ),
            cpu_limit=max(budget - spent, 0.0) if budget is not None else None,
        ):
            if piece.text:
                reader.feed(piece.text)
            if piece.finish_reason is not None:
                last = piece
        self._spend(turn, last.cpu_seconds)
        reader.finish()
        parts: tuple[AssistantPart, ...]
        calls = 0
        if functions:
            parsed = parse_tool_calls(
                reader.text,
                functions,
                "json",
                new_id=lambda index: call_id if index == 0 else f"{call_id}_{index}",
            )
            parts = parsed.parts
            for call in parsed.calls:
                calls += 1
                if request.stream:
                    if not reader.started_call:
                        reader.assembler.begin("call", call_id=call.id, name=call.name)
                    emit(ToolCallCompleted(run_id=request.run_id, round=request.round, call=call))
        else:
            parts = (TextPart(reader.text),) if reader.text else ()
        finish = last.finish_reason or "stop"
        if calls and finish == "stop":
            finish = "tool_calls"
        return AssistantMessage(
            parts=parts,
            api=self.api,
            model=self.model.name,
            finish_reason=finish,
            usage=Usage(
                input_tokens=last.prompt_tokens,
                output_tokens=last.completion_tokens,
                total_tokens=last.prompt_tokens + last.completion_tokens,
            ),
        )

    def _spend(self, turn: tuple[str, int], seconds: float) -> None:
        """Add ``seconds`` of the model's CPU to the question ``turn`` (run id, user index)."""
        self._spent[turn] = self._spent.get(turn, 0.0) + seconds
        self._spent.move_to_end(turn)
        while len(self._spent) > _TURNS_KEPT:
            self._spent.popitem(last=False)

    def stated(self, request: ModelRequest, emit: EmitEvent, statement: str) -> AssistantMessage:
        """The answer that states the results, streamed as one text delta when asked to."""
        text = " ".join(statement.split())
        reader = OutputReader(request, emit, _free_call_id(request))
        reader.feed(text)
        reader.finish()
        return AssistantMessage(
            parts=(TextPart(text),),
            api=self.api,
            model=self.model.name,
            finish_reason="stop",
            usage=Usage(input_tokens=0, output_tokens=0, total_tokens=0),
        )

    def effective_choice(self, request: ModelRequest, functions: Sequence[FunctionSpec]) -> Choice:
        """The request's tool choice as a grammar choice, after ``call_policy``."""
        choice = request.tool_choice
        if isinstance(choice, NamedToolChoice):
            return choice.name
        if choice != "auto" or not functions or self.settings.call_policy != "alternate":
            return choice
        last = request.messages[-1] if request.messages else None
        if isinstance(last, UserMessage):
            return "required"
        if isinstance(last, ToolResultMessage):
            results = []
            for message in reversed(request.messages):
                if not isinstance(message, ToolResultMessage):
                    break
                results.append(message.result)
            if all(result.is_ok for result in results):
                return "none"
            refusals = _refusals(request.messages)
            if refusals <= self.settings.retry_refused:
                # A tiny model that may answer after a refusal answers, badly: it retries when
                # told to, and vary_retries keeps the retry off what was refused.
                return "required"
            if refusals > self.settings.retry_refused + 1:
                # Each retry differs from the refused ones, so none repeats: stop all the same.
                return "none"
            if _repeated_refusal(request.messages):
                # The same call was refused twice: a third try would be refused again.
                return "none"
        return "auto"

    def answers_unaided(self, request: ModelRequest, choice: Choice) -> bool:
        """True for an answer ``call_policy`` ``alternate`` asked for after every call since the
        user's last turn was refused."""
        if choice != "none" or request.tool_choice != "auto" or not request.functions:
            return False
        if self.settings.call_policy != "alternate":
            return False
        results = [
            m.result
            for m in request.messages[_last_user_index(request.messages) + 1 :]
            if isinstance(m, ToolResultMessage)
        ]
        return bool(results) and not any(r.is_ok for r in results)

    def statement(self, request: ModelRequest, choice: Choice) -> str | None:
        """The results the answer states (``answer_step`` ``result``), or None.

        Only for an answer that ``call_policy`` ``alternate`` asked for after results that all
        succeeded: the choice is ``none`` while the request offers tools.
        """
        if (
            self.settings.answer_step != "result"
            or self.settings.call_policy != "alternate"
            or choice != "none"
            or request.tool_choice != "auto"
            or not request.functions
        ):
            return None
        results = []
        for message in reversed(request.messages):
            if not isinstance(message, ToolResultMessage):
                break
            results.append(message.result)
        if not results or not all(r.is_ok for r in results):
            return None
        text = " ".join(" ".join(r.model_text().split()) for r in reversed(results))
        return text or None

    def answer_prompted(self, request: ModelRequest, functions: Sequence[FunctionSpec]) -> bool:
        """True when :meth:`conversation` asks for the answer with ``answer_prompt``: no tools
        shown and no system prompt of the conversation's own."""
        messages = request.messages
        return (
            bool(self.settings.answer_prompt)
            and not functions
            and not (messages and isinstance(messages[0], SystemMessage))
        )

    def token_limit(self, request: ModelRequest, functions: Sequence[FunctionSpec]) -> int:
        """``max_tokens``, or ``answer_max_tokens`` when lower for an answer asked with
        ``answer_prompt``."""
        cap = self.settings.answer_max_tokens
        if cap is not None and self.answer_prompted(request, functions):
            return min(self.settings.max_tokens, cap)
        return self.settings.max_tokens

    def conversation(
        self, request: ModelRequest, functions: Sequence[FunctionSpec]
    ) -> list[ChatTurn]:
        """The chat turns the model reads: tools in the system prompt, calls and results as text."""
        messages: list[Message] = list(request.messages)
        if functions:
            # The prompt leaves the choice to the grammar, so it stays the same from round to
            # round and the model's cache of the prompt's start holds.
            base = (
                messages[0].content if messages and isinstance(messages[0], SystemMessage) else ""
            )
            prompt = with_tool_instructions(
                base, self.shown(functions), "json", several_calls=False
            )
            if messages and isinstance(messages[0], SystemMessage):
                messages[0] = SystemMessage(prompt)
            else:
                messages.insert(0, SystemMessage(prompt))
        elif self.answer_prompted(request, functions):
            # A plain answer, with no system prompt of the user's: a short one with two
            # examples keeps a small model to one sentence in the question's language.
            messages.insert(0, SystemMessage(self.settings.answer_prompt or ""))
        converted = ensure_resolvable_user_turn(
            coalesce_tool_results(messages, "json", request.functions)
        )
        turns: list[ChatTurn] = []
        for message in converted:
            if isinstance(message, SystemMessage):
                turns.append(ChatTurn("system", message.content))
            elif isinstance(message, UserMessage):
                turns.append(ChatTurn("user", message.text))
            elif isinstance(message, AssistantMessage):
                turns.append(ChatTurn("assistant", message.text))
        return turns

    async def aclose(self) -> None:
        """Free the model."""
        await self.model.aclose()


def _last_user_index(messages: Sequence[Message]) -> int:
    """The index of the last user turn (-1 when there is none)."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], UserMessage):
            return index
    return -1


def _up_to_last_user(request: ModelRequest) -> ModelRequest:
    """``request`` with the conversation cut after the user's last turn."""
    end = _last_user_index(request.messages) + 1
    return attrs.evolve(request, messages=request.messages[:end] or request.messages)


def _refused_calls(messages: Sequence[Message]) -> dict[str, list[Mapping[str, Any]]]:
    """The arguments of every call in ``messages`` whose result was not ok, by tool name."""
    calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
    refused: dict[str, list[Mapping[str, Any]]] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.arguments is not None:
                    calls[call.id] = (call.name, call.arguments)
        elif (
            isinstance(message, ToolResultMessage)
            and not message.result.is_ok
            and message.call_id in calls
        ):
            name, arguments = calls[message.call_id]
            refused.setdefault(name, []).append(arguments)
    return refused


def _refusals(messages: Sequence[Message]) -> int:
    """How many results since the last user turn were not ok."""
    count = 0
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, ToolResultMessage) and not message.result.is_ok:
            count += 1
    return count


def _repeated_refusal(messages: Sequence[Message]) -> bool:
    """True when a call that failed was made, with the same arguments, and failed before."""
    failed: list[tuple[str, str]] = []
    calls: dict[str, tuple[str, str]] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.arguments is not None:
                    key = json.dumps(call.arguments, sort_keys=True)
                else:
                    key = call.raw_arguments or ""
                calls[call.id] = (call.name, key)
        elif (
            isinstance(message, ToolResultMessage)
            and not message.result.is_ok
            and message.call_id in calls
        ):
            failed.append(calls[message.call_id])
    return bool(failed) and failed.count(failed[-1]) >= 2


def _free_call_id(request: ModelRequest) -> str:
    """``call_<round>_0``, unless the conversation already uses that id."""
    taken = {m.call_id for m in request.messages if isinstance(m, ToolResultMessage)}
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            taken.update(call.id for call in message.tool_calls)
    candidate = f"call_{request.round}_0"
    while candidate in taken:
        candidate = f"call_{request.round}_0_{secrets.token_hex(2)}"
    return candidate
