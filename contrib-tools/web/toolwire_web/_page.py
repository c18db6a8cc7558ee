"""Reading one page for ``read_web_page``: the guarded retrieval, the conversion, the result.

``_read`` declares the tool; this module is imported by its first call, so listing the tools
loads none of it.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from toolwire import Source, ToolContext, ToolResult, TrustLevel

from ._settings import SECTION, WebSettings

# The conversation's messages, the address check and the conversion worker are imported where a
# page is read.
if TYPE_CHECKING:
    from toolwire.net import RetrievalBlocked, RetrievalPolicy, Retrieved

# The most characters of a metadata field given to the model (a page's title can be anything).
_FIELD_LIMITS = {"title": 300, "author": 200, "date": 100, "language": 40, "description": 1000}
_SHOWN_URL = 300
# The most characters of a failure's text given to the model.
_ERROR_CHARS = 2000
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_KINDS = (
    ("markdown", ("text/markdown", "text/x-markdown", "application/markdown")),
    ("csv", ("text/csv", "application/csv")),
    ("yaml", ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")),
    ("json", ("application/json", "application/x-ndjson", "text/json")),
    ("xml", ("application/xml", "text/xml")),
)


def shown_url(url: str) -> str:
    """``url`` safe to show: unprintable characters escaped, length capped."""
    text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in url)
    return text if len(text) <= _SHOWN_URL else f"{text[:_SHOWN_URL]}…"


def document_kind(content_type: str) -> str:
    """The kind of a response by its media type: html, markdown, csv, yaml, json, xml or text."""
    if content_type in _HTML_TYPES:
        return "html"
    for kind, types in _KINDS:
        if content_type in types:
            return kind
    if content_type.endswith("+json"):
        return "json"
    if content_type.endswith("+xml"):
        return "xml"
    if content_type.endswith("+yaml"):
        return "yaml"
    return "text"


class Document(NamedTuple):
    """A retrieved page made readable: its kind, metadata and body (Markdown or the text sent)."""

    kind: str
    body: str
    title: str | None = None
    description: str | None = None
    author: str | None = None
    date: str | None = None
    language: str | None = None
    #: Why an HTML page was read as plain text, when it was.
    degraded: str | None = None


_STRUCTURED_KINDS = frozenset({"json", "xml", "yaml", "csv"})


@functools.cache
def _config_line() -> re.Pattern[str]:
    """A line of a configuration file: a [section] or key = value / key: value."""
    return re.compile(r"\s*(?:\[[^\]\n]+\]|[\w.-]+\s*[:=])")


def is_structured(document: Document) -> bool:
    """Whether a document is data returned as sent (JSON, XML, YAML, CSV, or plain text that
    reads as a configuration file), whose text the filter must flag but never rewrite."""
    if document.kind in _STRUCTURED_KINDS:
        return True
    if document.kind != "text":
        return False
    lines = [line for line in document.body.splitlines()[:200] if line.strip()]
    config = sum(1 for line in lines if _config_line().match(line))
    return bool(lines) and config >= 0.6 * len(lines)


def _markdown_title(text: str) -> str | None:
    for line in text.splitlines()[:50]:
        if line.startswith("# "):
            return line[2:].strip() or None
    return None


async def convert(page: Retrieved, settings: WebSettings, context: ToolContext | None) -> Document:
    """Turn a retrieved response into a :class:`Document`.

    HTML becomes the Markdown of its main content with the page's metadata, converted in a
    child process that is killed when ``settings.convert_timeout`` runs out or the run is
    cancelled; every other text document is returned as sent, decoded, with its line endings
    unified.

    :raises ConversionFailed: when an HTML page could not be converted in time.
    """
    from ._worker import conversion_worker
    from .extraction import normalize_text_document

    kind = document_kind(page.content_type)
    if kind == "html":
        worker, owned = conversion_worker(context)
        try:
            fields = await worker.convert_html(
                page.body,
                url=page.url,
                charset=page.charset,
                time_limit=settings.convert_timeout,
                cancelled=None if context is None else context.cancelled,
            )
        finally:
            if owned:
                await worker.aclose()
        return Document(
            kind=kind,
            body=fields["markdown"] or "",
            title=fields["title"],
            description=fields["description"],
            author=fields["author"],
            date=fields["date"],
            language=fields["language"],
            degraded=fields["degraded"],
        )
    text = normalize_text_document(page.text())
    return Document(
        kind=kind,
        body=text,
        title=_markdown_title(text) if kind == "markdown" else None,
        language=page.headers.get("content-language"),
    )


def cut(text: str, budget: int) -> tuple[str, bool]:
    """``text`` cut to at most ``budget`` characters, at a paragraph or line where one is near."""
    if len(text) <= budget:
        return text, False
    window = text[:budget]
    for separator in ("\n\n", "\n", " "):
        at = window.rfind(separator)
        if at >= budget * 0.8:
            return window[:at].rstrip(), True
    return window, True


def one_line(value: str | None, limit: int) -> str | None:
    if value is None:
        return None
    text = " ".join(value.split())
    if not text:
        return None
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def earlier_reads(context: ToolContext) -> dict[str, str]:
    """The pages this tool already read in the run: each final and requested URL → call id."""
    from toolwire.messages import ToolResultMessage

    reads: dict[str, str] = {}
    name = context.tool.name
    for message in context.messages:
        if not isinstance(message, ToolResultMessage) or message.name != name:
            continue
        result = message.result
        if not result.is_ok or not result.sources:
            continue
        for key in ("url", "requested_url"):
            value = result.metadata.get(key)
            if isinstance(value, str):
                reads.setdefault(value, message.call_id)
        for source in result.sources:
            reads.setdefault(source.url, message.call_id)
    return reads


def _duplicate(url: str, call_id: str, requested: str) -> ToolResult:
    return ToolResult.ok(
        f"Already read in this run: {shown_url(url)} is the page returned by the earlier call "
        f"{call_id}; its content is in that result. Use it instead of reading the page again.",
        metadata={"url": url, "requested_url": requested, "duplicate_of": call_id},
    )


def _not_given(url: str) -> str:
    return (
        f"Blocked: {shown_url(url)} does not appear word for word in the system prompt, the "
        f"user's messages or a tool's result, and {SECTION} free_address_choice is off, so only "
        "addresses given there "
        "can be read. Use an address exactly as it appears in the conversation or in search "
        "results; do not guess, complete or change one."
    )


def _blocked(exc: RetrievalBlocked, settings: WebSettings, trust: TrustLevel) -> str:
    text = f"Blocked: {exc}."
    if settings.private_hosts and not trust.satisfies(settings.trust_needed):
        listed = _listed_host(exc.url, settings)
        if listed is not None:
            text += (
                f" {listed} is listed in {SECTION} private_hosts, but private hosts are reached "
                f"only with providers trusted at least {settings.trust_needed.label!r} "
                f"({SECTION} private_hosts_trust), and this provider is trusted {trust.label!r}."
            )
    return text


def _listed_host(url: str, settings: WebSettings) -> str | None:
    from yarl import URL

    try:
        parsed = URL(url)
        host, port = (parsed.raw_host or "").lower(), parsed.port
    except (ValueError, TypeError):
        return None
    if not host or port is None or not settings.full_policy().is_private_host(host, port):
        return None
    return f"{host}:{port}" if parsed.explicit_port else host


def _header(document: Document, url: str, requested: str, redirected: bool) -> list[str]:
    lines = []
    if document.title:
        lines.append(f"Title: {document.title}")
    lines.append(f"URL: {url}")
    if redirected:
        lines.append(f"Redirected from: {shown_url(requested)}")
    lines.append(f"Kind: {document.kind}")
    if document.degraded:
        lines.append(f"Read as plain text: {document.degraded}")
    for label, value in (
        ("Language", document.language),
        ("Author", document.author),
        ("Date", document.date),
        ("Description", document.description),
    ):
        if value:
            lines.append(f"{label}: {value}")
    return lines


async def read_page(url: str, context: ToolContext) -> ToolResult:
    """What ``read_web_page`` answers for ``url``."""
    from ._addresses import address_given
    from ._worker import ConversionFailed

    settings = WebSettings.coerce(context.settings)
    url = url.strip()
    # A call with no conversation (``toolwire tools call``) was typed by a person, not chosen
    # by a model: the address rule is about what a model may choose.
    chosen_by_model = context.round > 0 or bool(context.messages)
    if (
        settings.free_address_choice == "off"
        and chosen_by_model
        and not address_given(url, context.messages)
    ):
        return ToolResult.blocked(_not_given(url), metadata={"requested_url": url})
    earlier = earlier_reads(context)
    if url in earlier:
        return _duplicate(url, earlier[url], url)

    import toolwire.net as net

    from ._sessions import fetch_for

    try:
        if context.typed_by_person:
            policy = settings.typed_policy(url, context.provider_trust)
        else:
            policy = settings.read_policy(context.provider_trust)
    except ValueError as exc:
        return ToolResult.error(f"read_web_page cannot run: {exc}")
    try:
        page = await fetch_for(context, url, policy)
    except net.RetrievalBlocked as exc:
        text = await outside_text(context, _blocked(exc, settings, context.provider_trust), url)
        return ToolResult.blocked(text, metadata={"requested_url": url})
    except net.RetrievalError as exc:
        return ToolResult.error(
            await outside_text(context, f"{exc}.", exc.url),
            retryable=exc.retryable,
            metadata={"requested_url": url, "status": exc.status},
        )
    if page.url in earlier:
        return _duplicate(page.url, earlier[page.url], url)
    try:
        document = await convert(page, settings, context)
    except ConversionFailed as exc:
        text = f"read_web_page could not read {shown_url(page.url)}: {exc}."
        return ToolResult.error(
            await outside_text(context, text, page.url),
            metadata={"requested_url": url, "url": page.url},
        )
    needed = settings.trust_needed if _from_private_host(page.url, policy) else None
    return await _result(document, page, url, settings, context, needed)


def _from_private_host(url: str, policy: RetrievalPolicy) -> bool:
    """Whether ``url`` (a page read) is on a host the policy reached as a private one."""
    from yarl import URL

    parsed = URL(url)
    host = parsed.raw_host
    return host is not None and policy.is_private_host(host, parsed.port or 0)


async def outside_text(context: ToolContext, text: str, source: str) -> str:
    """A result text that holds words from outside (a server's reason, an address it sent).

    Whatever the status of the result, such text is cut to :data:`_ERROR_CHARS` and passes the
    untrusted-content filter like a page's body, notice included.
    """
    from toolwire.untrusted import filter_untrusted

    text, _ = cut(text, _ERROR_CHARS)
    outcome = await filter_untrusted(context, [text], source=source, fields=["error"])
    notice = outcome.model_notice()
    (filtered,) = outcome.texts
    return f"{notice}\n\n{filtered}" if notice else filtered


async def _result(
    document: Document,
    page: Retrieved,
    requested: str,
    settings: WebSettings,
    context: ToolContext,
    needed: TrustLevel | None = None,
) -> ToolResult:
    """The result of a page read; ``needed`` is the trust a page from a private host requires
    of every later provider (what it took to read it)."""
    from toolwire.untrusted import filter_untrusted

    metadata: dict[str, Any] = {
        "url": page.url,
        "requested_url": requested,
        "kind": document.kind,
        "content_type": page.content_type,
        "redirects": list(page.redirects),
    }
    body = document.body.strip("\n")
    if not body.strip():
        return ToolResult.ok(
            f"The page at {shown_url(page.url)} ({document.kind}) has no readable content: it "
            "is empty, or its text is produced by JavaScript, which is not run.",
            metadata={**metadata, "empty": True},
        )
    fields = {
        name: one_line(getattr(document, name), limit) for name, limit in _FIELD_LIMITS.items()
    }
    limited: dict[str, Any] = fields
    shown = document._replace(**limited)
    header = "\n".join(_header(shown, page.url, requested, bool(page.redirects)))
    budget = max(500, settings.max_result_chars - len(header) - 200)
    body, was_cut = cut(body, budget)

    names = [name for name, value in fields.items() if value is not None]
    outcome = await filter_untrusted(
        context,
        [*(fields[name] or "" for name in names), body],
        source=page.url,
        fields=[*names, "body"],
        structured=is_structured(document),
    )
    *filtered_fields, body = outcome.texts
    changes: dict[str, Any] = dict(zip(names, filtered_fields, strict=True))
    shown = shown._replace(**changes)
    parts = []
    notice = outcome.model_notice()
    if notice:
        parts.append(notice)
    parts.append("\n".join(_header(shown, page.url, requested, bool(page.redirects))))
    parts.append(body)
    notes = []
    if was_cut:
        notes.append(
            f"[Cut here: the page's content is {len(document.body.strip())} characters; this "
            f"result shows the first {len(body)} ({SECTION} max_result_chars).]"
        )
    if page.truncated:
        notes.append(
            f"[The response is larger than {settings.max_bytes} bytes ({SECTION} max_bytes): "
            "only its beginning was read.]"
        )
    if notes:
        parts.append("\n".join(notes))
    metadata.update(
        title=shown.title,
        truncated=was_cut or page.truncated,
        filter_report=outcome.report,
    )
    return ToolResult.ok(
        "\n\n".join(parts),
        sources=[Source(url=page.url, title=shown.title)],
        metadata=metadata,
        required_trust=needed,
    )
