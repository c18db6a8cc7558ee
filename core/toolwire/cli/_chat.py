"""``toolwire chat``: a conversation on a terminal, turn after turn, with live tool-call cards.

Input is read with prompt_toolkit (line editing, history kept beside the conversations) when
stdin and stdout are terminals, and line by line otherwise; output goes through the same
:class:`~toolwire.cli._render.TerminalRenderer` as ``toolwire run``. prompt_toolkit is imported
here only, so no other command pays for it.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TextIO

import attrs

from ..chat import Grant, Grants, GrantStore, count_message, tool_server
from ..elicitation import eliciting
from ..loop._run import Decision, DeferredRequest, Run
from ..messages import AssistantMessage, Message, UserMessage
from ..usage import describe_usage
from ._chats import ChatStore, ChatStoreError, Conversation, chats_directory
from ._elicit import TerminalElicitor
from ._render import ApprovalPrompter, TerminalRenderer, _is_terminal, on_resize, title_for
from ._text import inert

if TYPE_CHECKING:
    from ..host._host import Host

LAST = ""
"""``--continue`` without an id: the most recent conversation."""

PROMPT = "› "
_EXIT_WORDS = frozenset({"/exit", "/quit"})
_CHOICES = ("auto", "none", "required")
HELP = """Commands:
  /tool NAME        the next message may call only the tool NAME
  /tools none       the next message may call no tool (also: auto, required)
  /retry            run the last turn again from where it stopped (after an error)
  /grants           the calls that run without asking; /revoke N withdraws one
  /exit             leave (Ctrl-D too); Ctrl-C cancels a running turn
"""


class _Reader(Protocol):
    async def read(self, prompt: str) -> str | None:
        """One line (None at the end of input); Ctrl-C raises KeyboardInterrupt."""


class _TerminalReader:
    """prompt_toolkit: line editing, and history in a file shared by every conversation."""

    def __init__(self, store: ChatStore, toolbar: Callable[[str], str] | None = None) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.application.current import get_app
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        history: Any
        try:
            store.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            history = FileHistory(str(store.history_file))
        except OSError:
            history = InMemoryHistory()

        def bottom() -> str:
            # The count of the message being written, redrawn as it is typed.
            return toolbar(get_app().current_buffer.text) if toolbar is not None else ""

        self._session: Any = PromptSession(
            history=history, bottom_toolbar=bottom if toolbar is not None else None
        )
        self._plain: Any = PromptSession()  # approval answers stay out of the history

    async def read(self, prompt: str) -> str | None:
        try:
            text: str = await self._session.prompt_async(prompt)
        except EOFError:
            return None
        return text

    async def answer(self, question: str) -> str | None:
        try:
            text: str = await self._plain.prompt_async(question)
        except EOFError:
            return None
        return text


class _LineReader:
    """Plain lines from a stream that is not a terminal (scripts, pipes)."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self._stdin = stdin
        self._stdout = stdout

    async def read(self, prompt: str) -> str | None:
        self._stdout.write(prompt)
        self._stdout.flush()
        line = await asyncio.to_thread(self._stdin.readline)
        return line.rstrip("\n") if line else None

    answer = read


class ChatSession:
    """One conversation: each line typed is a turn that continues the conversation's messages.

    A turn runs as one ``stream`` of the host's loop; calls that need approval are asked inline
    (approve, deny with a message, edit the arguments as JSON). Ctrl-C during a turn cancels it
    (every call of the turn is answered as cancelled) and the chat goes on. After every turn the
    conversation is saved, so ``toolwire chat --continue`` picks it up again.
    """

    def __init__(
        self,
        host: Host,
        store: ChatStore,
        conversation: Conversation,
        *,
        stdin: TextIO,
        stdout: TextIO,
        expanded: bool = False,
    ) -> None:
        self.host = host
        self.store = store
        self.conversation = conversation
        self.out = stdout
        self.messages: list[Message] = []
        if conversation.run is not None:
            self.messages = list(Run.from_json(conversation.run).messages)
        self.tool_choice = "auto"  # for the next message only
        self._counts: dict[str, int] = {}
        interactive = _is_terminal(stdin) and _is_terminal(stdout)
        self._reader: _TerminalReader | _LineReader = (
            _TerminalReader(store, self._toolbar) if interactive else _LineReader(stdin, stdout)
        )
        self.renderer = TerminalRenderer(
            stdout, tool_of=host.tools.get, expanded=expanded, title_of=title_for(host)
        )
        self.grants = Grants.restore(GrantStore(), conversation.grants, config=host.config)
        self._prompter = ApprovalPrompter(
            stdin,
            stdout,
            sensitive=self._sensitive,
            ask=self._answer,
            renderer=self.renderer,
            tool_of=host.tools.get,
            grants=self.grants,
            server_of=lambda tool: tool_server(host, tool),
        )
        self._interrupt: Callable[[], Any] | None = None
        self._elicitor = TerminalElicitor(stdout, self._answer, self.renderer.pause)

    def _toolbar(self, text: str) -> str:
        """``≈ N tokens + M for instructions`` for the message being written."""
        choice = self.tool_choice
        if choice not in self._counts:
            self._counts[choice] = count_message(self.host, "", tool_choice=choice).instructions
        count = count_message(self.host, text, tool_choice="none").message
        tools = "" if choice == "auto" else f" · tools: {choice}"
        return f" ≈ {count} tokens + {self._counts[choice]} for instructions{tools} · /help "

    def _sensitive(self, name: str) -> frozenset[str]:
        tool = self.host.tools.get(name)
        return tool.sensitive_arguments if tool is not None else frozenset()

    async def _answer(self, question: str) -> str | None:
        try:
            return await self._reader.answer(question)
        except KeyboardInterrupt:
            # Ctrl-C at an approval question cancels the turn, like Ctrl-C anywhere in it.
            if self._interrupt is not None:
                self._interrupt()
            await asyncio.Future()  # cancelled with the turn
            raise  # pragma: no cover - the future never completes

    async def _approve(self, request: DeferredRequest) -> Decision | None:
        return await self._prompter(request)

    async def run(self) -> int:
        """Read and answer lines until the end of input or ``/exit``; returns the exit code."""
        out = self.out
        if self.messages:
            self._recap()
        else:
            out.write("New conversation. Ctrl-C cancels a turn; Ctrl-D or /exit leaves.\n")
        out.flush()
        while True:
            try:
                line = await self._reader.read(PROMPT)
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line
            if line is None or line.strip() in _EXIT_WORDS:
                break
            text = line.strip()
            if text.startswith("/") and await self.command(text):
                continue
            if text:
                choice, self.tool_choice = self.tool_choice, "auto"
                await self.turn(text, tool_choice=choice)
        out.write(f"Saved as {self.conversation.id}; `toolwire chat --continue` goes on.\n")
        out.flush()
        return 0

    def _recap(self) -> None:
        title = inert(self.conversation.title or "untitled", one_line=True)
        self.out.write(
            f"Continuing conversation {self.conversation.id} ({title!r}, "
            f"{len(self.messages)} messages):\n"
        )
        self.renderer.replay(self.messages, PROMPT)
        self.out.write("\n")

    async def command(self, text: str) -> bool:
        """Carry out a ``/command``; False when ``text`` is no command (it is sent as is)."""
        word, _, rest = text.partition(" ")
        rest = rest.strip()
        out = self.out
        if word == "/help":
            out.write(HELP)
        elif word == "/tool" and rest:
            if rest not in self.host.tools:
                known = ", ".join(sorted(self.host.tools)) or "none"
                out.write(f"No tool named {inert(rest)!r}; tools: {known}\n")
            else:
                self.tool_choice = rest
                out.write(f"The next message may call only {rest}.\n")
        elif word == "/tools" and rest in _CHOICES:
            self.tool_choice = rest
            out.write(f"The next message: tool choice {rest}.\n")
        elif word in ("/tool", "/tools"):
            out.write("Use /tool NAME, or /tools auto|none|required.\n")
        elif word == "/retry":
            if not self.messages or isinstance(self.messages[-1], AssistantMessage):
                out.write("Nothing to retry: the last turn was answered.\n")
            else:
                await self.turn(None)
        elif word == "/grants":
            listing = self.grants.listing()
            if not listing:
                out.write("No grants: every call that asks first waits for you.\n")
            for number, grant in enumerate(listing, 1):
                where = "always" if grant["lasting"] else "this conversation"
                out.write(f"  {number}. {inert(grant['label'])} ({where})\n")
        elif word == "/revoke":
            listing = self.grants.listing()
            try:
                chosen = listing[int(rest) - 1]
            except (ValueError, IndexError):
                out.write(f"Give the number /grants shows (1 to {len(listing)}).\n")
            else:
                revoked = Grant.from_json(chosen)
                self.grants.revoke(revoked, lasting=chosen["lasting"])
                self._keep_grants()
                out.write(f"Revoked: {inert(revoked.label)}.\n")
        else:
            return False
        out.flush()
        return True

    def _keep_grants(self) -> None:
        self.conversation = attrs.evolve(
            self.conversation,
            grants=tuple(self.grants.pairs()),
        )

    async def turn(self, text: str | None, tool_choice: str = "auto") -> Run | None:
        """Run one turn for ``text`` (None: again from the conversation's last message, as
        ``/retry`` does): render it, save the conversation; returns the run."""
        loop = self.host.new_loop()
        messages = [*self.messages, UserMessage(text)] if text is not None else self.messages
        stream = loop.stream(messages, approval=self._approve, tool_choice=tool_choice)
        renderer = self.renderer

        async def consume() -> None:
            with on_resize(renderer):
                async for event in stream:
                    renderer(event)

        # A tool's question to the person (an MCP server's elicitation) is asked here.
        with eliciting(self._elicitor):
            task = asyncio.ensure_future(consume())
        self._interrupt = task.cancel
        event_loop = asyncio.get_running_loop()
        handled = _on_interrupt(event_loop, task.cancel)
        try:
            await asyncio.wait({task})
        finally:
            self._interrupt = None
            if handled:
                event_loop.remove_signal_handler(signal.SIGINT)
        if task.cancelled():
            await stream.aclose()
            try:
                async for event in stream:  # the rest: calls answered as cancelled, the end
                    renderer(event)
            except Exception as exc:
                self._failed(exc)
        elif task.exception() is not None:
            self._failed(task.exception())
        run = stream.run
        if run is not None:
            renderer.settle(run)
            spent = describe_usage(run.usage, run.cost)
            if spent:
                renderer.note(spent)
        renderer.pause()
        if run is not None:
            self.messages = list(run.messages)
            self._keep_grants()
            self.conversation = self.store.save(
                self.conversation,
                run.to_json(redact=self._sensitive, events=False),
                first_text=text or "",
            )
        self.out.write("\n")
        self.out.flush()
        return run

    def _failed(self, exc: BaseException | None) -> None:
        self.renderer.pause()
        self.out.write(f"toolwire: the turn failed: {type(exc).__name__}: {exc}\n")


def _on_interrupt(event_loop: asyncio.AbstractEventLoop, cancel: Callable[[], Any]) -> bool:
    """Route SIGINT to ``cancel`` while a turn runs (False where signals cannot be handled)."""
    try:
        event_loop.add_signal_handler(signal.SIGINT, cancel)
    except (NotImplementedError, RuntimeError, ValueError):
        return False
    return True


def _has_prompt_toolkit() -> bool:
    import importlib.util

    return importlib.util.find_spec("prompt_toolkit") is not None


def list_conversations(store: ChatStore, out: TextIO) -> int:
    """``toolwire chat --list``: the saved conversations, most recent first."""
    import time

    found = store.conversations()
    if not found:
        out.write(f"No saved conversations in {store.directory}.\n")
        return 0
    for conversation in found:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(conversation.updated))
        out.write(f"{conversation.id}  {when}  {conversation.title}\n")
    return 0


def run_chat(
    host: Host,
    *,
    continue_id: str | None = None,
    list_only: bool = False,
    expanded: bool = False,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """``toolwire chat``: converse with the configured provider; returns the exit code.

    :param continue_id: a conversation id to continue, :data:`LAST` for the most recent one,
        None for a new conversation.
    :param list_only: print the saved conversations instead.
    :param expanded: cards show every argument and result in full.
    :returns: 0 when the chat ended normally, 2 when the conversation or setup is unusable.
    """
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    store = ChatStore(chats_directory(host.config.ledger))
    if list_only:
        return list_conversations(store, stdout)
    try:
        if continue_id is None:
            conversation = store.new()
        elif continue_id == LAST:
            conversation = store.last()
        else:
            conversation = store.load(continue_id)
    except ChatStoreError as exc:
        stderr.write(f"toolwire: {exc}\n")
        return 2

    if _is_terminal(stdin) and _is_terminal(stdout) and not _has_prompt_toolkit():
        stderr.write(
            "toolwire: `toolwire chat` on a terminal needs prompt_toolkit for line editing; "
            "install it with: pip install 'toolwire[chat]'\n"
        )
        return 2

    async def main() -> int:
        try:
            session = ChatSession(
                host, store, conversation, stdin=stdin, stdout=stdout, expanded=expanded
            )
            return await session.run()
        finally:
            await host.aclose()

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        stderr.write("toolwire: interrupted\n")
        return 1
    except Exception as exc:
        if type(exc).__name__ in ("HostError", "ConfigError"):
            stderr.write(f"toolwire: {exc}\n")
            return 2
        raise
