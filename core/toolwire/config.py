"""``toolwire.toml``: finding the file, structuring it into typed sections, explaining errors."""

from __future__ import annotations

import copy
import functools
import itertools
import math
import os
import re
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import attrs
import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)

from ._effects import SideEffect
from ._surface import GUARDED_EFFECTS, Surface, is_surface_name
from ._trust import DEFAULT_LEVELS, TrustLevel, scheme_problem, use_levels
from .fieldwise import record_eq, record_hash, record_repr
from .usage import ModelPrice

CONFIG_FILE_NAME = "toolwire.toml"
CONFIG_ENV = "TOOLWIRE_CONFIG"
PLUGINS_ENV = "TOOLWIRE_PLUGINS"
SYSTEM_CONFIG_ENV = "TOOLWIRE_SYSTEM_CONFIG"
"""Names the system file instead of ``/etc/toolwire/toolwire.toml`` (empty: no system file)."""
SYSTEM_CONFIG_FILE = Path("/etc/toolwire") / CONFIG_FILE_NAME

T = TypeVar("T")


class ConfigError(Exception):
    """A config file that cannot be used; the message names the file, key path, value and fix."""

    def __init__(self, message: str, *, file: str | None = None, path: str | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.path = path


def without_password(url: str) -> str:
    """``url`` with its password, if any, shown as ``***`` (for messages)."""
    return re.sub(r"//([^:/@]*):[^@/]*@", r"//\1:***@", url)


# The words of names (settings, URL query parameters) that say they hold a secret.
_SECRET_WORDS = frozenset(
    {
        "secret", "token", "password", "passwd", "pwd", "passphrase", "apikey", "auth",
        "authorization", "credential", "credentials", "cookie", "session", "signature", "sig",
        "bearer", "jwt",
    }
)  # fmt: skip
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key")})
_URL_QUERY = re.compile(r"([?&;])([^=&;#]+)=([^&;#]*)")


def _secret_name(name: str) -> bool:
    """True when a name says it holds a secret (``GITHUB_TOKEN``, ``apiKey``, ``x-api-key``)."""
    words = re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())
    return any(word in _SECRET_WORDS for word in words) or any(
        pair in _SECRET_PAIRS for pair in itertools.pairwise(words)
    )


def _without_credentials(url: str) -> str:
    """``url`` with everything that may be a credential shown as ``***``: the password, a user
    name standing alone (``https://TOKEN@host``), and the values of query parameters whose name
    says they are secret (``?api_key=…``, ``&sig=…``)."""
    shown = re.sub(r"//([^:/@?#]*):[^@/?#]*@", r"//\1:***@", url)
    shown = re.sub(r"//[^:/@?#]+@", "//***@", shown)

    def query(match: re.Match[str]) -> str:
        if not match[3] or not _secret_name(match[2]):
            return match[0]
        return f"{match[1]}{match[2]}=***"

    return _URL_QUERY.sub(query, shown)


def _shown_setting(key: str, value: Any) -> Any:
    """``value`` of the setting ``key`` (a dotted path) as ``toolwire config show`` prints it:
    a value under a ``headers`` table (export headers carry credentials), a string setting whose
    name says it is secret (``token``, ``password``, ``api_key``; not a ``*_env`` setting, which
    names a variable) as ``[redacted]``, and credentials in URLs as ``***``."""
    from ._redact import REDACTED

    parts = key.split(".")
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        if "headers" in parts[:-1]:
            return REDACTED
        last = parts[-1]
        if isinstance(value, str) and _secret_name(last) and not last.endswith("_env"):
            return REDACTED
    if isinstance(value, str):
        return _without_credentials(value) if "://" in value or "@" in value else value
    if isinstance(value, list):
        return [_shown_setting(key, item) for item in value]
    if isinstance(value, dict):
        return {k: _shown_setting(f"{key}.{k}", v) for k, v in value.items()}
    return value


def _tuple_of_str(value: Any) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True, slots=False)
class PluginsConfig:
    """``[plugins]``: which installed plugins are enabled (None = none enabled)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    enable: tuple[str, ...] = ()


ToolDialectName = Literal["json", "xml", "ptype", "python", "typescript"]
"""The prompted tool-calling dialects (``toolwire.prompted.DIALECTS``)."""


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
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    adapter: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    trust: str = "medium"
    data_security: Literal["self_hosted"] | None = None
    """``self_hosted``: the provider runs on machines its owner runs, so results that must not
    leave them may reach it (the second trust axis, beside ``trust``)."""
    native_tools: bool | None = None
    tool_dialect: ToolDialectName = "json"
    tool_dialects: dict[str, ToolDialectName] = attrs.field(factory=dict)
    enforces_strict_tool_schemas: bool | None = None
    accepts_parallel_tool_calls: bool | None = None
    recover_text_calls: bool | None = None
    stream: bool = False
    max_tokens: int | None = None
    temperature: float | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    total_timeout: float = 600.0
    max_retries: int = 3
    max_response_bytes: int = 64 * 1024 * 1024
    max_sse_line_chars: int = 16 * 1024 * 1024
    max_sse_event_chars: int = 32 * 1024 * 1024
    options: dict[str, Any] = attrs.field(factory=dict)
    provider_tools: tuple[dict[str, Any], ...] = ()
    native_output: bool | None = None
    context_tokens: int | None = None
    fallback: tuple[ProviderConfig, ...] = ()

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


@attrs.frozen(kw_only=True, slots=False)
class LoopConfig:
    """``[loop]``: limits and admission policies of the tool-calling loop."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    max_rounds: int = 10
    max_tool_calls: int = 50
    concurrency: int = 1
    deadline_seconds: float | None = None
    unknown_tool: str = "return_error"
    invalid_arguments: Literal["return_error", "fail"] = "return_error"
    system_prompt: str | None = None
    tool_timeout: float = 300.0
    """Seconds a call of a tool that sets no ``timeout`` of its own may take."""
    hook_timeout: float = 30.0
    """Seconds the awaitable answer of a filter, resolve, instruction or request-context hook may
    take."""
    observer_timeout: float = 1.0
    """Seconds one event may take an observer before it is reported and moved off the loop."""
    observer_close_timeout: float = 5.0
    """Seconds ``Host.aclose`` waits for observers moved off the loop to deliver what was queued."""
    execute_tools: bool = True
    """False: the host runs no local tool; every call ends the run deferred (``external``) with
    its arguments, for the caller to run and supply (provider-run tools still work)."""
    compact_at: float = 0.85
    """The share of ``[provider] context_tokens`` (less ``max_tokens``) a request may fill
    before the conversation is compacted."""
    compact_to: float = 0.6
    """The share compaction brings the conversation down to."""


@attrs.frozen(kw_only=True, slots=False)
class LimitsConfig:
    """``[limits]``: budgets of a run, in tokens and money (None = no limit).

    A run stops with stop reason ``budget`` once its usage reaches a limit: before a request
    when it already has, and after an answer that reached it (that answer's calls are answered
    as not run). ``max_cost`` is in the currency of ``[prices]`` and needs a price for every
    configured model.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_cost: float | None = None

    @property
    def any(self) -> bool:
        """True when a limit is set."""
        return (
            self.max_input_tokens is not None
            or self.max_output_tokens is not None
            or self.max_cost is not None
        )


@attrs.frozen(kw_only=True, slots=False)
class RunConfig:
    """``[run]``: what every run's final answer must be.

    ``output_schema`` is a JSON Schema the answer must match: a table, or the path of a JSON
    file (relative to the file that sets it). ``output_retries`` is how many wrong answers are
    sent back to the model with what is wrong before the run stops (``output_invalid``).
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    output_schema: Any = None
    """A JSON Schema table, or the path of a JSON file holding one (None: a text answer)."""
    output_retries: int = 2


@attrs.frozen(kw_only=True, slots=False)
class ProfileConfig:
    """``[profiles.<name>]``: an allow list and a deny list of tool names (deny wins; an allow
    list left out or empty allows every tool)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()


@attrs.frozen(kw_only=True, slots=False)
class SurfaceConfig:
    """``[surfaces.<name>]``: the tools one surface (``run``, ``chat``, ``web``, ``batch``,
    ``mcp-serve`` or an application's own) may offer. An allow list left out or empty allows
    every tool; deny always wins. A non-empty allow list also names the tools of a surface that
    offers none until the config names some (a hosted surface)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


@attrs.frozen(kw_only=True, slots=False)
class ToolsConfig:
    """``[tools]``: which tools are offered, plus each plugin's own ``[tools.<plugin>]`` settings.

    ``enable`` absent means every tool of the enabled plugins. ``trust`` (``[tools.trust]``)
    raises a tool's minimum provider trust by name (``read_web_page = "high"``); it never lowers
    what the tool itself requires.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    enable: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    profile: str | None = None
    trust: Mapping[str, str] = attrs.field(factory=dict)
    plugin_settings: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    max_direct: int | None = None
    """The most tools a round offers directly; past it the most relevant are offered and the
    rest are found through ``tool_search`` (None: no limit)."""
    max_direct_bytes: int | None = None
    """The most bytes of JSON (name, description, parameters) the directly offered tools may
    take; past it, as with ``max_direct`` (None: no limit)."""
    exposure: Mapping[str, str] = attrs.field(factory=dict)
    """``[tools.exposure]``: a tool's exposure by name, ``direct`` (the default), ``deferred``
    (found only through ``tool_search``) or ``hidden`` (never offered to a model)."""


@attrs.frozen(kw_only=True, slots=False)
class PolicyConfig:
    """``[policy]``: approval and refusal by side effect, result size, unclassified tools."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    require_approval: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    strict: bool = False
    max_result_bytes: int | None = None
    max_untrusted_result_bytes: int = 65_536
    """The cap on the result of a ``returns_untrusted_content`` tool that did not filter its
    result itself (the loop then caps and filters it)."""
    workspace: str | None = None
    """The directory a tool's ``path_arguments`` may name paths in (with ``trusted_roots``);
    relative to the directory of the file that sets it; None = the current directory."""
    trusted_roots: tuple[str, ...] = ()
    """More directories paths may lie in (relative ones as ``workspace``)."""
    unattended: bool = False
    """Nobody watches the runs: calls of tools that are not ``background_safe`` are refused."""
    guarded: tuple[str, ...] = GUARDED_EFFECTS
    """Side effects a person agrees to before a call: an interactive surface asks first, an
    unattended one refuses the call (unless ``unattended_allow`` lists the effect). A host
    that names no surface (Python use without ``surface=``) applies only ``require_approval``
    and ``deny``."""
    unattended_allow: tuple[str, ...] = ()
    """Guarded side effects that unattended surfaces run anyway."""


@attrs.frozen(kw_only=True, slots=False)
class LedgerConfig:
    """``[ledger]``: the tool-effect ledger: a SQLite file (None path = under the user data
    dir), or a shared PostgreSQL database when ``url`` is set (``postgresql://…``; needs
    ``toolwire[postgres]``)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    enabled: bool = True
    path: str | None = None
    url: str | None = None


@attrs.frozen(kw_only=True, slots=False)
class ArtifactsConfig:
    """``[artifacts]``: a directory where the artifacts of tool results are written (None = kept
    in memory on the result only). Each result that has artifacts gets their references
    (``metadata["artifacts"]``: name, path, bytes, sha256), which the run record and the ledger
    keep; ``max_bytes`` caps one artifact (a larger one is referenced with an error, not
    written)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    dir: str | None = None
    max_bytes: int = 50_000_000


@attrs.frozen(kw_only=True, slots=False)
class TraceConfig:
    """``[trace]``: a JSONL trace of every event (None path = no trace).

    ``request_bodies`` adds every provider request body to the events (a ``request_body``
    event per request, the API key and sensitive argument values redacted), so the trace shows
    exactly what was sent.
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    path: str | None = None
    request_bodies: bool = False


@attrs.frozen(kw_only=True, slots=False)
class ToolTexts:
    """What people read about one tool in one language (``[i18n.<locale>.<tool>]``)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    title: str | None = None
    description: str | None = None


@attrs.frozen(kw_only=True, slots=False)
class I18nConfig:
    """``[i18n]``: the locale people read in, and per locale the titles and descriptions of
    tools as people see them (``[i18n.fr.read_web_page] title = "Lire une page"``). Never what a
    model reads. ``locale`` None means the environment's (``LC_ALL``, ``LC_MESSAGES``,
    ``LANG``)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    locale: str | None = None
    texts: Mapping[str, Mapping[str, ToolTexts]] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, slots=False)
class TrustConfig:
    """``[trust]``: the confidence levels providers, tools and results are graded on, least
    trusted first. An organisation adds its own around and between ``low``, ``medium`` and
    ``high`` (``levels = ["public", "low", "medium", "internal", "high", "secret"]``); the
    data-security level ``self_hosted`` is a separate axis. One scheme per process: the last
    config loaded that sets it."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    levels: tuple[str, ...] = DEFAULT_LEVELS


@attrs.frozen(kw_only=True, slots=False)
class BatchConfig:
    """``[batch]``: defaults of ``toolwire batch``.

    ``concurrency`` runs at a time; ``run_deadline_seconds`` bounds each run (None = only
    ``[loop] deadline_seconds``); ``executor`` names the executor (``local``, or one a plugin
    registers, such as ``ray``).
    """

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    concurrency: int = 4
    run_deadline_seconds: float | None = 600.0
    executor: str = "local"


@attrs.frozen(kw_only=True, slots=False)
class Config:
    """The whole configuration. ``source`` is the file it came from (None = defaults)."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    plugins: PluginsConfig = PluginsConfig()
    provider: ProviderConfig = ProviderConfig()
    named_providers: Mapping[str, ProviderConfig] = attrs.field(factory=dict)
    """``[provider.<name>]`` tables: each is ``[provider]`` with the keys it sets changed, chosen
    for one command with ``toolwire run --provider NAME`` (:meth:`with_provider`)."""
    providers: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    loop: LoopConfig = LoopConfig()
    tools: ToolsConfig = ToolsConfig()
    profiles: Mapping[str, ProfileConfig] = attrs.field(factory=dict)
    surfaces: Mapping[str, SurfaceConfig] = attrs.field(factory=dict)
    policy: PolicyConfig = PolicyConfig()
    trust: TrustConfig = TrustConfig()
    ledger: LedgerConfig = LedgerConfig()
    trace: TraceConfig = TraceConfig()
    batch: BatchConfig = BatchConfig()
    i18n: I18nConfig = I18nConfig()
    artifacts: ArtifactsConfig = ArtifactsConfig()
    limits: LimitsConfig = LimitsConfig()
    run: RunConfig = RunConfig()
    prices: Mapping[str, ModelPrice] = attrs.field(factory=dict)
    """``[prices."<model>"]``: per million tokens, ``input``, ``output`` and optionally
    ``cached_input`` and ``cache_write``; a run's cost counts each answer at the price of the
    model that gave it (as the answer names it, else as configured)."""
    source: str | None = None
    enabled_from: str | None = None
    """Where ``plugins.enable`` came from when not from ``source`` (``$TOOLWIRE_PLUGINS``)."""
    layers: tuple[str, ...] = ()
    """The files merged into this config, first to last (system, user, project)."""
    origins: Mapping[str, str] = attrs.field(factory=dict)
    """The file each set key came from, by key path (``$.loop.max_rounds``); empty when the
    config was not loaded from files (then ``source``, if any, is every key's file)."""
    locked: Mapping[str, str] = attrs.field(factory=dict)
    """Locked key paths (``$.policy.deny``) and the file that locked them."""
    surface: Surface | None = None
    """Where the host's runs happen (``Host.load(surface=…)``, set by each ``toolwire``
    command); None for a host that names none. Not read from a file."""

    def origin_of(self, path: str) -> str | None:
        """The file the value at ``path`` (``$.tools.web.private_hosts``) came from: the file
        of that key, of the table holding it, or of the last file that set a key inside it
        (None when it is a default)."""
        if not self.origins:
            return self.source
        probe = path
        while True:
            if probe in self.origins:
                return self.origins[probe]
            cut = max(probe.rfind("."), probe.rfind("["))
            if cut <= 1:
                break
            probe = probe[:cut]
        inner = [file for key, file in self.origins.items() if key.startswith(path + ".")]
        return inner[-1] if inner else self.source

    def structure(self, data: Any, cls: type[T], *, path: str) -> T:
        """``data`` (the table at ``path`` of this config) structured into ``cls``; an error
        names the file each bad value came from."""
        if not self.origins:
            return structure_section(data, cls, file=self.source, path=path)
        try:
            return structure_section(data, cls, file=_LAYERED, path=path)
        except ConfigError as exc:
            raise _attributed(exc, self.origin_of) from None

    def with_provider(self, name: str) -> Config:
        """This config with ``[provider.<name>]`` as its provider.

        :raises ConfigError: for a name no ``[provider.<name>]`` table has, listing those that
            exist.
        """
        chosen = self.named_providers.get(name)
        if chosen is None:
            known = ", ".join(sorted(self.named_providers)) or "none are defined"
            raise ConfigError(
                f"--provider {name!r}: no [provider.{name}] table in the config; named "
                f"providers: {known}"
            )
        return attrs.evolve(self, provider=chosen)

    def with_enabled(self, names: tuple[str, ...], *, origin: str | None = None) -> Config:
        """This config with a different list of enabled plugins, which came from ``origin``
        (None: from the config itself); errors about the list name it."""
        return attrs.evolve(
            self, plugins=attrs.evolve(self.plugins, enable=names), enabled_from=origin
        )


def effective_settings(config: Config, *, redact: bool = True) -> list[tuple[str, Any, str]]:
    """Every setting of ``config`` as ``(key path, value, where it came from)``, sorted by key.

    Where is a file, ``$TOOLWIRE_PLUGINS`` or ``default``. Lists are one value each; plugin
    tables (``[tools.<plugin>]``, ``[providers.<name>]``) show the keys they set. With
    ``redact`` (the default) each value is as :func:`_shown_setting` shows it: no secrets.
    """
    data = cattrs.Converter().unstructure(config)
    for internal in ("source", "enabled_from", "layers", "origins", "locked", "surface"):
        data.pop(internal)
    base = data["provider"]
    for name, named in data.pop("named_providers").items():
        # a named block shows what it changes of [provider]
        base[name] = {key: value for key, value in named.items() if value != base.get(key)}
    tools = data["tools"]
    tools.update(tools.pop("plugin_settings"))
    i18n = data["i18n"]
    i18n.update(i18n.pop("texts"))
    out: list[tuple[str, Any, str]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict) and value:
            for key in sorted(value):
                walk(value[key], f"{path}.{key}")
            return
        if path == "$.plugins.enable" and config.enabled_from:
            where: str | None = config.enabled_from
        elif config.origins:
            where = config.origin_of(path) if _set_in(config.origins, path) else None
        else:  # structured from a table, not loaded from files: no record per key
            where = config.source
        key = path[2:]
        out.append((key, _shown_setting(key, value) if redact else value, where or "default"))

    walk(data, "$")
    return out


def _set_in(origins: Mapping[str, str], path: str) -> bool:
    return any(path == k or path.startswith(k + ".") for k in origins)


# -- structuring -------------------------------------------------------------------------------

_TOOLS_OWN_KEYS = frozenset(
    {"enable", "deny", "profile", "trust", "max_direct", "max_direct_bytes", "exposure"}
)
_LOOP_OWNED_OPTIONS = frozenset(
    {"tools", "tool_choice", "parallel_tool_calls", "functions", "function_call"}
)
"""Request fields the loop decides for every request, which ``[provider] options`` may not set."""
_WEEK = 7 * 24 * 3600.0


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)

    def exact(kind: type | tuple[type, ...], convert: Any = None) -> Any:
        def hook(value: Any, _: type) -> Any:
            if isinstance(value, kind) and not (isinstance(value, bool) and bool not in _kinds):
                return convert(value) if convert else value
            raise TypeError(f"wrong type ({type(value).__name__})")

        _kinds = kind if isinstance(kind, tuple) else (kind,)
        return hook

    conv.register_structure_hook(bool, exact(bool))
    conv.register_structure_hook(int, exact(int))
    conv.register_structure_hook(float, exact((int, float), float))
    conv.register_structure_hook(str, exact(str))

    def string_list(value: Any, _: type) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise TypeError(f"wrong type ({type(value).__name__})")
        for item in value:
            if not isinstance(item, str):
                raise TypeError(f"wrong type of item {item!r} ({type(item).__name__})")
        return tuple(value)

    conv.register_structure_hook_func(lambda t: t == tuple[str, ...], string_list)

    # Any other list-like setting (`allowed_ports: tuple[int, ...]`) takes a TOML array only:
    # cattrs would iterate a string, reading "80" as the items '8' and '0'.
    def array_only(tp: Any) -> Any:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        element = args[0] if args else Any
        kind: Any = tuple if origin is tuple else origin

        def hook(value: Any, _: type) -> Any:
            if not isinstance(value, list):
                raise TypeError(f"wrong type ({type(value).__name__})")
            items: list[Any] = []
            errors: list[Exception] = []
            for index, item in enumerate(value):
                try:
                    items.append(conv.structure(item, element))
                except Exception as exc:
                    # The note is how a problem's path gets its index ($.allowed_ports[1]).
                    exc.__notes__ = [
                        *getattr(exc, "__notes__", []),
                        IterableValidationNote(f"@ index {index}", index, element),
                    ]
                    errors.append(exc)
            if errors:
                raise IterableValidationError(f"while structuring {tp!r}", errors, tp)
            return kind(items)

        return hook

    def is_array_setting(tp: Any) -> bool:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is tuple:
            return len(args) == 2 and args[1] is Ellipsis and tp != tuple[str, ...]
        return origin in (list, set, frozenset)

    conv.register_structure_hook_factory(is_array_setting, array_only)
    return conv


_converter = _make_converter()


def _value_at(data: Any, path: str) -> Any:
    """The raw value at a ``$.a.b[2]`` path of the parsed TOML, or a marker when absent."""
    current = data
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path[1:]):
        try:
            current = current[int(index)] if index else current[key]
        except (KeyError, IndexError, TypeError):
            return _ABSENT
    return current


_ABSENT = object()


def _expected_for(cls: type, path: str) -> str | None:
    """What would be valid at ``path`` of an attrs class: the field's type or Literal choices."""
    import typing

    keys = [k for k, _ in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path[1:]) if k]
    current: Any = cls
    field = None
    for key in keys:
        if field is not None and typing.get_origin(current) in (dict, Mapping):
            current = typing.get_args(current)[1]  # an entry of a table of settings
            continue
        if not attrs.has(current):
            return None
        field = attrs.fields_dict(current).get(key)
        if field is None:
            names = ", ".join(sorted(attrs.fields_dict(current)))
            return f"one of the keys {names}"
        current = field.type if not isinstance(field.type, str) else _resolve_type(current, key)
    return _describe_type(current) if field is not None else None


def _resolve_type(cls: type, key: str) -> Any:
    import typing

    return typing.get_type_hints(cls)[key]


def _describe_type(tp: Any) -> str:
    import typing

    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if tp is bool:
        return "a boolean (true or false)"
    if tp is int:
        return "an integer"
    if tp is float:
        return "a number"
    if tp is str:
        return "a string"
    if origin in (tuple, list, set, frozenset):
        return "a list of " + _describe_type(args[0]).removeprefix("a ").removeprefix("an ") + "s"
    if origin in (dict, Mapping) or tp is dict:
        return "a table"
    if args and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return " or ".join(_describe_type(a) for a in rest) + " (or left out)"
    if attrs.has(tp):
        return "a table"
    return getattr(tp, "__name__", str(tp))


def structure_section(
    data: Any,
    cls: type[T],
    *,
    file: str | None,
    path: str,
    converter: cattrs.Converter | None = None,
) -> T:
    """Structure one config table into ``cls``, turning cattrs errors into a ``ConfigError``.

    The message names the file, the key path (``$.loop.max_rounds``), the value that was found and
    what would be valid. Unknown keys are refused (they are almost always typos).
    """
    if converter is None and type(data) is dict and not data and _all_defaults(cls):
        # A table left out or empty is the class's defaults: cattrs would generate and compile
        # a structuring function for the class only to call it without arguments.
        try:
            return cls()
        except Exception:  # reported below, as cattrs reports it
            pass
    conv = converter or _converter
    try:
        return conv.structure(data, cls)
    except (ClassValidationError, IterableValidationError, ForbiddenExtraKeysError) as exc:
        raise _config_error(exc, data, cls, file=file, base=path) from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(_where(file, path) + f": {exc}", file=file, path=path) from None


def _all_defaults(cls: type) -> bool:
    """True for an attrs class every argument of whose ``__init__`` has a default."""
    return attrs.has(cls) and all(
        not field.init or field.default is not attrs.NOTHING for field in attrs.fields(cls)
    )


def _where(file: str | None, path: str) -> str:
    return f"{file or '<config>'}: {path}"


def _config_error(
    exc: BaseException, data: Any, cls: type, *, file: str | None, base: str
) -> ConfigError:
    messages: list[str] = []
    first_path = base
    for line in _flatten(exc, "$"):
        rel_path, reason = line
        full = base + rel_path[1:]
        if not messages:
            first_path = full
        value = _value_at(data, rel_path)
        expected = _expected_for(cls, rel_path)
        if reason.startswith("extra fields found"):
            continue
        if "not in literal" in reason:
            reason = "not a valid choice"
        shown = "" if value is _ABSENT else f" = {value!r}"
        hint = f"; expected {expected}" if expected else ""
        messages.append(f"{_where(file, full)}{shown}: {reason}{hint}")
    for rel_path, keys, valid in _extra_keys(exc, "$", cls):
        full = base + rel_path[1:]
        if not messages:
            first_path = full
        for key in keys:
            messages.append(
                f"{_where(file, f'{full}.{key}')}: unknown key {key!r}; valid keys here: "
                + ", ".join(valid)
            )
    return ConfigError(
        "\n".join(messages) or f"{_where(file, base)}: {exc}", file=file, path=first_path
    )


def _flatten(exc: BaseException, path: str) -> list[tuple[str, str]]:
    """Walk a cattrs exception group into (path, reason) pairs, skipping extra-key errors."""
    out: list[tuple[str, str]] = []
    if isinstance(exc, ClassValidationError | IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            name = getattr(note, "name", None)
            idx = getattr(note, "index", None)
            # A table's entries are noted by key (str), a list's items by index.
            sub_path = (
                f"{path}.{name if name is not None else idx}"
                if not isinstance(idx, int)
                else f"{path}[{idx}]"
            )
            out.extend(_flatten(sub, sub_path))
        for sub in without:
            if not isinstance(sub, ForbiddenExtraKeysError):
                out.extend(_flatten(sub, path))
    elif isinstance(exc, ForbiddenExtraKeysError):
        pass
    elif isinstance(exc, KeyError):
        out.append((path, "required key is missing"))
    else:
        out.append((path, str(exc)))
    return out


def _extra_keys(exc: BaseException, path: str, cls: Any) -> list[tuple[str, list[str], list[str]]]:
    out: list[tuple[str, list[str], list[str]]] = []
    if isinstance(exc, ForbiddenExtraKeysError):
        valid = sorted(attrs.fields_dict(exc.cl)) if attrs.has(exc.cl) else []
        out.append((path, sorted(exc.extra_fields), valid))
    elif isinstance(exc, ClassValidationError | IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            name = getattr(note, "name", None)
            idx = getattr(note, "index", None)
            out.extend(
                _extra_keys(sub, f"{path}.{name}" if name is not None else f"{path}[{idx}]", cls)
            )
        for sub in without:
            out.extend(_extra_keys(sub, path, cls))
    return out


# -- loading -----------------------------------------------------------------------------------

_LAYERED = "\x00layered"
"""The file name given to structuring merged layers; :func:`_attributed` replaces it by the
file each message's key came from."""


# The patterns of this module compile on first use: every command loads a config, and they are
# needed only for a locked key, an [i18n] table or an error.
@functools.cache
def _message_path() -> re.Pattern[str]:
    return re.compile(re.escape(_LAYERED) + r": (\$[^\s=:]*)")


def _attributed(exc: ConfigError, origin_of: Any) -> ConfigError:
    """``exc`` (raised for merged layers) with every message line naming the file its key came
    from."""

    def named(match: re.Match[str]) -> str:
        return f"{origin_of(match.group(1)) or '<defaults>'}: {match.group(1)}"

    message = _message_path().sub(named, str(exc)).replace(_LAYERED, "<config>")
    file = origin_of(exc.path) if exc.path else None
    return ConfigError(message, file=file, path=exc.path)


def system_config_file() -> Path | None:
    """The administrator's file: ``$TOOLWIRE_SYSTEM_CONFIG`` when set (empty: none; a named file
    that is missing is an error), else ``/etc/toolwire/toolwire.toml`` when it exists."""
    env = os.environ.get(SYSTEM_CONFIG_ENV)
    if env is not None:
        if not env:
            return None
        path = Path(env)
        if not path.is_file():
            raise ConfigError(
                f"system config file {env!r} (from ${SYSTEM_CONFIG_ENV}) does not exist"
            )
        return path
    return SYSTEM_CONFIG_FILE if SYSTEM_CONFIG_FILE.is_file() else None


def user_config_file() -> Path | None:
    """The user's file, ``$XDG_CONFIG_HOME/toolwire/toolwire.toml`` (``~/.config/…`` when the
    variable is unset or empty), when it exists."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    path = Path(base) / "toolwire" / CONFIG_FILE_NAME
    return path if path.is_file() else None


def find_config_file(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """The config file to use: ``explicit``, else ``$TOOLWIRE_CONFIG``, else ``./toolwire.toml``.

    An explicit path or the environment variable naming a missing file is an error; a missing
    ``./toolwire.toml`` means defaults.
    """
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"config file {str(path)!r} (given with --config) does not exist")
        return path
    env = os.environ.get(CONFIG_ENV)
    if env:
        path = Path(env)
        if not path.is_file():
            raise ConfigError(f"config file {env!r} (from ${CONFIG_ENV}) does not exist")
        return path
    path = Path.cwd() / CONFIG_FILE_NAME
    return path if path.is_file() else None


def load_config(path: str | os.PathLike[str] | None = None, *, search: bool = True) -> Config:
    """Read, merge and structure the config files, or defaults when there are none.

    The layers, first to last: the system file (:func:`system_config_file`), the user file
    (:func:`user_config_file`) and the project file (:func:`find_config_file`). A later layer
    wins key by key; tables merge, and any other value (a list too) replaces the earlier one.
    ``[locked] keys`` of the system file names keys no later layer may set. With
    ``search=False`` and no ``path``, no file is read at all.

    ``$TOOLWIRE_PLUGINS`` (comma-separated names) overrides ``[plugins] enable``, unless the
    system file locks that key.
    """
    project = find_config_file(path) if (path is not None or search) else None
    files: list[tuple[Path, str]] = []
    if path is not None or search:
        system, user = system_config_file(), user_config_file()
        files += [(system, "system")] if system is not None else []
        files += [(user, "user")] if user is not None and user != system else []
    if project is not None and all(project.resolve() != f.resolve() for f, _ in files):
        files.append((project, "project"))
    layers = [(str(file), _read_toml(file)) for file, _ in files]
    config = _layered_config(layers, has_system=bool(files) and files[0][1] == "system")
    env = os.environ.get(PLUGINS_ENV)
    if env is not None:
        for key in ("$.plugins.enable", "$.plugins"):
            if key in config.locked:
                raise ConfigError(
                    f"${PLUGINS_ENV} = {env!r}: {key} is locked by {config.locked[key]} "
                    "([locked] keys); unset the variable",
                    file=config.locked[key],
                    path=key,
                )
        names = tuple(n.strip() for n in env.split(",") if n.strip())
        config = config.with_enabled(names, origin=f"${PLUGINS_ENV}")
    return config


def _read_toml(file: Path) -> dict[str, Any]:
    """One config file parsed, every error naming the file."""
    text = ""
    try:
        text = file.read_text(encoding="utf-8")
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(text, exc, str(file)) from None
    except RecursionError:
        raise ConfigError(
            f"{file}: arrays or tables nested too deep to read; a config nests at most "
            f"{_MAX_NESTING} levels",
            file=str(file),
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot be read: {exc}", file=str(file)) from None
    _check_raw(raw, str(file))
    return raw


@functools.cache
def _key_path() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*")


def _locked_keys(raw: dict[str, Any], file: str, *, system: bool) -> dict[str, str]:
    """The ``[locked] keys`` of one layer (taken out of ``raw``), as ``$.a.b`` paths."""
    if "locked" not in raw:
        return {}
    table = raw.pop("locked")
    if not system:
        raise ConfigError(
            f"{file}: $.locked: only the system file ({SYSTEM_CONFIG_FILE} or "
            f"${SYSTEM_CONFIG_ENV}) may lock keys; remove [locked] from this file",
            file=file,
            path="$.locked",
        )
    if not isinstance(table, dict) or set(table) - {"keys"}:
        raise ConfigError(
            f"{file}: $.locked = {table!r}: expected a table [locked] with one key, keys "
            '(a list of key paths such as "policy.deny")',
            file=file,
            path="$.locked",
        )
    keys = table.get("keys", [])
    if not isinstance(keys, list):
        raise ConfigError(
            f'{file}: $.locked.keys = {keys!r}: expected a list of key paths such as "policy.deny"',
            file=file,
            path="$.locked.keys",
        )
    valid = {*_SECTIONS, *_TABLES_OF_TABLES}
    for i, key in enumerate(keys):
        if (
            not isinstance(key, str)
            or not _key_path().fullmatch(key)
            or key.split(".")[0] not in valid
        ):
            raise ConfigError(
                f"{file}: $.locked.keys[{i}] = {key!r}: expected a key path such as "
                f'"policy.deny" whose first part is one of {", ".join(sorted(valid))}',
                file=file,
                path=f"$.locked.keys[{i}]",
            )
    return {f"$.{key}": file for key in keys}


def _leaf_paths(raw: Mapping[str, Any], base: str = "$") -> list[str]:
    """The key path of every value of a parsed table that is not itself a table."""
    out: list[str] = []
    for key, value in raw.items():
        path = f"{base}.{key}"
        if isinstance(value, dict) and value:
            out.extend(_leaf_paths(value, path))
        else:
            out.append(path)
    return out


def _merge_into(
    merged: dict[str, Any], raw: Mapping[str, Any], origins: dict[str, str], file: str, base: str
) -> None:
    """``raw`` over ``merged``: tables merge key by key, anything else replaces."""
    for key, value in raw.items():
        path = f"{base}.{key}"
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            _merge_into(merged[key], value, origins, file, path)
            continue
        for known in [k for k in origins if k == path or k.startswith(path + ".")]:
            del origins[known]
        merged[key] = copy.deepcopy(value)
        if isinstance(value, dict) and value:
            origins.update(dict.fromkeys(_leaf_paths(value, path), file))
        else:
            origins[path] = file


def _layered_config(layers: list[tuple[str, dict[str, Any]]], *, has_system: bool) -> Config:
    """The config of the parsed ``(file, table)`` layers, first to last."""
    if not layers:
        return Config()
    locked: dict[str, str] = {}
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for index, (file, raw) in enumerate(layers):
        locked_here = _locked_keys(raw, file, system=has_system and index == 0)
        for path in _leaf_paths(raw):
            for key, by in locked.items():
                if path == key or path.startswith(key + ".") or key.startswith(path + "."):
                    raise ConfigError(
                        f"{file}: {path}: the key {key[2:]} is locked by {by} ([locked] keys) "
                        f"and may not be set here; remove it from {file}",
                        file=file,
                        path=path,
                    )
        locked.update(locked_here)
        _merge_into(merged, raw, origins, file, "$")
    project = layers[-1][0]
    if len(layers) == 1:
        config = config_from_dict(merged, file=project)
        return attrs.evolve(config, layers=(project,), origins=origins, locked=locked)
    try:
        config = config_from_dict(merged, file=_LAYERED)
    except ConfigError as exc:

        def origin_of(path: str) -> str | None:
            return Config(origins=origins, source=None).origin_of(path)

        raise _attributed(exc, origin_of) from None
    return attrs.evolve(
        config,
        source=project,
        layers=tuple(file for file, _ in layers),
        origins=origins,
        locked=locked,
    )


_MAX_NESTING = 32


@functools.cache
def _position() -> re.Pattern[str]:
    return re.compile(r"\s*\(at line (\d+), column (\d+)\)$|\s*\(at end of document\)$")


@functools.cache
def _key_line() -> re.Pattern[str]:
    return re.compile(r"\s*([A-Za-z0-9_-]+(?:\s*\.\s*[A-Za-z0-9_-]+)*)\s*=\s*(.*?)\s*$")


@functools.cache
def _header_line() -> re.Pattern[str]:
    return re.compile(r"\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


_TOML_VALUES = (
    'a string in quotes ("…"), true or false, a number, an array [ … ] or an inline table { … }'
)


def _toml_error(text: str, exc: tomllib.TOMLDecodeError, file: str) -> ConfigError:
    """A :class:`ConfigError` for a file that is not valid TOML, naming the line, the key and
    what would be valid (``tomllib`` gives only a position and a terse reason)."""
    reason = str(exc)
    match = _position().search(reason)
    lines = text.splitlines()
    if match is None or match.group(1) is None:
        where = "the end of the file" if match is not None else "somewhere"
        detail = reason[: match.start()] if match is not None else reason
        message = f"{file}: not valid TOML at {where}: {detail} (an array or string left open?)"
        return ConfigError(message, file=file)
    reason = reason[: match.start()]
    number = int(match.group(1))
    line = lines[number - 1] if 0 < number <= len(lines) else ""
    own_header = _header_line().fullmatch(line)
    table = re.sub(r"\s+", "", own_header.group(1)) if own_header else _table_at(lines, number)
    key_match = _key_line().match(line)
    key = re.sub(r"\s+", "", key_match.group(1)) if key_match else None
    path = "$." + ".".join(p for p in (table, key) if p) if (table or key) else None
    shown = f"[{table}] " if table else ""
    where = f"{file}: line {number}"
    if reason.startswith("Cannot declare") and table:
        first = _first_line(lines, number, lambda other: _header_line().fullmatch(other), table)
        message = (
            f"{where}: the table [{table}] is declared twice"
            + (f" (first on line {first})" if first else "")
            + f"; keep one [{table}] header and put all its keys under it"
        )
    elif reason.startswith("Cannot overwrite") and key is not None:
        first = _first_line(lines, number, lambda other: _key_line().match(other), key, table)
        message = (
            f"{where}: {shown}{key} is set twice"
            + (f" (first on line {first})" if first else "")
            + "; a key may appear once in its table: keep one of them"
        )
    elif reason == "Invalid value" and key_match is not None and key is not None:
        value = key_match.group(2).split(" #")[0].strip()
        expected = _expected_at(table, key)
        hint = f"expected {expected}" if expected else f"expected {_TOML_VALUES}"
        wants_text = expected is None or "string" in expected
        quoted = (
            f'; a string needs quotes: {key} = "{value}"'
            if wants_text and value.isidentifier()
            else ""
        )
        message = f"{where}: {shown}{key} = {value}: not a TOML value; {hint}{quoted}"
    else:
        column = int(match.group(2))
        message = (
            f"{where}, column {column}: not valid TOML ({reason[:1].lower()}{reason[1:]}): "
            f"{line.strip()!r}"
        )
    return ConfigError(message, file=file, path=path)


def _table_at(lines: list[str], number: int) -> str | None:
    """The table a line belongs to: the last ``[header]`` above it (None: the root table)."""
    for line in reversed(lines[: number - 1]):
        header = _header_line().fullmatch(line)
        if header is not None:
            return re.sub(r"\s+", "", header.group(1))
    return None


def _first_line(
    lines: list[str], number: int, matcher: Any, name: str, table: str | None = None
) -> int | None:
    """The line, before ``number``, where ``name`` (a key in ``table``, or a header) first is."""
    for index, line in enumerate(lines[: number - 1], start=1):
        found = matcher(line)
        if found is None:
            continue
        if re.sub(r"\s+", "", found.group(1)) == name and (
            table is None or _table_at(lines, index) == table
        ):
            return index
    return None


def _expected_at(table: str | None, key: str) -> str | None:
    """What would be valid for ``key`` of a toolwire section (None for plugin tables)."""
    cls = _SECTIONS.get(table or "")
    if cls is None:
        return None
    expected = _expected_for(cls, f"$.{key}")
    return None if expected is None or expected.startswith("one of the keys") else expected


def _check_raw(raw: Mapping[str, Any], file: str | None) -> None:
    """Refuse what no key may hold: ``nan`` and infinities, and nesting past ``_MAX_NESTING``."""
    stack: list[tuple[str, Any, int]] = [("$", raw, 0)]
    while stack:
        path, value, depth = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(
                f"{_where(file, path)} = {value!r}: expected a finite number (nan and inf are "
                "never valid)",
                file=file,
                path=path,
            )
        if isinstance(value, Mapping | list):
            if depth >= _MAX_NESTING:
                raise ConfigError(
                    f"{_where(file, path)}: nested more than {_MAX_NESTING} levels deep; no "
                    "setting nests that far",
                    file=file,
                    path=path,
                )
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            for key, item in items:
                where = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"
                stack.append((where, item, depth + 1))


def config_from_dict(raw: Mapping[str, Any], *, file: str | None = None) -> Config:
    """Structure an already-parsed config table (as ``tomllib`` returns it)."""
    _check_raw(raw, file)
    data = dict(raw)
    tools_raw = data.pop("tools", {})
    if not isinstance(tools_raw, dict):
        raise ConfigError(
            f"{_where(file, '$.tools')} = {tools_raw!r}: expected a table",
            file=file,
            path="$.tools",
        )
    tools_own = {k: v for k, v in tools_raw.items() if k in _TOOLS_OWN_KEYS}
    plugin_tables: dict[str, Mapping[str, Any]] = {}
    for key, value in tools_raw.items():
        if key in _TOOLS_OWN_KEYS:
            continue
        if not isinstance(value, dict):
            raise ConfigError(
                f"{_where(file, f'$.tools.{key}')} = {value!r}: unknown key {key!r}; [tools] takes "
                "enable, deny, profile, max_direct, max_direct_bytes, [tools.trust], "
                "[tools.exposure], and [tools.<plugin>] tables of plugin "
                "settings",
                file=file,
                path=f"$.tools.{key}",
            )
        plugin_tables[key] = value
    providers_raw = data.pop("providers", {})
    if not isinstance(providers_raw, dict) or any(
        not isinstance(v, dict) for v in providers_raw.values()
    ):
        raise ConfigError(
            f"{_where(file, '$.providers')}: expected [providers.<plugin>] tables",
            file=file,
            path="$.providers",
        )
    profiles_raw = data.pop("profiles", {})
    if not isinstance(profiles_raw, dict):
        raise ConfigError(
            f"{_where(file, '$.profiles')} = {profiles_raw!r}: expected [profiles.<name>] tables",
            file=file,
            path="$.profiles",
        )
    profiles = {
        name: structure_section(table, ProfileConfig, file=file, path=f"$.profiles.{name}")
        for name, table in profiles_raw.items()
    }
    surfaces = _structure_surfaces(data.pop("surfaces", {}), file)
    prices = _structure_prices(data.pop("prices", {}), file)
    i18n = _structure_i18n(data.pop("i18n", {}), file)
    provider_raw, named_raw = _named_providers(data.get("provider"))
    if provider_raw is not None:
        data["provider"] = provider_raw
    config = _structure_sections(data, file)
    if "trust" in data:  # the scheme the levels below are read in
        problem = scheme_problem(config.trust.levels)
        if problem is not None:
            raise ConfigError(
                f"{_where(file, '$.trust.levels')} = {list(config.trust.levels)!r}: {problem}",
                file=file,
                path="$.trust.levels",
            )
        use_levels(config.trust.levels)
    named_providers = {
        name: structure_section(
            {**(provider_raw or {}), **table}, ProviderConfig, file=file, path=f"$.provider.{name}"
        )
        for name, table in named_raw.items()
    }
    for name, named in named_providers.items():
        check_provider(named, f"$.provider.{name}", file)
    tools = structure_section(tools_own, ToolsConfig, file=file, path="$.tools")
    tools = attrs.evolve(tools, plugin_settings=plugin_tables)
    _check_values(config, tools, profiles, file)
    _check_budgets(config, prices, file)
    return attrs.evolve(
        config,
        tools=tools,
        named_providers=named_providers,
        providers=dict(providers_raw),
        profiles=profiles,
        surfaces=surfaces,
        prices=prices,
        i18n=i18n,
        source=file,
    )


_PROVIDER_TABLES = frozenset({"tool_dialects", "options"})
"""The keys of ``[provider]`` whose values are tables; any other table is a named provider."""


def _named_providers(raw: Any) -> tuple[Any, dict[str, dict[str, Any]]]:
    """``[provider]`` without its ``[provider.<name>]`` tables, and those tables by name."""
    if not isinstance(raw, dict):
        return raw, {}
    named = {
        key: value
        for key, value in raw.items()
        if isinstance(value, dict) and key not in _PROVIDER_TABLES
    }
    return {key: value for key, value in raw.items() if key not in named}, named


def _structure_prices(raw: Any, file: str | None) -> dict[str, ModelPrice]:
    """``[prices."<model>"]`` tables, each a :class:`ModelPrice`."""
    if not isinstance(raw, dict) or any(not isinstance(v, dict) for v in raw.values()):
        raise ConfigError(
            f'{_where(file, "$.prices")}: expected [prices."<model>"] tables of input and output '
            "prices per million tokens",
            file=file,
            path="$.prices",
        )
    return {
        model: structure_section(table, ModelPrice, file=file, path=f"$.prices.{model}")
        for model, table in raw.items()
    }


def _structure_surfaces(raw: Any, file: str | None) -> dict[str, SurfaceConfig]:
    """``[surfaces.<name>]`` tables, each named like a surface."""
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{_where(file, '$.surfaces')} = {raw!r}: expected [surfaces.<name>] tables",
            file=file,
            path="$.surfaces",
        )
    surfaces: dict[str, SurfaceConfig] = {}
    for name, table in raw.items():
        path = f"$.surfaces.{name}"
        if not is_surface_name(name):
            raise ConfigError(
                f"{_where(file, path)}: {name!r} is not a surface name; expected a lower-case "
                "word such as run, chat, web, batch, mcp-serve or an application's own",
                file=file,
                path=path,
            )
        surfaces[name] = structure_section(table, SurfaceConfig, file=file, path=path)
    return surfaces


@functools.cache
def _locale_tag() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")


def _structure_i18n(raw: Any, file: str | None) -> I18nConfig:
    """``[i18n]``: ``locale``, and ``[i18n.<locale>.<tool>]`` tables of title and description."""

    def bad(path: str, value: Any, expected: str) -> ConfigError:
        return ConfigError(
            f"{_where(file, path)} = {value!r}: expected {expected}", file=file, path=path
        )

    if not isinstance(raw, dict):
        raise bad("$.i18n", raw, "a table [i18n]")
    locale = raw.get("locale")
    if locale is not None and (not isinstance(locale, str) or not _locale_tag().fullmatch(locale)):
        raise bad("$.i18n.locale", locale, "a language tag such as 'fr' or 'pt-BR'")
    texts: dict[str, dict[str, ToolTexts]] = {}
    for name, tables in raw.items():
        if name == "locale":
            continue
        path = f"$.i18n.{name}"
        if not _locale_tag().fullmatch(name) or not isinstance(tables, dict):
            raise bad(path, tables, "locale tables such as [i18n.fr.<tool>] (or the key locale)")
        texts[_normal_locale(name)] = {
            tool: structure_section(table, ToolTexts, file=file, path=f"{path}.{tool}")
            for tool, table in tables.items()
        }
    return I18nConfig(locale=_normal_locale(locale) if locale else None, texts=texts)


def _normal_locale(tag: str) -> str:
    """``pt_BR`` and ``PT-br`` as ``pt-br``: one spelling to look tags up by."""
    return tag.replace("_", "-").lower()


_TABLES_OF_TABLES = ("i18n", "prices", "profiles", "providers", "surfaces", "tools")
"""The top-level tables made of named tables, structured apart from :data:`_SECTIONS`."""

_SECTIONS: dict[str, type] = {
    "plugins": PluginsConfig,
    "provider": ProviderConfig,
    "loop": LoopConfig,
    "policy": PolicyConfig,
    "trust": TrustConfig,
    "ledger": LedgerConfig,
    "trace": TraceConfig,
    "batch": BatchConfig,
    "artifacts": ArtifactsConfig,
    "limits": LimitsConfig,
    "run": RunConfig,
}


def _structure_sections(data: Mapping[str, Any], file: str | None) -> Config:
    """Structure each table the file has on its own: a section the file leaves out costs nothing
    (cattrs generates a structuring function per class, which is most of a small config's load
    time), and every section's problems are still reported together."""
    problems: list[tuple[str, str | None]] = []
    valid = ", ".join(sorted([*_SECTIONS, *_TABLES_OF_TABLES]))
    for key in sorted(set(data) - set(_SECTIONS)):
        message = f"{_where(file, f'$.{key}')}: unknown key {key!r}; valid keys here: {valid}"
        problems.append((message, f"$.{key}"))
    sections: dict[str, Any] = {}
    for key, cls in _SECTIONS.items():
        if key not in data:
            continue
        if not isinstance(data[key], dict):
            path = f"$.{key}"
            message = f"{_where(file, path)} = {data[key]!r}: expected a table [{key}]"
            problems.append((message, path))
            continue
        try:
            sections[key] = structure_section(data[key], cls, file=file, path=f"$.{key}")
        except ConfigError as exc:
            problems.append((str(exc), exc.path))
    if problems:
        message = "\n".join(text for text, _ in problems)
        raise ConfigError(message, file=file, path=problems[0][1])
    return Config(**sections)


def check_provider(provider: ProviderConfig, base: str, file: str | None) -> None:
    """Refuse a provider block whose values are out of range (``base`` is its key path,
    ``$.provider`` or ``$.provider.<name>``; ``file`` where it came from, or a flag)."""

    def bad(key: str, value: Any, expected: str) -> ConfigError:
        path = f"{base}.{key}"
        return ConfigError(
            f"{_where(file, path)} = {value!r}: expected {expected}", file=file, path=path
        )

    def within(key: str, low: float, high: float, what: str) -> None:
        value = getattr(provider, key)
        if value is not None and not low <= value <= high:
            raise bad(key, value, f"{what} from {low:g} to {high:g}")

    for key in ("connect_timeout", "read_timeout", "total_timeout"):
        within(key, 0.001, _WEEK, "seconds")
    within("max_retries", 0, 100, "an integer")
    within("max_tokens", 1, 10_000_000, "an integer")
    within("temperature", 0, 2, "a number")
    within("max_response_bytes", 1024, 2**32, "bytes")
    for key in ("max_sse_line_chars", "max_sse_event_chars"):
        within(key, 1024, 2**31, "characters")
    try:
        TrustLevel.parse(provider.trust)
    except ValueError:
        raise bad("trust", provider.trust, "one of " + ", ".join(TrustLevel.levels())) from None
    owned = sorted(set(provider.options) & _LOOP_OWNED_OPTIONS)
    if owned:
        key = owned[0]
        raise bad(
            f"options.{key}",
            provider.options[key],
            "no value: the loop decides the tools, the tool choice and parallel calls of every "
            "request (offer tools with [tools]; list tools the provider runs itself in "
            "[provider] provider_tools; choose one run's with toolwire run -T and --tool-choice)",
        )
    for i, definition in enumerate(provider.provider_tools):
        if not isinstance(definition.get("type"), str) or not definition["type"]:
            raise bad(
                f"provider_tools[{i}]",
                definition,
                'a table with a "type", such as { type = "web_search" }',
            )
    within("context_tokens", 256, 100_000_000, "tokens")
    for i, entry in enumerate(provider.fallback):
        where = f"{base}.fallback[{i}]"
        if entry.fallback:
            raise ConfigError(
                f"{_where(file, where + '.fallback')}: a fallback lists no fallbacks of its own; "
                f"list every provider in {base}'s [[fallback]] tables",
                file=file,
                path=f"{where}.fallback",
            )
        if entry.adapter is None:
            raise ConfigError(
                f"{_where(file, where + '.adapter')}: missing; a fallback provider names its "
                "adapter (nothing is inherited)",
                file=file,
                path=f"{where}.adapter",
            )
        check_provider(entry, where, file)


def _check_budgets(config: Config, prices: Mapping[str, ModelPrice], file: str | None) -> None:
    """``[limits]``, ``[prices]``, ``[run]`` and the compaction shares of ``[loop]``."""

    def bad(path: str, value: Any, expected: str) -> ConfigError:
        return ConfigError(
            f"{_where(file, path)} = {value!r}: expected {expected}", file=file, path=path
        )

    limits = config.limits
    for key in ("max_input_tokens", "max_output_tokens"):
        value = getattr(limits, key)
        if value is not None and value < 1:
            raise bad(f"$.limits.{key}", value, "a whole number of tokens of at least 1")
    cost = limits.max_cost
    if cost is not None and not (cost > 0 and math.isfinite(cost)):
        raise bad("$.limits.max_cost", cost, "a positive amount")
    for model, price in prices.items():
        for key in ("input", "output", "cached_input", "cache_write"):
            value = getattr(price, key)
            if value is not None and not (value >= 0 and math.isfinite(value)):
                raise bad(f"$.prices.{model}.{key}", value, "a price of at least 0 per million")
    loop = config.loop
    if not 0 < loop.compact_to < loop.compact_at <= 1:
        raise bad(
            "$.loop.compact_to",
            loop.compact_to,
            f"a share above 0 and below [loop] compact_at ({loop.compact_at:g}), at most 1",
        )
    schema = config.run.output_schema
    if schema is not None and not isinstance(schema, str | dict):
        raise bad(
            "$.run.output_schema",
            schema,
            "a JSON Schema table, or the path of a JSON file holding one",
        )
    if config.run.output_retries < 0 or config.run.output_retries > 100:
        raise bad("$.run.output_retries", config.run.output_retries, "a whole number from 0 to 100")
    if cost is None:
        return
    providers = [("$.provider", config.provider)] + [
        (f"$.provider.fallback[{i}]", entry) for i, entry in enumerate(config.provider.fallback)
    ]
    for path, provider in providers:
        name = provider.model
        if name is not None and name not in prices:
            raise bad(
                f"{path}.model",
                name,
                f'a model with a price: [limits] max_cost needs [prices."{name}"] (input '
                "and output per million tokens)",
            )


def _check_values(
    config: Config, tools: ToolsConfig, profiles: Mapping[str, ProfileConfig], file: str | None
) -> None:
    def bad(path: str, value: Any, expected: str) -> ConfigError:
        return ConfigError(
            f"{_where(file, path)} = {value!r}: expected {expected}", file=file, path=path
        )

    def within(path: str, value: float | None, low: float, high: float, what: str) -> None:
        if value is not None and not low <= value <= high:
            raise bad(path, value, f"{what} from {low:g} to {high:g}")

    loop = config.loop
    if loop.max_rounds < 1:
        raise bad("$.loop.max_rounds", loop.max_rounds, "an integer of at least 1")
    if loop.max_tool_calls < 0:
        raise bad("$.loop.max_tool_calls", loop.max_tool_calls, "an integer of at least 0")
    if loop.concurrency < 1:
        raise bad("$.loop.concurrency", loop.concurrency, "an integer of at least 1")
    within("$.loop.max_rounds", loop.max_rounds, 1, 10_000, "an integer")
    within("$.loop.max_tool_calls", loop.max_tool_calls, 0, 100_000, "an integer")
    within("$.loop.concurrency", loop.concurrency, 1, 256, "an integer")
    if loop.deadline_seconds is not None and loop.deadline_seconds <= 0:
        raise bad("$.loop.deadline_seconds", loop.deadline_seconds, "a positive number of seconds")
    within("$.loop.deadline_seconds", loop.deadline_seconds, 0.001, _WEEK, "seconds")
    batch = config.batch
    within("$.batch.concurrency", batch.concurrency, 1, 1024, "an integer")
    within("$.batch.run_deadline_seconds", batch.run_deadline_seconds, 0.001, _WEEK, "seconds")
    if not re.fullmatch(r"[a-z][a-z0-9_-]{0,63}", batch.executor):
        raise bad("$.batch.executor", batch.executor, "an executor name such as 'local' or 'ray'")
    for key in ("tool_timeout", "hook_timeout", "observer_timeout", "observer_close_timeout"):
        value = getattr(loop, key)
        if value <= 0:
            raise bad(f"$.loop.{key}", value, "a positive number of seconds")
        within(f"$.loop.{key}", value, 0.001, _WEEK, "seconds")
    check_provider(config.provider, "$.provider", file)
    within("$.policy.max_result_bytes", config.policy.max_result_bytes, 1, 2**30, "bytes")
    url = config.ledger.url
    if url is not None and not re.match(r"postgres(ql)?://", url):
        raise bad(
            "$.ledger.url",
            without_password(url),
            "a 'postgresql://…' URL (or leave it out for SQLite)",
        )
    within(
        "$.policy.max_untrusted_result_bytes",
        config.policy.max_untrusted_result_bytes,
        1024,
        2**30,
        "bytes",
    )
    if loop.unknown_tool not in ("return_error", "fail") and not re.fullmatch(
        r"rewrite:[a-z][a-z0-9_]{0,63}", loop.unknown_tool
    ):
        raise bad(
            "$.loop.unknown_tool",
            loop.unknown_tool,
            "'return_error', 'fail' or 'rewrite:<tool name>'",
        )
    for name, level in tools.trust.items():
        try:
            TrustLevel.parse(level)
        except ValueError:
            raise bad(
                f"$.tools.trust.{name}",
                level,
                "one of " + ", ".join(TrustLevel.levels()),
            ) from None
    if config.artifacts.max_bytes < 1:
        raise bad("$.artifacts.max_bytes", config.artifacts.max_bytes, "a whole number ≥ 1")
    for name, exposure in tools.exposure.items():
        if exposure not in ("direct", "deferred", "hidden"):
            raise bad(f"$.tools.exposure.{name}", exposure, "one of direct, deferred, hidden")
    for key in ("max_direct", "max_direct_bytes"):
        limit = getattr(tools, key)
        if limit is not None and limit < 1:
            raise bad(f"$.tools.{key}", limit, "a whole number of at least 1, or leave it out")
    side_effects = [effect.value for effect in SideEffect]
    for key in ("require_approval", "deny", "guarded", "unattended_allow"):
        for i, effect in enumerate(getattr(config.policy, key)):
            if effect not in side_effects:
                raise bad(f"$.policy.{key}[{i}]", effect, "one of " + ", ".join(side_effects))
    workspace = config.policy.workspace
    if workspace is not None and (not workspace or "\x00" in workspace):
        raise bad("$.policy.workspace", workspace, "a directory path such as '.'")
    for i, root in enumerate(config.policy.trusted_roots):
        if not root or "\x00" in root:
            raise bad(f"$.policy.trusted_roots[{i}]", root, "a directory path such as '/srv/data'")
    if config.trace.request_bodies and not config.trace.path:
        raise bad(
            "$.trace.request_bodies",
            True,
            "a [trace] path to write them to (request_bodies = true adds the request bodies to "
            "the trace; `toolwire run --show-wire` prints them without one)",
        )
    if tools.profile is not None and tools.profile not in profiles:
        known = ", ".join(sorted(profiles)) or "none are defined"
        raise bad(
            "$.tools.profile", tools.profile, f"the name of a [profiles.<name>] table ({known})"
        )


__all__ = [
    "BatchConfig",
    "Config",
    "ConfigError",
    "I18nConfig",
    "LedgerConfig",
    "LimitsConfig",
    "LoopConfig",
    "PluginsConfig",
    "PolicyConfig",
    "ProfileConfig",
    "ProviderConfig",
    "RunConfig",
    "SurfaceConfig",
    "ToolTexts",
    "ToolsConfig",
    "TraceConfig",
    "TrustConfig",
    "config_from_dict",
    "effective_settings",
    "find_config_file",
    "load_config",
    "structure_section",
]
