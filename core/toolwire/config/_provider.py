"""``[provider]`` and ``[provider.<name>]``: the provider a run talks to."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from .._fieldwise import record_eq, record_hash, record_repr
from .._trust import TrustLevel
from ._errors import ConfigError, where
from ._fields import WEEK, Refusal, check_section, each_item, setting, trust_level_problem, whole

ToolDialectName = Literal["json", "xml", "ptype", "python", "typescript"]
"""The prompted tool-calling dialects (``toolwire.prompted.DIALECTS``)."""

LOOP_OWNED_OPTIONS = frozenset(
    {"tools", "tool_choice", "parallel_tool_calls", "functions", "function_call"}
)
"""Request fields the loop decides for every request, which ``[provider] options`` may not set."""

PROVIDER_TABLES = frozenset({"tool_dialects", "options"})
"""The keys of ``[provider]`` whose values are tables; any other table is a named provider."""


def _loop_owned(options: dict[str, Any]) -> Refusal | None:
    owned = sorted(set(options) & LOOP_OWNED_OPTIONS)
    if not owned:
        return None
    return (
        f".{owned[0]}",
        options[owned[0]],
        "no value: the loop decides the tools, the tool choice and parallel calls of every "
        "request (offer tools with [tools]; list tools the provider runs itself in "
        "[provider] provider_tools; choose one run's with toolwire run -T and --tool-choice)",
    )


def _typed_definition(definition: dict[str, Any]) -> str | None:
    if isinstance(definition.get("type"), str) and definition["type"]:
        return None
    return 'a table with a "type", such as { type = "web_search" }'


_TIMEOUT = (0.001, WEEK)


@attrs.frozen(kw_only=True, slots=False)
class ProviderConfig:
    """``[provider]``: the provider a run talks to.

    ``adapter`` unset means the embedded local model when the ``llamacpp`` plugin is enabled, else
    the in-box ``scripted`` test model.

    ``base_url`` means what the provider's own SDK means by it (OpenAI-compatible hosts end in
    ``/v1``; Anthropic's is the host root). The API key is read from the environment variable named
    by ``api_key_env`` when a request is made, and never written anywhere.

    What a provider may send is bounded: ``max_response_bytes`` of a JSON answer after
    decompression, ``max_sse_line_chars`` of one line and ``max_sse_event_chars`` of one event
    of a stream. Past a bound the request fails with an error naming the setting.

    ``tool_dialect`` is the dialect of prompted tool calling; ``tool_dialects`` (``[provider.
    tool_dialects]``, tool name = dialect) gives single tools another one.

    ``recover_text_calls``: a call the model wrote into its text while native tools were on
    (``<tool_call>{…}</tool_call>``, a bare JSON object, ``name(…)``, a server's routing text) is
    read back and run as a tool call; None leaves it to the adapter (on for the local-server
    profiles of ``openai-chat``).

    ``options`` are more fields of the request body (``seed``, ``reasoning_effort`` …); the
    fields the loop decides for every request (``tools``, ``tool_choice``,
    ``parallel_tool_calls``) are refused there. ``provider_tools`` are tool definitions the
    provider runs itself (``{ type = "web_search" }`` on the Responses API, Anthropic's server
    tools), sent as written beside the local tools and never run by the host.

    ``native_output`` false keeps a run's typed output off the API's structured-output field
    (the answer is then asked for as a tool call); unset, the adapter uses the field where its
    API has one. ``context_tokens`` is the model's context window: a conversation that nears it
    is compacted (``[loop] compact_at``). ``fallback`` (``[[provider.fallback]]``) lists more
    providers, each a table of these keys of its own (nothing inherited), tried in order when
    this one cannot answer (a connection error, 429 or 5xx after the retries, a refusal of
    tools).

    Each key's meaning, bounds and checks are declared beside it.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    adapter: str | None = setting(
        None,
        default_text="`llamacpp` when that plugin is enabled, else none (a run is refused, "
        "naming what to set)",
        help="the API adapter: `openai-chat`, `openai-responses`, `anthropic-messages`, "
        "`gemini`, `llamacpp`, `scripted` (the in-box test model, which calls every tool it is "
        "offered: only when asked for by name), or one a plugin adds",
    )
    base_url: str | None = setting(
        None,
        default_text="per adapter",
        help="what the provider's SDK means by it: OpenAI-compatible hosts end in `/v1`, "
        "Anthropic's is the host root",
    )
    model: str | None = setting(None, help="the model name sent to the API")
    api_key_env: str | None = setting(
        None,
        default_text="per adapter",
        help="the environment variable holding the key; the key itself is never in the config, "
        "errors, events or logs",
    )
    trust: str = setting(
        "medium",
        check=whole(trust_level_problem),
        kind="a confidence level (`low`, `medium`, `high`, or `[trust] levels`), or `self_hosted`",
        help="how far this provider is trusted (see Trust); `self_hosted` alone means the top "
        "confidence level and self-hosted data",
    )
    data_security: Literal["self_hosted"] | None = setting(
        None,
        help="the provider runs on machines you run: results that must stay there may reach it "
        "(the second trust axis, beside `trust`)",
    )
    native_tools: bool | None = setting(
        None,
        help="`false`: always use prompted tool calling; unset: native, falling back to prompted "
        "when the host answers that tools are not supported",
    )
    tool_dialect: ToolDialectName = setting(
        "json", help="the dialect of prompted tool calling (see Prompted tool calling)"
    )
    tool_dialects: dict[str, ToolDialectName] = setting(
        factory=dict,
        kind="table of tool name = dialect",
        help="tools called in a dialect of their own (`[provider.tool_dialects]`); an unknown "
        "dialect is refused naming the valid ones",
    )
    enforces_strict_tool_schemas: bool | None = setting(
        None,
        default_text="per host",
        help="the host binds output to strict schemas (OpenAI): tool schemas are projected to "
        'strict form, tool by tool. On the Messages API, unset sends `"strict": true` for the '
        "tools declared `strict=True` (on api.anthropic.com only), `true` for every tool not "
        "declared `strict=False`, `false` for none; a schema outside the API's strict subset is "
        "sent as written",
    )
    accepts_parallel_tool_calls: bool | None = setting(
        None,
        default_text="per host",
        help="the host accepts `parallel_tool_calls`; when true and calls run serially, "
        "`parallel_tool_calls: false` is sent",
    )
    recover_text_calls: bool | None = setting(
        None,
        default_text="per profile",
        help="a call the model wrote into its text while native tools were on "
        "(`<tool_call>{…}</tool_call>`, a bare JSON object, `name(…)`, llama-cpp-python's "
        "`functions.NAME:`) is read back, against the offered tools only, and run as a call, "
        "announced by a `ToolCallRecovered` event; one that cannot be read is a failed call. "
        "Unset: on for the `llama.cpp`, `llama-cpp-python`, `vllm`, `ollama` and `lmstudio` "
        "profiles of `openai-chat` (see [servers.md](servers.md#calls-written-as-text))",
    )
    stream: bool = setting(
        False, help="stream answers (text and tool-call arguments arrive as events)"
    )
    max_tokens: int | None = setting(
        None, bounds=(1, 10_000_000), help="the most tokens of one answer, passed to the API"
    )
    temperature: float | None = setting(
        None, bounds=(0.0, 2.0), help="the sampling temperature, passed to the API"
    )
    connect_timeout: float = setting(
        10.0, bounds=_TIMEOUT, unit="seconds", help="how long connecting to the API may take"
    )
    read_timeout: float = setting(
        120.0,
        bounds=_TIMEOUT,
        unit="seconds",
        help="how long the API may stay silent while an answer is read",
    )
    total_timeout: float = setting(
        600.0, bounds=_TIMEOUT, unit="seconds", help="how long one request may take in all"
    )
    max_retries: int = setting(
        3,
        bounds=(0, 100),
        help="retries on 429, 5xx and dropped connections (with backoff, honouring `Retry-After`)",
    )
    max_response_bytes: int = setting(
        64 * 1024 * 1024,
        bounds=(1024, 2**32),
        unit="bytes",
        default_text="67108864 (64 MiB)",
        help="the most bytes of a JSON answer, after decompression; past it the request fails "
        "naming this key",
    )
    max_sse_line_chars: int = setting(
        16 * 1024 * 1024,
        bounds=(1024, 2**31),
        unit="characters",
        default_text="16777216 (16 Mi)",
        help="the longest line of a streamed answer; past it the stream is stopped with an "
        "error naming the key",
    )
    max_sse_event_chars: int = setting(
        32 * 1024 * 1024,
        bounds=(1024, 2**31),
        unit="characters",
        default_text="33554432 (32 Mi)",
        help="the longest event of a streamed answer; past it the stream is stopped with an "
        "error naming the key",
    )
    options: dict[str, Any] = setting(
        factory=dict,
        check=_loop_owned,
        help="more fields of the request body (`seed`, `reasoning_effort`, `thinking` …); never "
        "`tools`, `tool_choice` or `parallel_tool_calls`, which the loop decides",
    )
    provider_tools: tuple[dict[str, Any], ...] = setting(
        (),
        check=each_item(_typed_definition),
        kind="list of tables",
        help="tools the provider runs itself, sent as written after the local tools: `[{ type = "
        '"web_search" }]` on `openai-responses`, `[{ type = "web_search_20250305", name = '
        '"web_search" }]` on `anthropic-messages`, `[{ googleSearch = {} }]` on `gemini`; '
        "refused by `openai-chat`",
    )
    native_output: bool | None = setting(
        None,
        help="`false`: a run's typed answer is asked for as a tool call even where the API has "
        "a structured-output field (see [Typed answers](#typed-answers)); unset: the field is "
        "used where there is one",
    )
    context_tokens: int | None = setting(
        None,
        bounds=(256, 100_000_000),
        unit="tokens",
        help="the model's context window; a conversation that nears it is compacted (see "
        "[Long conversations](#long-conversations))",
    )
    fallback: tuple[ProviderConfig, ...] = setting(
        (),
        kind="list of provider tables (`[[provider.fallback]]`)",
        help="more providers, each with keys of its own (nothing inherited; `adapter` required), "
        "tried in order when this one cannot answer (see [Fallback providers]"
        "(#fallback-providers))",
    )

    @property
    def trust_level(self) -> TrustLevel:
        """The provider's standing on both axes: ``trust`` (a confidence level, or
        ``self_hosted``, short for the top confidence level and self-hosted data) and
        ``data_security``."""
        level = TrustLevel.parse(self.trust)
        if level.confidence is None:  # trust = "self_hosted": trusted with everything
            return TrustLevel.highest()
        if self.data_security == "self_hosted":
            return TrustLevel(level.confidence, True)
        return level


def check_provider(provider: ProviderConfig, base: str, file: str | None) -> None:
    """Refuse a provider block whose values are out of range (``base`` is its key path,
    ``$.provider`` or ``$.provider.<name>``; ``file`` where it came from, or a flag)."""
    check_section(provider, base, file)
    for i, entry in enumerate(provider.fallback):
        at = f"{base}.fallback[{i}]"
        if entry.fallback:
            raise ConfigError(
                f"{where(file, at + '.fallback')}: a fallback lists no fallbacks of its own; "
                f"list every provider in {base}'s [[fallback]] tables",
                file=file,
                path=f"{at}.fallback",
            )
        if entry.adapter is None:
            raise ConfigError(
                f"{where(file, at + '.adapter')}: missing; a fallback provider names its "
                "adapter (nothing is inherited)",
                file=file,
                path=f"{at}.adapter",
            )
        check_provider(entry, at, file)
