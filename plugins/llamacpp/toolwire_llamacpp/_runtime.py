"""The loaded model: prompt formatting, and generation in a worker thread, cancellable per token."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import attrs

from ._grammar import CALL_OPEN
from ._repeats import RepeatStop
from ._settings import LlamaCppError, LlamaCppSettings
from ._states import PromptStates

if TYPE_CHECKING:
    import llama_cpp


@attrs.frozen
class ChatTurn:
    """One turn as a chat template receives it."""

    role: str
    content: str


@attrs.frozen(kw_only=True)
class Piece:
    """Generated text; the last piece of a generation carries the finish reason and counts,
    and the CPU the generation took (on the thread that runs the model)."""

    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cpu_seconds: float = 0.0


def chatml(turns: Sequence[ChatTurn]) -> str:
    """The ChatML prompt for ``turns``, ending with an open assistant turn."""
    body = "".join(f"<|im_start|>{t.role}\n{t.content}<|im_end|>\n" for t in turns)
    return body + "<|im_start|>assistant\n"


def _may_be_call(text: str) -> bool:
    """True while ``text``, the start of a reply, is or may become a call."""
    return text.startswith(CALL_OPEN) or CALL_OPEN.startswith(text)


class LoadedModel:
    """A GGUF model loaded once, with one worker thread that runs every call into it.

    llama.cpp contexts are not thread-safe: loading, generation and freeing all run on the one
    worker, in order. Generation streams pieces back to the event loop and stops between tokens
    once cancelled.
    """

    def __init__(self, settings: LlamaCppSettings, path: Path) -> None:
        self.settings = settings
        self.path = path
        self._worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="toolwire-llamacpp"
        )
        self._llama: llama_cpp.Llama | None = None
        self._template: Any = None
        self._stop: list[str] = []
        self._grammars: dict[str, Any] = {}
        self.prompt_states = PromptStates(settings.prompt_states)
        self._closed = False

    @property
    def name(self) -> str:
        """The model's file name without ``.gguf``."""
        return self.path.name.removesuffix(".gguf")

    async def _run(self, function: Any, *args: Any) -> Any:
        if self._closed:
            raise LlamaCppError("the llamacpp adapter was closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, function, *args)

    async def load(self) -> None:
        """Load the model (once) on the worker thread."""
        if self._llama is None:
            await self._run(self._load)

    def _load(self) -> None:
        if self._llama is not None:
            return
        # Busy-waiting OpenMP threads cost far more than they save on a shared machine; the
        # runtime reads this once, when llama.cpp starts.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import llama_cpp

        settings = self.settings
        try:
            llama = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=settings.n_ctx,
                n_threads=settings.n_threads,
                n_threads_batch=settings.n_threads,
                seed=settings.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise LlamaCppError(f"cannot load the model {str(self.path)!r}: {exc}") from None
        template = llama.metadata.get("tokenizer.chat_template")
        if settings.chat_format == "auto" and template:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            eos = llama.detokenize([llama.token_eos()], special=True).decode("utf-8", "replace")
            bos = llama.detokenize([llama.token_bos()], special=True).decode("utf-8", "replace")
            self._template = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        self._llama = llama

    def _prompt_tokens(self, turns: Sequence[ChatTurn]) -> list[int]:
        llama = self._llama
        assert llama is not None
        if self._template is not None:
            messages: Any = [{"role": t.role, "content": t.content} for t in turns]
            formatted = self._template(messages=messages)
            text = formatted.prompt
            stop = formatted.stop
            self._stop = [stop] if isinstance(stop, str) else list(stop or [])
        else:
            text = chatml(turns)
            self._stop = ["<|im_end|>"]
        tokens: list[int] = llama.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        bos = llama.token_bos()
        if len(tokens) > 1 and tokens[0] == bos and tokens[1] == bos:
            tokens = tokens[1:]  # the template wrote the BOS itself
        return tokens

    def _grammar(self, text: str) -> Any:
        grammar = self._grammars.get(text)
        if grammar is None:
            from llama_cpp.llama_grammar import LlamaGrammar

            grammar = LlamaGrammar.from_string(text, verbose=False)
            if len(self._grammars) > 32:
                self._grammars.clear()
            self._grammars[text] = grammar
        return grammar

    async def generate(
        self,
        turns: Sequence[ChatTurn],
        *,
        grammar: str | None,
        max_tokens: int,
        temperature: float,
        repeat_window: int | None = None,
        cpu_limit: float | None = None,
    ) -> AsyncIterator[Piece]:
        """Generate the assistant's reply to ``turns``, piece by piece.

        With ``repeat_window``, the generation stops once it writes again a run of that many
        pieces it wrote before, and the text from that run on is dropped (see
        :class:`RepeatStop`; the last ``repeat_window`` pieces are held back until then).
        With ``cpu_limit``, a reply that is not a call stops (finish reason ``length``) once the
        generation has taken that many seconds of CPU; a call runs to its end.

        Cancelling the consuming task stops the generation before its next token; the worker is
        free again once the current token is done.
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Piece | BaseException | None] = asyncio.Queue()
        cancelled = threading.Event()

        def put(item: Piece | BaseException | None) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        def work() -> None:
            try:
                self._generate(
                    turns,
                    grammar,
                    max_tokens,
                    temperature,
                    repeat_window,
                    cpu_limit,
                    cancelled,
                    put,
                )
            except BaseException as exc:  # handed to the consuming task, which re-raises it
                put(exc)
            finally:
                put(None)

        future = await self._submit(work)
        try:
            while True:
                item = await queue.get()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            cancelled.set()
            if not future.done():
                # The worker stops at its next token; a later call queues behind it.
                await asyncio.shield(asyncio.wrap_future(future))

    async def _submit(self, work: Any) -> concurrent.futures.Future[None]:
        if self._closed:
            raise LlamaCppError("the llamacpp adapter was closed")
        await self.load()
        return self._worker.submit(work)

    def _generate(
        self,
        turns: Sequence[ChatTurn],
        grammar: str | None,
        max_tokens: int,
        temperature: float,
        repeat_window: int | None,
        cpu_limit: float | None,
        cancelled: threading.Event,
        put: Any,
    ) -> None:
        import llama_cpp

        started = time.thread_time()
        llama = self._llama
        assert llama is not None
        if cancelled.is_set():
            return
        system = (
            self._prompt_tokens(turns[:1]) if len(turns) > 1 and turns[0].role == "system" else []
        )
        tokens = self._prompt_tokens(turns)
        room = llama.n_ctx() - len(tokens)
        if room < 16:
            raise LlamaCppError(
                f"the conversation is {len(tokens)} tokens long; the model's context holds "
                f"{llama.n_ctx()} (n_ctx of the llamacpp adapter): raise n_ctx or shorten the "
                "conversation"
            )
        # The system prompt's tokens, as they start the whole prompt.
        head = tokens[: llama_cpp.Llama.longest_token_prefix(system, tokens)]
        self.prompt_states.prepare(llama, head)
        produced = [len(tokens)]

        def stop_when_cancelled(input_ids: Any, logits: Any) -> bool:
            produced[0] = len(input_ids)
            return cancelled.is_set()

        settings = self.settings
        stream = cast(
            Iterator[Any],
            llama.create_completion(
                prompt=tokens,
                max_tokens=min(max_tokens, room),
                temperature=temperature,
                top_k=settings.top_k,
                top_p=settings.top_p,
                repeat_penalty=settings.repeat_penalty,
                seed=settings.seed,
                stop=self._stop,
                grammar=self._grammar(grammar) if grammar is not None else None,
                stopping_criteria=llama_cpp.StoppingCriteriaList([stop_when_cancelled]),
                stream=True,
            ),
        )
        repeats = RepeatStop(repeat_window) if repeat_window is not None else None
        finish: str | None = None
        written = ""
        for chunk in stream:
            choice = chunk["choices"][0]
            finish = choice.get("finish_reason") or finish
            text = choice["text"]
            if cpu_limit is not None and len(written) < len(CALL_OPEN):
                written += text
            if text and repeats is not None:
                text = repeats.feed(text)
            if text:
                put(Piece(text=text))
            if cancelled.is_set() or (repeats is not None and repeats.repeated):
                break
            if (
                cpu_limit is not None
                and time.thread_time() - started >= cpu_limit
                and not _may_be_call(written)
            ):
                finish = "length"
                break
        if cancelled.is_set():
            finish = "cancelled"
        elif repeats is not None:
            if repeats.repeated:
                finish = "stop"
            elif held := repeats.flush():
                put(Piece(text=held))
        put(
            Piece(
                text="",
                finish_reason=finish or "stop",
                prompt_tokens=len(tokens),
                completion_tokens=max(produced[0] - len(tokens), 0),
                cpu_seconds=time.thread_time() - started,
            )
        )

    async def aclose(self) -> None:
        """Free the model (after the running generation, if any, stops) and end the worker."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._worker, self._free)
        self._worker.shutdown(wait=False)

    def _free(self) -> None:
        llama, self._llama = self._llama, None
        self._grammars.clear()
        self.prompt_states.clear()
        if llama is not None:
            llama.close()
