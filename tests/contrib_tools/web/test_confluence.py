"""``search_confluence`` against a loopback Confluence-like HTTPS site: the search, what the
model may give (never CQL or an address), sign-in (Negotiate, a login redirect), trust, and the
tool it requires (``read_web_page``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from confluence_site import PAGES, TOKEN, Wiki, start_wiki
from web_support import OPEN_HOSTS, make_host, results, run_model

from toolwire import ToolStatus, TrustLevel
from toolwire.loop import ToolCallingLoop
from toolwire.testing import tool_call
from toolwire_web import WebSettings
from toolwire_web._wiki import build_cql, cql_phrase, parse_results

pytestmark = pytest.mark.usefixtures("loopback_only")


class Tokens:
    """An injected sign-in (the host service ``negotiate_tokens``)."""

    def __init__(self, token: bytes = TOKEN) -> None:
        self.asked: list[str] = []
        self._token = token

    def token(self, host: str) -> bytes:
        self.asked.append(host)
        return self._token


@pytest.fixture
async def wiki(tmp_path: Path) -> AsyncIterator[Wiki]:
    site, runner = await start_wiki(tmp_path)
    try:
        yield site
    finally:
        while OPEN_HOSTS:
            await OPEN_HOSTS.pop().aclose()
        await runner.cleanup()


def settings(wiki: Wiki, **more: Any) -> dict[str, Any]:
    return {
        "confluence_url": wiki.base,
        "private_hosts": [wiki.entry],
        "ca_file": wiki.ca_file,
        "results_per_page": 2,
        **more,
    }


def search(query: str, space: str | None = None, page: int | None = None) -> Any:
    arguments: dict[str, Any] = {"query": query}
    if space is not None:
        arguments["space"] = space
    if page is not None:
        arguments["page"] = page
    return tool_call("search_confluence", arguments)


async def test_search_returns_pages_inside_the_site_and_raises_the_requirement(
    tmp_path: Path, wiki: Wiki
) -> None:
    host, observer = make_host(tmp_path, **settings(wiki))
    run, model = await run_model(host, [search("brest  tides"), "Done."], "Tides at Brest?")
    offered = [f.name for f in model.requests[0].functions]
    assert offered == ["read_web_page", "search_confluence"]
    assert "search_confluence searches the organisation's Confluence" in str(
        model.requests[0].messages[0]
    )
    (result,) = results(run)
    assert result.status is ToolStatus.OK
    faq = PAGES[1]
    assert result.data == {
        "query": "brest tides",
        "page": 1,
        "has_more": False,
        "results": [
            {
                "title": "Brest tides FAQ",
                "url": f"{wiki.base}/display/DOC/Brest+tides+FAQ",
                "space": "Documentation",
                "excerpt": faq.body,
                "last_modified": faq.modified,
            }
        ],
    }
    assert [s.url for s in result.sources] == [f"{wiki.base}/display/DOC/Brest+tides+FAQ"]
    assert result.required_trust == TrustLevel.HIGH
    assert run.required_trust == TrustLevel.HIGH
    (sent,) = wiki.searches
    assert sent == {
        "cql": 'siteSearch ~ "brest tides" AND type in (page, blogpost)',
        "start": "0",
        "limit": "2",
        "excerpt": "highlight",
    }
    assert observer.filtered() == []


async def test_a_search_that_finds_nothing_raises_nothing(tmp_path: Path, wiki: Wiki) -> None:
    host, _ = make_host(tmp_path, **settings(wiki))
    run, _ = await run_model(host, [search("volcano"), "Nothing."], "Volcanoes?")
    (result,) = results(run)
    assert result.data["results"] == []
    assert result.data["note"] == "No results; try other words."
    assert result.required_trust is None
    assert run.required_trust is None


async def test_pages_and_a_space_key(tmp_path: Path, wiki: Wiki) -> None:
    host, _ = make_host(tmp_path, **settings(wiki, results_per_page=1, search_max_pages=2))
    run, _ = await run_model(
        host,
        [search("tide gauge"), search("tide gauge", page=2), search("tide", space="OPS"), "ok"],
        "Who reads the gauge?",
    )
    first, second, ops = results(run)
    assert (first.data["has_more"], second.data["has_more"]) == (True, False)
    assert first.data["results"][0]["title"] == "Tide gauge handbook"
    assert second.data["results"][0]["space"] == "Operations"
    assert [r["space"] for r in ops.data["results"]] == ["Operations"]
    assert [(s["start"], s["limit"]) for s in wiki.searches] == [("0", "1"), ("1", "1"), ("0", "1")]
    assert wiki.searches[2]["cql"].endswith(' AND space = "OPS"')
    loop = ToolCallingLoop(host)
    past = await loop.call("search_confluence", {"query": "tide", "page": 3})
    assert past.status is ToolStatus.ERROR
    assert "the last page this tool serves is 2" in past.content


@pytest.mark.parametrize(
    "phrase",
    [
        'tides" OR space = "SECRET',
        "tides) OR (creator = admin",
        'brest\\" AND type = attachment AND title ~ \\"x',
        "NOT brest OR tides AND *",
    ],
)
async def test_the_phrase_never_becomes_cql(tmp_path: Path, wiki: Wiki, phrase: str) -> None:
    host, _ = make_host(tmp_path, **settings(wiki))
    result = await ToolCallingLoop(host).call("search_confluence", {"query": phrase})
    assert result.status is ToolStatus.OK, result.content
    (sent,) = wiki.searches
    # The site parsed one quoted phrase and nothing else (it answers 400 to anything more), and
    # the phrase it read is the words the model gave.
    assert sent["cql"] == f"siteSearch ~ {cql_phrase(phrase)} AND type in (page, blogpost)"
    assert sent["cql"].count(" AND ") == 1


def test_cql_escaping() -> None:
    assert cql_phrase("brest tides") == '"brest tides"'
    assert cql_phrase('say "hi"') == '"say \\\\\\"hi\\\\\\""'
    assert cql_phrase("a AND b OR NOT c") == '"a and b or not c"'
    assert cql_phrase("c++ (draft)") == '"c\\\\+\\\\+ \\\\(draft\\\\)"'
    assert build_cql("x", "~jane.doe") == (
        'siteSearch ~ "x" AND type in (page, blogpost) AND space = "~jane.doe"'
    )


@pytest.mark.parametrize(
    "space",
    ['DOC" OR space = "SECRET', "DOC OPS", "https://wiki/display/DOC", "", "~", "D" * 300],
)
async def test_a_space_key_must_be_a_space_key(tmp_path: Path, wiki: Wiki, space: str) -> None:
    host, _ = make_host(tmp_path, **settings(wiki))
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "x", "space": space})
    assert result.status is ToolStatus.ERROR
    assert "a space key is letters and digits" in result.content
    assert wiki.searches == []


async def test_results_are_untrusted_content_cut_and_filtered(tmp_path: Path, wiki: Wiki) -> None:
    host, observer = make_host(tmp_path, **settings(wiki))
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "rota"})
    (hit,) = result.data["results"]
    assert "<|im_start|>" not in hit["title"]
    assert "‹|im_start|>" in hit["title"]
    assert len(hit["excerpt"]) <= 1000
    assert hit["excerpt"].endswith("…")
    assert result.data["note"].startswith("[Host note:")
    (report,) = observer.filtered()
    assert report.name == "search_confluence"  # type: ignore[attr-defined]
    assert "result 1 title" in report.report  # type: ignore[attr-defined]


async def test_result_addresses_off_the_site_are_left_out(tmp_path: Path) -> None:
    hostile = [
        {"title": "Away", "url": "https://attacker.example/steal", "excerpt": "x"},
        {"title": "Away too", "url": "//attacker.example/steal", "excerpt": "x"},
        {"title": "Spaces", "url": "/display/DOC/a page", "excerpt": "x"},
        {"title": "Webui", "content": {"_links": {"webui": "/pages/viewpage.action?pageId=7"}}},
    ]
    site, runner = await start_wiki(tmp_path, hostile)
    try:
        host, _ = make_host(tmp_path, **settings(site))
        result = await ToolCallingLoop(host).call("search_confluence", {"query": "nothing"})
        assert [r["url"] for r in result.data["results"]] == [
            f"{site.base}/pages/viewpage.action?pageId=7"
        ]
    finally:
        while OPEN_HOSTS:
            await OPEN_HOSTS.pop().aclose()
        await runner.cleanup()


def test_an_answer_that_is_not_search_results_is_refused() -> None:
    with pytest.raises(ValueError, match="no 'results' list"):
        parse_results({"statusCode": 500}, "https://wiki/confluence")
    hits, more = parse_results(
        {"results": [], "start": 0, "size": 0, "totalSize": 3}, "https://w/c"
    )
    assert (hits, more) == ([], True)


# --- sign-in ------------------------------------------------------------------------------------


async def test_a_redirect_to_the_login_page_is_a_missing_sign_in(
    tmp_path: Path, wiki: Wiki
) -> None:
    wiki.mode = "login"
    host, _ = make_host(tmp_path, **settings(wiki))
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "tides"})
    assert result.status is ToolStatus.ERROR
    assert result.content.startswith("search_confluence is not signed in to 127.0.0.1: ")
    assert "login.action" in result.content
    assert "add 127.0.0.1 there" in result.content
    assert "[tools.web] negotiate_hosts" in result.content
    assert result.metadata["sign_in"] == "missing"
    assert result.required_trust is None


async def test_a_redirect_off_the_site_is_never_followed(tmp_path: Path, wiki: Wiki) -> None:
    wiki.mode = "sso"
    host, _ = make_host(tmp_path, **settings(wiki))
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "tides"})
    assert result.status is ToolStatus.ERROR
    assert "sent the search to https://sso.corp.example/idp/login" in result.content
    assert "outside [tools.web] confluence_url" in result.content
    # loopback_only: no lookup or connection for sso.corp.example was attempted


async def test_negotiate_sign_in_with_the_injected_token_source(tmp_path: Path, wiki: Wiki) -> None:
    wiki.mode = "negotiate"
    tokens = Tokens()
    host, _ = make_host(
        tmp_path,
        services={"negotiate_tokens": tokens},
        **settings(wiki, negotiate_hosts=[wiki.entry]),
    )
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "brest tides"})
    assert result.status is ToolStatus.OK, result.content
    assert [r["title"] for r in result.data["results"]] == ["Brest tides FAQ"]
    assert tokens.asked == ["127.0.0.1"]
    assert wiki.authorizations[-1] is not None
    assert wiki.authorizations[-1].startswith("Negotiate ")
    assert json.dumps(result.data).find("Negotiate") == -1  # the token is nowhere in the result


async def test_a_token_the_site_refuses_is_a_missing_sign_in(tmp_path: Path, wiki: Wiki) -> None:
    wiki.mode = "negotiate"
    host, _ = make_host(
        tmp_path,
        services={"negotiate_tokens": Tokens(b"someone else")},
        **settings(wiki, negotiate_hosts=[wiki.entry]),
    )
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "tides"})
    assert result.status is ToolStatus.ERROR
    assert "did not accept the operating-system sign-in" in result.content
    assert "has a Kerberos ticket" in result.content


async def test_a_negotiate_challenge_for_a_host_not_listed_says_what_to_configure(
    tmp_path: Path, wiki: Wiki
) -> None:
    wiki.mode = "negotiate"
    tokens = Tokens()
    host, _ = make_host(tmp_path, services={"negotiate_tokens": tokens}, **settings(wiki))
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "tides"})
    assert result.status is ToolStatus.ERROR
    assert "asks for operating-system sign-in (Negotiate)" in result.content
    assert "add 127.0.0.1 there" in result.content
    assert tokens.asked == []
    assert wiki.authorizations == [None]


async def test_without_credentials_the_real_sign_in_names_the_host_and_the_set_up(
    tmp_path: Path, wiki: Wiki, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyspnego itself, on a machine with no Kerberos ticket (an empty credential cache)."""
    pytest.importorskip("spnego")
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'no-ticket'}")
    monkeypatch.delenv("NTLM_USER_FILE", raising=False)
    wiki.mode = "negotiate"
    host, _ = make_host(tmp_path, **settings(wiki, negotiate_hosts=[wiki.entry]))
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "tides"})
    assert result.status is ToolStatus.ERROR
    text = result.content or ""
    assert "sign-in to 127.0.0.1 failed: Kerberos gave no ticket for HTTP@127.0.0.1" in text
    assert "get a Kerberos ticket with `kinit`" in text
    assert "pyspnego: " in text  # pyspnego's own reason
    assert wiki.authorizations == [None]  # nothing was sent in place of a token


# --- trust and the tools it requires --------------------------------------------------------------


async def test_only_trusted_providers_are_offered_it_and_each_search_checks_again(
    tmp_path: Path, wiki: Wiki
) -> None:
    host, observer = make_host(tmp_path, trust="medium", **settings(wiki))
    _, model = await run_model(host, ["No."], "Search the wiki")
    assert [f.name for f in model.requests[0].functions] == ["read_web_page"]
    (omitted,) = [e for e in observer.of_kind("tool_omitted") if e.tool == "search_confluence"]  # type: ignore[attr-defined]
    assert "needs a provider trusted at least 'high'" in omitted.reason  # type: ignore[attr-defined]
    # A call that reaches the tool with such a provider (from Python) is refused before any
    # request.
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "tides"})
    assert result.status is ToolStatus.BLOCKED
    assert "trusted at least 'high' ([tools.web] confluence_trust)" in result.content
    assert wiki.searches == []


async def test_the_trust_level_is_a_setting(tmp_path: Path, wiki: Wiki) -> None:
    host, _ = make_host(tmp_path, trust="high", **settings(wiki, confluence_trust="self_hosted"))
    assert host.tools["search_confluence"].min_provider_trust == TrustLevel.SELF_HOSTED
    result = await ToolCallingLoop(host).call("search_confluence", {"query": "tides"})
    assert result.status is ToolStatus.BLOCKED


async def test_selecting_it_selects_read_web_page_which_reads_a_result(
    tmp_path: Path, wiki: Wiki
) -> None:
    wiki.mode = "negotiate"
    tokens = Tokens()
    host, _ = make_host(
        tmp_path,
        trust="high",
        enable=("search_confluence",),
        services={"negotiate_tokens": tokens},
        **settings(wiki, negotiate_hosts=[wiki.entry], private_hosts_trust="high"),
    )
    handbook = f"{wiki.base}/display/DOC/Tide+gauge+handbook"
    run, model = await run_model(
        host,
        [search("handbook"), tool_call("read_web_page", {"url": handbook}), "Found it."],
        "Find the gauge handbook",
    )
    assert [f.name for f in model.requests[0].functions] == ["read_web_page", "search_confluence"]
    found, page = results(run)
    assert found.data["results"][0]["url"] == handbook
    assert page.status is ToolStatus.OK, page.content
    assert "harmonic analysis & the datum" in page.content
    assert page.required_trust == TrustLevel.HIGH
    assert tokens.asked == ["127.0.0.1", "127.0.0.1"]


def test_settings_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"negotiate_hosts lists 'wiki\.corp'.*list it in both"):
        WebSettings(negotiate_hosts=("wiki.corp",))
    with pytest.raises(ValueError, match=r"confluence_url = 'wiki\.corp'"):
        WebSettings(confluence_url="wiki.corp")
    with pytest.raises(ValueError, match=r"confluence_url = .*without user, query or fragment"):
        WebSettings(confluence_url="https://wiki.corp/?os_authType=basic")
    with pytest.raises(ValueError, match=r"ca_file = .*that exists"):
        WebSettings(ca_file=str(tmp_path / "nowhere.pem"))
    with pytest.raises(ValueError, match="confluence_trust = 'sky'"):
        WebSettings(confluence_trust="sky")
    assert WebSettings.coerce({"negotiate_hosts": ["w"], "private_hosts": ["w"]}).negotiate_hosts
