"""What both chats share: the token estimate and the file of lasting grants."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolwire
from toolwire import Host
from toolwire.chat import Grant, GrantError, GrantStore, count_message
from toolwire.usage import estimate_tokens


def test_the_estimate_counts_words_marks_and_unspaced_scripts() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("Answer plainly.") == 4
    assert estimate_tokens("東京") == 2
    assert estimate_tokens("a " * 100) == 100


def test_a_message_is_counted_with_the_instructions_of_the_tools_it_would_offer() -> None:
    @toolwire.tool(side_effects=["read_only"], instructions="Always cite the page you read.")
    def read(url: str) -> str:
        """Read a page.

        Args:
            url: The page.
        """
        return url

    host = Host.load(None)
    host.add_tool(read)
    count = count_message(host, "Read it.")
    assert count.message == 3
    assert count.instructions == estimate_tokens("Always cite the page you read.")
    assert count.total == count.message + count.instructions
    assert count_message(host, "Read it.", tool_choice="none").instructions == 0
    assert count_message(host, "Read it.", tool_choice="other").instructions == 0


def test_lasting_grants_round_trip_through_their_toml_file(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "toolwire" / "grants.toml")
    assert store.grants() == []
    store.add(Grant("tool", "write_note"))
    store.add(Grant("server", 'files "quoted" ünïcode'))
    store.add(Grant("tool", "write_note"))
    assert store.grants() == [
        Grant("tool", "write_note"),
        Grant("server", 'files "quoted" ünïcode'),
    ]
    assert (store.path.stat().st_mode & 0o777) == 0o600
    assert store.remove(Grant("tool", "write_note"))
    assert not store.remove(Grant("tool", "write_note"))
    assert store.grants() == [Grant("server", 'files "quoted" ünïcode')]


def test_a_grant_is_refused_for_what_cannot_be_granted() -> None:
    with pytest.raises(GrantError, match="side effect 'teleport'"):
        Grant("side_effect", "teleport")
    with pytest.raises(GrantError, match="scope"):
        Grant("everything", "x")  # type: ignore[arg-type]
    with pytest.raises(GrantError, match="printable"):
        Grant("tool", "bad\x1b[2J")


def test_a_grants_file_that_cannot_be_read_says_which(tmp_path: Path) -> None:
    path = tmp_path / "grants.toml"
    path.write_text("[[grant]]\nscope = 1\n", encoding="utf-8")
    with pytest.raises(GrantError, match=str(path)):
        GrantStore(path).grants()
