"""The conversations of ``toolwire chat`` on disk, and the command with piped input."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire.cli._chats import ChatStore, ChatStoreError, chats_directory
from toolwire.config import LedgerConfig


def test_conversations_live_beside_the_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert chats_directory(LedgerConfig(path=str(tmp_path / "x" / "l.sqlite3"))) == (
        tmp_path / "x" / "chats"
    )
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert chats_directory(LedgerConfig()) == tmp_path / "data" / "toolwire" / "chats"


def test_a_saved_conversation_is_whole_private_and_listed_newest_first(tmp_path: Path):
    store = ChatStore(tmp_path / "chats")
    first = store.save(store.new(), {"messages": []}, first_text="  What is\nthe time?  ")
    second = store.save(store.new(), {"messages": []}, first_text="x" * 100)
    assert first.title == "What is the time?"
    assert second.title == "x" * 59 + "…"
    path = tmp_path / "chats" / f"{first.id}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in (tmp_path / "chats").iterdir() if p.name.startswith(".")] == []
    assert [c.id for c in store.conversations()] == [second.id, first.id]
    assert store.last().id == second.id
    again = store.save(first, {"messages": [{"role": "user", "content": "hi"}]}, first_text="no")
    assert again.title == "What is the time?"  # the first text names it for good
    assert store.load(first.id).run == {"messages": [{"role": "user", "content": "hi"}]}
    assert store.last().id == first.id


def test_bad_ids_and_damaged_files_are_named(tmp_path: Path):
    store = ChatStore(tmp_path / "chats")
    with pytest.raises(ChatStoreError, match=r"no saved conversation in .* to continue"):
        store.last()
    with pytest.raises(ChatStoreError, match=r"'\.\./etc' is not a conversation id \(12 hex"):
        store.load("../etc")
    saved = store.save(store.new(), {"messages": []}, first_text="hello")
    with pytest.raises(
        ChatStoreError, match=rf"no conversation 'aaaaaaaaaaaa'.*{saved.id} \('hello'\)"
    ):
        store.load("aaaaaaaaaaaa")
    damaged = tmp_path / "chats" / "bbbbbbbbbbbb.json"
    damaged.write_text('{"id": "bbbbbbbbbbbb", "run": [1]', encoding="utf-8")
    with pytest.raises(
        ChatStoreError, match=r"cannot read the conversation in .*bbbbbbbbbbbb\.json"
    ):
        store.load("bbbbbbbbbbbb")
    damaged.write_text(json.dumps({"id": "b", "created": 1, "updated": 2, "run": [1]}))
    with pytest.raises(ChatStoreError, match="'run' is a list, expected an object"):
        store.load("bbbbbbbbbbbb")
    assert [c.id for c in store.conversations()] == [saved.id]  # the damaged one is left out


def test_chat_with_piped_input_is_plain_and_saved(tmp_path: Path):
    config = tmp_path / "toolwire.toml"
    config.write_text(
        '[plugins]\nenable = ["basics"]\n'
        '[provider]\nadapter = "scripted"\n[provider.options]\nscript = [\n'
        '  { tool_calls = [{ name = "calculator", arguments = { expression = "2+40" } }] },\n'
        '  "The sum is 42.",\n  "Goodbye.",\n]\n'
        f'[ledger]\npath = "{tmp_path / "data" / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )

    def chat(*options: str, text: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolwire", "--config", str(config), "chat", *options],
            input=text,
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = chat(text="add 2 and 40\nthanks\n")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert "╭ calculator · read_only\n│ expression: 2+40\n╰ ✓ 2+40 = 42\nThe sum is 42.\n" in (
        done.stdout
    )
    assert "Goodbye." in done.stdout
    [saved] = list((tmp_path / "data" / "chats").glob("*.json"))
    listed = chat("--list", text="")
    assert listed.stdout.startswith(f"{saved.stem}  ")
    assert listed.stdout.rstrip().endswith("add 2 and 40")
    missing = chat("--continue", "cccccccccccc", text="")
    assert missing.returncode == 2
    assert "no conversation 'cccccccccccc'" in missing.stderr
