"""``toolwire chat`` in a real pseudo-terminal, against a loopback fake provider.

The chat runs as its own process on a pty (pexpect), exactly as a person runs it; the fake
Chat Completions server runs in a thread of the test and streams long arguments slowly.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pexpect
import pytest

from toolwire.cli._render import ARGUMENT_LIMIT
from toolwire.testing import ErrorReply, FakeOpenAIChatServer, Reply, ScriptItem, tool_call

CHILD = Path(__file__).with_name("chat_child.py")
LONG_TEXT = "".join(f"line {i:04d} of a long streamed argument. " for i in range(80))
TIMEOUT = 60


class Provider:
    """A fake provider serving on 127.0.0.1 from its own thread and event loop."""

    def __init__(self, script: Sequence[ScriptItem]) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.server = FakeOpenAIChatServer(list(script), chunk_size=8)
        self._call(self.server.start())

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(TIMEOUT)

    def add(self, *items: ScriptItem) -> None:
        self._loop.call_soon_threadsafe(self.server.add, *items)

    @property
    def bodies(self) -> list[Any]:
        return list(self.server.bodies)

    def close(self) -> None:
        self._call(self.server.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(TIMEOUT)
        self._loop.close()


@pytest.fixture
def provider() -> Iterator[Any]:
    started: list[Provider] = []

    def start(script: Sequence[ScriptItem]) -> Provider:
        started.append(Provider(script))
        return started[-1]

    yield start
    for item in started:
        item.close()


def write_config(tmp_path: Path, provider: Provider, *, trust: str = "high") -> Path:
    config = tmp_path / f"toolwire-{trust}.toml"
    config.write_text(
        '[plugins]\nenable = ["openai"]\n'
        '[provider]\nadapter = "openai-chat"\n'
        f'base_url = "{provider.server.base_url}"\nmodel = "fake"\nstream = true\n'
        f'trust = "{trust}"\n'
        f'[ledger]\npath = "{tmp_path / "data" / "ledger.sqlite3"}"\n',
        encoding="utf-8",
    )
    return config


EDITOR = Path(__file__).with_name("edit_arguments.py")


def chat_env(home: Path, **more: str) -> dict[str, str]:
    """The environment of a chat: no colour, its own config, state and data folders."""
    env = {
        **os.environ,
        "TERM": "xterm",
        "NO_COLOR": "1",  # the screen text without colour codes between its pieces
        "PROMPT_TOOLKIT_NO_CPR": "1",  # no cursor-position request the test would answer
        "PYTHONUNBUFFERED": "1",
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "EDITOR": "",
        "VISUAL": "",
        "PAGER": "cat",
    }
    env.update(more)
    return env


def spawn(
    config: Path,
    *options: str,
    env: dict[str, str] | None = None,
    dimensions: tuple[int, int] = (50, 200),
) -> pexpect.spawn:
    child = pexpect.spawn(
        sys.executable,
        [str(CHILD), "--config", str(config), "chat", *options],
        env=env if env is not None else chat_env(config.parent),
        encoding="utf-8",
        dimensions=dimensions,
        timeout=TIMEOUT,
    )
    return child


def ask(child: pexpect.spawn, text: str) -> None:
    child.expect_exact("›")  # prompt_toolkit draws the space as a cursor move
    child.send(text + "\r")


def leave(child: pexpect.spawn) -> str:
    child.expect_exact("›")  # prompt_toolkit draws the space as a cursor move
    child.send("/exit\r")
    child.expect_exact("Saved as ")
    child.expect(r"[0-9a-f]{12}")
    conversation: str = child.after
    child.expect(pexpect.EOF)
    child.wait()
    assert child.exitstatus == 0, child.before
    return conversation


def tool_messages(body: Any) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_arguments_fill_in_while_they_stream_then_progress_moves(tmp_path: Path, provider: Any):
    fake = provider(
        [Reply(turn=tool_call("slow_echo", {"text": LONG_TEXT}), pace=0.004), "Echoed."]
    )
    child = spawn(write_config(tmp_path, fake))
    ask(child, "Echo a long text, please.")
    child.expect_exact("⋯ the model is deciding…")
    child.expect_exact("╭ 🐢 Slow echo (slow_echo) · read_only")
    child.expect_exact("│ text: line 0000 of a long streamed argument. line 0001")
    child.expect_exact("line 0010 of a long")
    # Part of the argument is on the screen; the call is not complete, nothing has run.
    assert "line 0079" not in child.before
    assert "step 1 of 5" not in child.before
    # A collapsed card shows the first ARGUMENT_LIMIT characters and counts the rest.
    shown, hidden = LONG_TEXT[:ARGUMENT_LIMIT], len(LONG_TEXT) - ARGUMENT_LIMIT
    child.expect_exact(f"{shown[-30:]} … (+{hidden} characters)")
    start = LONG_TEXT.index("line ", ARGUMENT_LIMIT)
    first_hidden = LONG_TEXT[start : start + 9]  # "line 00NN", wholly past the limit
    assert first_hidden not in child.before
    bars = []
    for step in range(1, 6):
        child.expect(rf"│ (█*░*) +(\d+)% step {step} of 5")
        bars.append((child.match.group(1).count("█"), int(child.match.group(2))))
    assert bars == [(4, 20), (8, 40), (12, 60), (16, 80), (20, 100)]
    child.expect_exact(f"╰ ✓ echo: {len(LONG_TEXT)} characters")
    child.expect_exact("Echoed.")
    leave(child)
    [first, second] = fake.bodies
    assert first["messages"] == [{"role": "user", "content": "Echo a long text, please."}]
    assert tool_messages(second) == [f"echo: {len(LONG_TEXT)} characters"]


def test_an_approval_is_answered_by_keystrokes(tmp_path: Path, provider: Any):
    fake = provider(
        [
            tool_call("write_note", {"path": "a.txt", "body": "hello"}),
            tool_call("write_note", {"path": "b.txt", "body": "bye"}),
            "Wrote one, skipped one.",
        ]
    )
    env = chat_env(tmp_path, EDITOR=f"{sys.executable} {EDITOR}")
    child = spawn(write_config(tmp_path, fake), env=env)
    ask(child, "Write two notes.")
    child.expect_exact("╭ Write note (write_note) · writes_files · asks first")
    child.expect_exact("write_note needs approval:")
    child.expect_exact("  path: a.txt")
    child.expect_exact("  body: hello")
    child.expect_exact("Run it? [y]es / [n]o / [e]dit / [s]end back / [a]llow from now on:")
    child.send("e\r")  # $EDITOR opens the arguments as indented JSON and edits them
    child.expect_exact("╰ ✓ wrote 5 characters to edited.txt")
    child.expect_exact("write_note needs approval:")
    child.expect_exact("  path: b.txt")
    child.expect_exact("Run it? [y]es / [n]o / [e]dit / [s]end back / [a]llow from now on:")
    child.send("maybe\r")
    child.expect_exact("Please answer one of [y]es / [n]o / [e]dit / [s]end back")
    child.send("n\r")
    child.expect_exact("Message for the model (empty for the default):")
    child.send("Not b.txt, please.\r")
    child.expect_exact("╰ ✗ Write note: denied: Not b.txt, please.")
    child.expect_exact("Wrote one, skipped one.")
    leave(child)
    assert tool_messages(fake.bodies[2]) == [
        "wrote 5 characters to edited.txt",
        "Not b.txt, please.",
    ]


def test_ctrl_c_cancels_the_turn_and_the_chat_goes_on(tmp_path: Path, provider: Any):
    fake = provider([tool_call("wait_forever", {"seconds": 600}), "Still here."])
    child = spawn(write_config(tmp_path, fake))
    ask(child, "Wait a long time.")
    child.expect_exact("│ seconds: 600")
    child.expect_exact("⏵ running…")
    child.sendintr()
    child.expect_exact("╰ ✗ ")
    child.expect_exact("[stopped: cancelled")
    assert len(fake.bodies) == 1
    ask(child, "Are you there?")
    child.expect_exact("Still here.")
    leave(child)
    [_, second] = fake.bodies
    # The cancelled call was answered before the next turn went out: no orphan call.
    assert len(tool_messages(second)) == 1
    assert "ancel" in tool_messages(second)[0]
    assert second["messages"][-1] == {"role": "user", "content": "Are you there?"}


def test_ctrl_c_at_an_approval_question_cancels_the_turn(tmp_path: Path, provider: Any):
    fake = provider([tool_call("write_note", {"path": "a.txt", "body": "x"}), "Fine."])
    child = spawn(write_config(tmp_path, fake))
    ask(child, "Write a note.")
    child.expect_exact("Run it? [y]es / [n]o / [e]dit / [s]end back")
    child.sendcontrol("c")
    child.expect_exact("[stopped: cancelled")
    ask(child, "Never mind.")
    child.expect_exact("Fine.")
    leave(child)
    assert len(tool_messages(fake.bodies[1])) == 1


def test_continue_picks_up_the_conversation_and_its_trust(tmp_path: Path, provider: Any):
    fake = provider([tool_call("medical_record", {"patient": "Ann"}), "Ann has 0+."])
    trusted = write_config(tmp_path, fake, trust="high")
    child = spawn(trusted)
    ask(child, "What is Ann's blood type?")
    child.expect_exact("╰ ✓ Ann: blood type 0+")
    child.expect_exact("Ann has 0+.")
    conversation = leave(child)
    assert len(fake.bodies) == 2

    # A new process, a weaker provider: the conversation holds a result it may not see.
    weaker = write_config(tmp_path, fake, trust="medium")
    child = spawn(weaker, "--continue")
    child.expect_exact(f"Continuing conversation {conversation}")
    # The earlier turns come back with their cards: the prompt, the call, its result, the answer.
    child.expect_exact("› What is Ann's blood type?")
    child.expect_exact("╭ Medical record (medical_record) · read_only")
    child.expect_exact("│ patient: Ann")
    child.expect_exact("╰ ✓ Ann: blood type 0+")
    child.expect_exact("Ann has 0+.")
    ask(child, "And Bob's?")
    child.expect_exact("[stopped: trust: ")
    child.expect_exact("medical_record call")
    child.expect_exact("of the conversation")
    leave(child)
    assert len(fake.bodies) == 2  # nothing was sent to it

    # The trusted provider goes on with the whole conversation, by id.
    fake.add("Bob's record is not on file.")
    child = spawn(trusted, "--continue", conversation)
    ask(child, "And Bob's?")
    child.expect_exact("Bob's record is not on file.")
    assert leave(child) == conversation
    sent = fake.bodies[2]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "user", "user"]
    assert sent[2]["content"] == "Ann: blood type 0+"


def test_continue_names_a_conversation_that_does_not_exist(tmp_path: Path, provider: Any):
    fake = provider([])
    child = spawn(write_config(tmp_path, fake), "--continue", "0123456789ab")
    child.expect_exact("toolwire: no conversation '0123456789ab' in ")
    child.expect_exact("there are no saved conversations")
    child.expect(pexpect.EOF)
    child.wait()
    assert child.exitstatus == 2


# -- the screen as a person sees it, in tmux, at 36 and 160 columns ---------------------------

COLUMNS = (36, 160)
LONG_BODY = "\n".join(
    f"Line {i:03d}: the quick brown fox jumps over the lazy dog." for i in range(60)
)


class Screen:
    """``toolwire chat`` in a tmux pane of its own server: type into it, read what it shows."""

    def __init__(self, config: Path, env: dict[str, str], columns: int, rows: int = 40) -> None:
        self.socket = f"toolwire-test-{os.getpid()}-{id(self)}"
        self.tmux = shutil.which("tmux")
        if self.tmux is None:
            pytest.skip("tmux is missing: apt-get install -y tmux (.ci/run does)")
        variables = [f"{k}={v}" for k, v in env.items() if k in _PASSED or k.startswith("XDG_")]
        command = shlex.join(
            ["env", *variables, sys.executable, str(CHILD), "--config", str(config), "chat"]
        )
        self._tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "chat",
            "-x",
            str(columns),
            "-y",
            str(rows),
            command,
        )
        self._tmux("set-option", "-t", "chat", "history-limit", "20000")

    def _tmux(self, *args: str) -> str:
        assert self.tmux is not None
        done = subprocess.run(
            [self.tmux, "-L", self.socket, *args], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def lines(self, joined: bool = True) -> list[str]:
        """Every line of the pane and its history (wrapped lines joined unless told)."""
        flags = ["-J"] if joined else []
        return self._tmux("capture-pane", "-p", *flags, "-t", "chat", "-S", "-").splitlines()

    def text(self) -> str:
        return "\n".join(self.lines())

    def wait_for(self, text: str, timeout: float = TIMEOUT) -> str:
        """The screen once it shows ``text`` (polled: tmux has no event to wait on)."""
        deadline = time.monotonic() + timeout
        while True:
            shown = self.text()
            if text in shown:
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never showed; the screen:\n{shown}")
            time.sleep(0.05)

    def keys(self, text: str, *, literal: bool = True) -> None:
        self._tmux("send-keys", "-t", "chat", *(["-l"] if literal else []), text)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "chat", "-l", text)
        self._tmux("send-keys", "-t", "chat", "Enter")

    def resize(self, columns: int) -> None:
        self._tmux("resize-window", "-t", "chat", "-x", str(columns))

    def close(self) -> None:
        subprocess.run([self.tmux or "tmux", "-L", self.socket, "kill-server"], check=False)


# tmux answers cursor-position requests: prompt_toolkit draws its bottom toolbar with them.
_PASSED = frozenset(
    {
        "TERM",
        "NO_COLOR",
        "PYTHONUNBUFFERED",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "PYTHONPATH",
        "VIRTUAL_ENV",
    }
)


@pytest.fixture(params=COLUMNS, ids=lambda c: f"{c}cols")
def columns(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def screen() -> Iterator[Any]:
    opened: list[Screen] = []

    def start(config: Path, env: dict[str, str], columns: int, rows: int = 40) -> Screen:
        opened.append(Screen(config, env, columns, rows))
        return opened[-1]

    yield start
    for item in opened:
        item.close()


def bars(lines: list[str]) -> list[str]:
    """Progress-bar lines left on the screen (a transient line drawn over is gone)."""
    return [line for line in lines if re.search(r"\d+% ", line) and "│" in line]


def test_each_result_and_progress_line_names_its_call(
    tmp_path: Path, provider: Any, screen: Any, columns: int
):
    fake = provider(
        [
            [
                tool_call("slow_echo", {"text": "first"}),
                tool_call("medical_record", {"patient": "Ann"}),
            ],
            "Both done.",
        ]
    )
    env = chat_env(tmp_path, NO_COLOR="1")
    chat = screen(write_config(tmp_path, fake), env, columns)
    chat.wait_for("›")
    chat.type("Run both.")
    shown = chat.wait_for("% ")
    # The bar belongs to the running call, and fits the terminal's width.
    (bar,) = bars(chat.lines(joined=False))
    assert len(bar) < columns
    if columns > 100:
        assert bar.startswith("│ Slow echo: ")
    shown = chat.wait_for("Both done.")
    assert "╰ ✓ Slow echo: echo: 5 characters" in shown
    assert "╰ ✓ Medical record: Ann: blood type 0+" in shown
    assert bars(chat.lines()) == []  # no stale progress line


def test_resizing_while_a_bar_moves_leaves_no_stale_line(
    tmp_path: Path, provider: Any, screen: Any
):
    fake = provider([tool_call("slow_echo", {"text": "resize me"}), "Resized."])
    chat = screen(write_config(tmp_path, fake), chat_env(tmp_path), 160)
    chat.wait_for("›")
    chat.type("Echo while I resize.")
    chat.wait_for("20% ")
    chat.resize(36)
    chat.wait_for("40% ")
    chat.resize(50)
    chat.wait_for("60% ")
    chat.resize(36)
    chat.wait_for("Resized.")
    assert bars(chat.lines()) == []
    assert bars(chat.lines(joined=False)) == []


def test_an_approval_shows_every_argument_and_edits_in_the_editor(
    tmp_path: Path, provider: Any, screen: Any, columns: int
):
    fake = provider([tool_call("write_note", {"path": "a.txt", "body": LONG_BODY}), "Written."])
    env = chat_env(tmp_path, EDITOR=f"{sys.executable} {EDITOR}")
    chat = screen(write_config(tmp_path, fake), env, columns, rows=30)
    chat.wait_for("›")
    chat.type("Write the long note.")
    chat.wait_for("more lines: [v] shows every line")
    shown = chat.wait_for("Run it?")  # prompt_toolkit wraps its question itself
    assert "write_note needs approval:" in shown
    assert "more lines: [v] shows every line" in shown
    assert "Line 059" not in shown.split("needs approval")[-1]
    chat.type("v")  # $PAGER (cat here) shows every line
    shown = chat.wait_for("Line 059: the quick brown fox")
    chat.type("e")  # $EDITOR gets the arguments as indented JSON
    shown = chat.wait_for("Written.")
    assert f"wrote {len(LONG_BODY)} characters to edited.txt" in shown


def test_the_web_chats_controls_work_in_the_terminal(
    tmp_path: Path, provider: Any, screen: Any, columns: int
):
    fake = provider(
        [
            "Plain answer.",
            tool_call("slow_echo", {"text": "x"}),
            "Echoed.",
            ErrorReply(status=400, message="a bad day"),
            "Recovered.",
            tool_call("write_note", {"path": "a.txt", "body": "one"}),
            tool_call("write_note", {"path": "b.txt", "body": "two"}),
            "**Bold** point\n\n- item one\n- item `two`\n",
        ]
    )
    config = write_config(tmp_path, fake)
    config.write_text(
        config.read_text(encoding="utf-8")
        + '[i18n]\nlocale = "it"\n[i18n.it.slow_echo]\ntitle = "Eco lento"\n',
        encoding="utf-8",
    )
    env = chat_env(tmp_path)
    env.pop("NO_COLOR", None)  # the answer's Markdown is styled with colour on
    chat = screen(config, env, columns)
    chat.wait_for("›")
    chat.type("/tools none")
    chat.wait_for("The next message: tool choice none.")
    chat.keys("Answer plainly.")  # the count of the message being written, as it is typed
    chat.wait_for("≈ 4 tokens + 0")
    chat.keys("Enter", literal=False)
    chat.wait_for("Plain answer.")
    assert fake.bodies[0]["tool_choice"] == "none"
    chat.type("/tool slow_echo")
    chat.wait_for("The next message may call only slow_echo.")
    chat.type("Echo x.")
    shown = chat.wait_for("Echoed.")
    assert fake.bodies[1]["tool_choice"] == {"type": "function", "function": {"name": "slow_echo"}}
    assert "╭ 🐢 Eco lento (slow_echo)" in shown  # the title [i18n] gives
    chat.type("And now?")
    chat.wait_for("[stopped: error")
    chat.type("/retry")
    chat.wait_for("Recovered.")
    assert fake.bodies[4]["messages"][-1] == {"role": "user", "content": "And now?"}
    chat.type("Write two notes.")
    chat.wait_for("Run it?")
    chat.type("a")
    chat.wait_for("Allow which calls?")
    chat.type("t")
    chat.wait_for("For [c] this")
    chat.type("c")
    chat.wait_for("runs without asking: tool write_note is allowed in this conversation")
    shown = chat.wait_for("item")
    answer = shown.split("runs without asking")[-1]
    assert "Bold point" in answer
    assert "**" not in answer
    assert "• item two" in answer
    chat.type("/grants")
    chat.wait_for("1. tool write_note (this conversation)")
    chat.type("/revoke 1")
    chat.wait_for("Revoked: tool write_note.")
    chat.type("/grants")
    chat.wait_for("No grants: every call that asks first waits for you.")
