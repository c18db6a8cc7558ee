"""Search backends behind ``web_search``: SearXNG's JSON API and the Brave Search API.

A backend turns a query and a page number into a :class:`SearchPage`. Every request goes
through :func:`toolwire.net.fetch`, under a policy that admits the backend's own host (and no
other) as private when ``private_hosts`` lists it.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import attrs

from ._settings import BRAVE_MAX_COUNT, BRAVE_MAX_PAGES, SECTION, WebSettings

if TYPE_CHECKING:
    import aiohttp

    from toolwire.net import RetrievalError, RetrievalPolicy, Retrieved

_RESULT_URL = re.compile(r"https?://[^\s<>\"'`\\]{1,2000}", re.IGNORECASE)
_DECORATION = re.compile(r"</?(?:strong|b|em|i|mark)>", re.IGNORECASE)


@attrs.frozen(kw_only=True)
class SearchHit:
    """One search result as the backend sent it (not yet filtered)."""

    title: str
    url: str
    snippet: str = ""
    published: str | None = None


def _hits(value: Iterable[SearchHit]) -> tuple[SearchHit, ...]:
    return tuple(value)


@attrs.frozen(kw_only=True)
class SearchPage:
    """One page of results and whether the backend has more after it."""

    hits: tuple[SearchHit, ...] = attrs.field(converter=_hits)
    has_more: bool


class SearchFailed(Exception):
    """The backend cannot be used or answered something unusable; the message says which."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable


class SearchBackend(Protocol):
    """What ``web_search`` needs from a backend."""

    name: ClassVar[str]
    max_pages: ClassVar[int | None]
    # Whether search() uses the host's shared session for ``policy`` (a backend that sends a
    # secret header keeps a session of its own).
    shares_session: ClassVar[bool]

    @property
    def policy(self) -> RetrievalPolicy:
        """The retrieval policy that admits the backend's own host."""
        ...

    max_count: ClassVar[int | None]

    async def search(
        self, query: str, page: int, count: int, *, session: aiohttp.ClientSession | None = None
    ) -> SearchPage:
        """Page ``page`` (from 1) of the results for ``query``, asking for ``count`` of them
        where the backend lets the caller choose (the caller keeps at most ``count``).
        ``session`` is the host's guarded session for the backend's policy, where the backend
        can use a shared one.

        :raises toolwire.net.RetrievalBlocked: the policy refused the backend's address.
        :raises toolwire.net.RetrievalError: the request failed.
        :raises SearchFailed: the answer is not the backend's format.
        """
        ...


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _result_url(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if _RESULT_URL.fullmatch(value) else None


def _json(page: Retrieved, backend: str) -> Any:
    try:
        return json.loads(page.text())
    except ValueError:
        raise SearchFailed(
            f"{backend} answered with something that is not JSON (content type "
            f"{page.content_type or 'none'}); is the address its JSON API?"
        ) from None


def _http_failure(exc: RetrievalError, backend: str, hints: dict[int, str]) -> SearchFailed:
    hint = hints.get(exc.status or 0)
    text = f"{backend} search failed: {exc}"
    return SearchFailed(f"{text}. {hint}" if hint else f"{text}.", retryable=exc.retryable)


@attrs.frozen
class SearxngBackend:
    """A SearXNG instance's JSON API (``/search?q=…&format=json&pageno=…``).

    SearXNG decides how many results a page holds (about 10 to 30, from all its engines);
    ``count`` is not sent; the tool keeps at most that many.
    """

    base_url: str
    policy: RetrievalPolicy

    name: ClassVar[str] = "SearXNG"
    max_pages: ClassVar[int | None] = None
    shares_session: ClassVar[bool] = True
    max_count: ClassVar[int | None] = None

    def request_url(self, query: str, page: int) -> str:
        """The URL of one results page."""
        from yarl import URL

        base = URL(self.base_url.strip())
        path = base.path.rstrip("/")
        if not path.endswith("/search"):
            path += "/search"
        query_part = {"q": query, "format": "json", "pageno": str(page)}
        return str(base.with_path(path).with_query(query_part))

    async def search(
        self, query: str, page: int, count: int, *, session: aiohttp.ClientSession | None = None
    ) -> SearchPage:
        """Fetch and parse one results page (through ``session`` when given)."""
        import toolwire.net as net

        try:
            answer = await net.fetch(
                self.request_url(query, page), policy=self.policy, session=session
            )
        except net.RetrievalError as exc:
            raise _http_failure(
                exc,
                self.name,
                {
                    403: "SearXNG answers JSON only when 'json' is listed under search.formats in "
                    "its settings.yml.",
                    429: "SearXNG's limiter refused the request; try again later.",
                },
            ) from None
        return parse_searxng(_json(answer, self.name))


def parse_searxng(data: Any) -> SearchPage:
    """The hits of a SearXNG JSON answer (``{"results": [{"url", "title", "content"}, …]}``).

    Results without an http(s) URL are skipped. SearXNG does not say whether a next page
    exists; a page that had results is taken to have one.
    """
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise SearchFailed(
            "SearXNG answered JSON without a 'results' list; is the address a SearXNG instance?"
        )
    hits: list[SearchHit] = []
    for item in data["results"]:
        if not isinstance(item, dict):
            continue
        url = _result_url(item.get("url"))
        if url is None:
            continue
        published = item.get("publishedDate")
        hits.append(
            SearchHit(
                title=_text(item.get("title")),
                url=url,
                snippet=_text(item.get("content")),
                published=published if isinstance(published, str) and published else None,
            )
        )
    return SearchPage(hits=hits, has_more=bool(hits))


@attrs.frozen
class BraveBackend:
    """The Brave Search web-search API (``X-Subscription-Token`` header, key from the env).

    Brave pages by ``offset`` (pages of ``count`` results, offsets 0 to 9). The key is sent
    only in the request header, never follows a redirect, and never appears in a result or an
    error.
    """

    url: str
    api_key: str = attrs.field(repr=False)
    policy: RetrievalPolicy

    name: ClassVar[str] = "Brave Search"
    max_pages: ClassVar[int | None] = BRAVE_MAX_PAGES
    shares_session: ClassVar[bool] = False
    max_count: ClassVar[int | None] = BRAVE_MAX_COUNT

    def request_url(self, query: str, page: int, count: int) -> str:
        """The URL of one results page (without the key, which goes in a header)."""
        from yarl import URL

        return str(
            URL(self.url.strip()).with_query(
                {"q": query, "count": str(count), "offset": str(page - 1)}
            )
        )

    async def search(
        self, query: str, page: int, count: int, *, session: aiohttp.ClientSession | None = None
    ) -> SearchPage:
        """Fetch and parse one results page (on a session of its own: it carries the key)."""
        import toolwire.net as net

        url = self.request_url(query, page, min(count, BRAVE_MAX_COUNT))
        try:
            async with net.open_session(self.policy) as session:
                session.headers["X-Subscription-Token"] = self.api_key
                session.headers["Accept"] = "application/json"
                answer = await net.fetch(url, policy=self.policy, session=session)
        except net.RetrievalError as exc:
            refused = "the Brave Search API refused the key; check the key in the environment."
            raise _http_failure(
                exc,
                self.name,
                {
                    401: refused,
                    403: refused,
                    422: "the Brave Search API refused the request's parameters.",
                    429: "the Brave Search API's rate limit or quota was reached; try later.",
                },
            ) from None
        return parse_brave(_json(answer, self.name))


def _undecorated(value: Any) -> str:
    # Brave marks the query's words with <strong> and escapes the rest as HTML.
    return html.unescape(_DECORATION.sub("", _text(value)))


def parse_brave(data: Any) -> SearchPage:
    """The hits of a Brave web-search answer (``{"web": {"results": […]}, "query": {…}}``)."""
    if not isinstance(data, dict):
        raise SearchFailed("Brave Search answered JSON that is not an object")
    web = data.get("web")
    results = web.get("results") if isinstance(web, dict) else None
    hits: list[SearchHit] = []
    for item in results if isinstance(results, list) else ():
        if not isinstance(item, dict):
            continue
        url = _result_url(item.get("url"))
        if url is None:
            continue
        age = item.get("age") or item.get("page_age")
        hits.append(
            SearchHit(
                title=_undecorated(item.get("title")),
                url=url,
                snippet=_undecorated(item.get("description")),
                published=age if isinstance(age, str) and age else None,
            )
        )
    query = data.get("query")
    more = query.get("more_results_available") if isinstance(query, dict) else None
    return SearchPage(hits=hits, has_more=more if isinstance(more, bool) else bool(hits))


def backend_for(settings: WebSettings) -> SearchBackend | None:
    """The backend ``settings`` configure, or None when there is none.

    :raises SearchFailed: the backend is configured but cannot be used (no API key in the
        environment, a malformed ``private_hosts`` entry).
    """
    name = settings.backend
    try:
        if name == "searxng":
            assert settings.searxng_url is not None  # checked by WebSettings
            return SearxngBackend(
                settings.searxng_url, settings.search_policy(settings.searxng_url)
            )
        if name == "brave":
            key = os.environ.get(settings.brave_api_key_env, "").strip()
            if not key:
                raise SearchFailed(
                    f"web_search cannot run: the Brave Search API key is missing; set the "
                    f"environment variable {settings.brave_api_key_env} ({SECTION} "
                    "brave_api_key_env)."
                )
            policy = settings.search_policy(settings.brave_url, max_redirects=0)
            return BraveBackend(settings.brave_url, key, policy)
    except ValueError as exc:
        raise SearchFailed(f"web_search cannot run: {exc}") from None
    return None
