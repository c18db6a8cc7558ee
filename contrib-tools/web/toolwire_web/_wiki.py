"""The search of ``search_confluence``: Confluence Data Center's REST search, read safely.

One request per call, ``GET <base>/rest/api/search?cql=…`` through the guarded retrieval: the
site's own host is the only private host, every hop stays inside ``confluence_url``, and the
operating system's sign-in goes to it when ``negotiate_hosts`` lists it. The model's phrase and
space key are never CQL: the phrase is escaped into one quoted ``siteSearch`` term (the site
search of the wiki's own search box) and the key must be a space key.
"""

from __future__ import annotations

import functools
import html
import json
import re
from typing import TYPE_CHECKING, Any

import attrs

from toolwire import Source, ToolContext, ToolResult
from toolwire.tools import ArgumentsInvalid

from ._settings import SECTION, WebSettings

if TYPE_CHECKING:
    from toolwire.net import RetrievalBlocked, RetrievalError, RetrievalPolicy, Retrieved

MAX_QUERY_CHARS = 400
# Lucene's query syntax, which CQL's ~ applies to the text inside the quotes.
_LUCENE_SPECIAL = frozenset('+-&|!(){}[]^"~*?:\\/')
_HIGHLIGHT = re.compile(r"@@@(?:end)?hl@@@")
_FIELD_LIMITS = {"title": 300, "space": 200, "excerpt": 1000, "last_modified": 60}
_LOGIN_PAGES = frozenset({"login.action", "dologin.action"})


@functools.cache
def _space_key() -> re.Pattern[str]:
    # A space key is letters and digits; a personal space is ~ and the user's name.
    return re.compile(r"[A-Za-z0-9]{1,255}|~[A-Za-z0-9._@-]{1,255}")


@functools.cache
def _operator_word() -> re.Pattern[str]:
    return re.compile(r"\b(?:AND|OR|NOT|TO)\b")


def cql_phrase(phrase: str) -> str:
    """``phrase`` as one quoted CQL string whose text Lucene reads as plain words.

    Lucene's operators are escaped with a backslash and its upper-case operator words are
    lower-cased (the index is case-insensitive, so the search is the same); then the CQL string
    escapes backslashes and quotes. Nothing the phrase holds can end the string or add a clause.
    """
    text = "".join(f"\\{c}" if c in _LUCENE_SPECIAL else c for c in phrase)
    text = _operator_word().sub(lambda found: found.group().lower(), text)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_cql(query: str, space: str | None) -> str:
    """The CQL of one search: the phrase as a site search, pages and blog posts, one space."""
    cql = f"siteSearch ~ {cql_phrase(query)} AND type in (page, blogpost)"
    if space is not None:
        cql += f' AND space = "{space}"'  # a checked space key: letters, digits, ~._@-
    return cql


@attrs.frozen(kw_only=True)
class WikiHit:
    """One search result as the site sent it (decoded, not yet filtered)."""

    title: str
    url: str
    space: str = ""
    excerpt: str = ""
    last_modified: str = ""


class WikiAnswerInvalid(ValueError):
    """The site's answer is not Confluence's search JSON."""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_HIGHLIGHT.sub("", value)).split())


def _page_url(base: str, value: Any) -> str | None:
    """The absolute address of a result, from the path the site gave (relative to its base)."""
    if not isinstance(value, str) or not value.startswith("/") or value.startswith("//"):
        return None
    if len(value) > 2000 or any(c.isspace() or not c.isprintable() or c == "\\" for c in value):
        return None
    return base.rstrip("/") + value


def parse_results(data: Any, base: str) -> tuple[list[WikiHit], bool]:
    """The hits of a ``/rest/api/search`` answer and whether a next page exists.

    A result whose address is not a path on the site (absolute, protocol-relative, with spaces
    or control characters) is left out: every address given to the model is inside ``base``.

    :raises WikiAnswerInvalid: the answer has no ``results`` list.
    """
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise WikiAnswerInvalid("the answer has no 'results' list")
    hits: list[WikiHit] = []
    for item in data["results"]:
        if not isinstance(item, dict):
            continue
        content = _mapping(item.get("content"))
        webui = _mapping(content.get("_links")).get("webui")
        url = _page_url(base, item.get("url")) or _page_url(base, webui)
        if url is None:
            continue
        hits.append(
            WikiHit(
                title=_text(item.get("title")) or _text(content.get("title")),
                url=url,
                space=_text(_mapping(item.get("resultGlobalContainer")).get("title")),
                excerpt=_text(item.get("excerpt")),
                last_modified=_text(item.get("lastModified")),
            )
        )
    has_more = bool(_mapping(data.get("_links")).get("next"))
    start, size, total = (data.get(key) for key in ("start", "size", "totalSize"))
    if isinstance(start, int) and isinstance(size, int) and isinstance(total, int):
        has_more = has_more or start + size < total
    return hits, has_more


def request_url(base: str, cql: str, start: int, limit: int) -> str:
    """The address of one search request."""
    from yarl import URL

    root = URL(base.strip())
    path = root.raw_path.rstrip("/") + "/rest/api/search"
    query = {"cql": cql, "start": str(start), "limit": str(limit), "excerpt": "highlight"}
    return str(root.with_path(path, encoded=True).with_query(query))


def _checked_arguments(query: str, space: str | None) -> tuple[str, str | None]:
    query = " ".join(query.split())
    problems = []
    if not query:
        problems.append("query: got no words; give the words to look for.")
    elif len(query) > MAX_QUERY_CHARS:
        problems.append(
            f"query: got {len(query)} characters; give at most {MAX_QUERY_CHARS}, the few words "
            "that matter."
        )
    if space is not None:
        space = space.strip()
        if not _space_key().fullmatch(space):
            shown = space if len(space) <= 60 else f"{space[:60]}…"
            problems.append(
                f"space: got {shown!r}; a space key is letters and digits (such as DOC), or ~ "
                "and a user name for a personal space. Leave space out to search every space."
            )
    if problems:
        raise ArgumentsInvalid(problems)
    return query, space


async def search(query: str, space: str | None, page: int, context: ToolContext) -> ToolResult:
    """What ``search_confluence`` answers."""
    from toolwire.tools import Paging

    settings = WebSettings.coerce(context.settings)
    needed = settings.confluence_trust_needed
    if not context.provider_trust.satisfies(needed):
        return ToolResult.blocked(
            f"search_confluence needs a provider trusted at least {needed.label!r} ({SECTION} "
            f"confluence_trust), and this one is trusted {context.provider_trust.label!r}: "
            "intranet pages are not sent to it."
        )
    base = settings.confluence_url
    if base is None:
        return ToolResult.error(
            f"search_confluence has no site: set {SECTION} confluence_url to the base address "
            "of the Confluence site."
        )
    base = base.strip()
    query, space = _checked_arguments(query, space)
    paging = Paging(page_size=settings.results_per_page, max_pages=settings.search_max_pages)
    paging.check(page)

    import toolwire.net as net

    from ._sessions import fetch_for

    try:
        policy = settings.confluence_policy()
    except ValueError as exc:
        return ToolResult.error(f"search_confluence cannot run: {exc}")
    url = request_url(base, build_cql(query, space), paging.offset(page), paging.page_size)
    try:
        answer = await fetch_for(context, url, policy)
    except net.RetrievalBlocked as exc:
        return await _refused(exc, base, policy, context)
    except net.RetrievalError as exc:
        return await _failed(exc, base, policy, context)
    login = _login_page(answer)
    if login is not None:
        return _not_signed_in(base, policy, f"the site sent the search to its login page ({login})")
    try:
        hits, has_more = parse_results(_json(answer), base)
    except WikiAnswerInvalid as exc:
        return ToolResult.error(
            f"search_confluence: {_host(base)} answered with something that is not Confluence's "
            f"search results ({exc}); is {SECTION} confluence_url the site's base address (the "
            "part before /display/ or /spaces/)?"
        )
    results = paging.page(page, hits[: paging.page_size], has_more=has_more)
    return await _result(query, space, results.items, results.page, results.has_more, context)


def _json(answer: Retrieved) -> Any:
    if answer.content_type != "application/json":
        raise WikiAnswerInvalid(f"content type {answer.content_type or 'none'}")
    try:
        return json.loads(answer.text())
    except ValueError:
        raise WikiAnswerInvalid("its body is not JSON") from None


def _host(base: str) -> str:
    from yarl import URL

    return URL(base).raw_host or base


def _login_page(answer: Retrieved) -> str | None:
    """The address of the sign-in page the site sent the search to, or None."""
    from yarl import URL

    final = URL(answer.url)
    name = final.raw_path.rstrip("/").rsplit("/", 1)[-1]
    if name in _LOGIN_PAGES or (answer.redirects and answer.content_type == "text/html"):
        return str(final.with_query(None))
    return None


def _not_signed_in(
    base: str, policy: RetrievalPolicy, why: str, *, advise: bool = True
) -> ToolResult:
    """A search that met the site's sign-in: what happened, and what to configure (``advise``:
    ``why`` does not say it already)."""
    from yarl import URL

    host = _host(base)
    text = f"search_confluence is not signed in to {host}: {why}."
    if URL(base).scheme != "https":
        text += (
            " The operating system's sign-in is sent only over https: set "
            f"{SECTION} confluence_url to the site's https:// address."
        )
    elif not policy.negotiate_hosts:
        text += (
            " toolwire signs in with the operating system's Kerberos sign-in to hosts listed in "
            f"{SECTION} negotiate_hosts (and private_hosts): add {host} there."
        )
    elif advise:
        text += (
            f" {host} is listed in {SECTION} negotiate_hosts: check that this computer has a "
            "Kerberos ticket (klist; get one with kinit or a domain login) and that the site "
            "accepts Kerberos (SPNEGO) sign-in."
        )
    text += " Tell the user; searching again will not help until this is set up."
    return ToolResult.error(text, metadata={"sign_in": "missing"})


async def _refused(
    exc: RetrievalBlocked, base: str, policy: RetrievalPolicy, context: ToolContext
) -> ToolResult:
    from ._page import outside_text

    inside = policy.within is not None and f"{exc.url}/".startswith(policy.within)
    if exc.redirected_from is not None and not inside:
        # A site sends a search without a session to its login, which may be elsewhere (SSO).
        return _not_signed_in(
            base, policy, f"the site sent the search to {exc.url}, outside {SECTION} confluence_url"
        )
    text = await outside_text(context, f"Blocked: {exc}.", exc.url)
    return ToolResult.blocked(text)


async def _failed(
    exc: RetrievalError, base: str, policy: RetrievalPolicy, context: ToolContext
) -> ToolResult:
    from ._page import outside_text

    if exc.status == 401:
        if "negotiate" in exc.challenges and policy.negotiate_hosts:
            # The retrieval says how the sign-in went (refused, or no ticket and what to do).
            failed = "sign-in to" in exc.reason and "failed" in exc.reason
            return _not_signed_in(base, policy, exc.reason, advise=not failed)
        return _not_signed_in(base, policy, f"the site answered {exc.reason}")
    text = f"search_confluence failed: {exc}."
    if exc.status == 400:
        text += " The site did not take the search; try other words."
    return ToolResult.error(await outside_text(context, text, exc.url), retryable=exc.retryable)


async def _result(
    query: str,
    space: str | None,
    hits: tuple[WikiHit, ...],
    page: int,
    has_more: bool,
    context: ToolContext,
) -> ToolResult:
    from toolwire.untrusted import filter_untrusted

    from ._page import one_line

    names = tuple(_FIELD_LIMITS)
    texts: list[str] = []
    fields: list[str] = []
    for number, hit in enumerate(hits, start=1):
        for name in names:
            texts.append(one_line(getattr(hit, name), _FIELD_LIMITS[name]) or "")
            fields.append(f"result {number} {name.replace('_', ' ')}")
    outcome = await filter_untrusted(
        context, texts, source=f"wiki results for {query!r} (page {page})", fields=fields
    )
    data: dict[str, Any] = {}
    notice = outcome.model_notice()
    if notice:
        data["note"] = notice
    data.update(query=query, page=page, has_more=has_more)
    if space is not None:
        data["space"] = space
    results: list[dict[str, str]] = []
    sources: list[Source] = []
    for index, hit in enumerate(hits):
        own = outcome.texts[len(names) * index : len(names) * (index + 1)]
        shown = dict(zip(names, own, strict=True))
        entry = {"title": shown["title"], "url": hit.url}
        entry.update({name: shown[name] for name in names[1:] if shown[name]})
        results.append(entry)
        sources.append(Source(url=hit.url, title=shown["title"] or None))
    data["results"] = results
    if not results:
        data["note"] = "No results on this page." if page > 1 else "No results; try other words."
    settings = WebSettings.coerce(context.settings)
    return ToolResult.ok(
        data=data,
        sources=sources,
        metadata={"page": page, "has_more": has_more, "filter_report": outcome.report},
        # What reached the model is the site's: later providers must be trusted as much.
        required_trust=settings.confluence_trust_needed if results else None,
    )
