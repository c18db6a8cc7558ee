"""Reading ``toolwire batch`` input: one conversation a JSON line, or why a line is refused."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..loop._codec import message_from_json
from ..messages import Message

RUN_OPTION_KEYS = ("profile", "system_prompt", "tool_choice", "tools")
"""The run options an input line may carry, next to ``id`` and ``prompt`` or ``messages``."""

_LINE_KEYS = ("id", "messages", "prompt", *RUN_OPTION_KEYS)
MAX_ID_CHARS = 512


@attrs.frozen(kw_only=True)
class BatchJob:
    """One conversation of a batch: its input id, line number, run id, prompt and run options.

    ``run_id`` is derived from the output file and the input id, so the same job of the same
    batch always has the same run in the ledger (that is how a crashed run is found again).
    ``prompt`` is a text or a conversation; ``options`` are keyword arguments of
    :meth:`toolwire.loop.ToolCallingLoop.run`. A job is plain data: it pickles, so executors
    can send it to other processes and machines.
    """

    id: str
    line: int
    run_id: str
    prompt: str | tuple[Message, ...]
    options: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class BadLine:
    """An input line that is not a job: its number (from 1) and what is wrong with it."""

    line: int
    error: str


def batch_key(output: str | Path) -> str:
    """The key of a batch: a digest of its output file's absolute path."""
    path = str(Path(output).expanduser().resolve())
    return hashlib.sha256(path.encode("utf-8")).hexdigest()[:12]


def job_run_id(key: str, job_id: str) -> str:
    """The run id of the job ``job_id`` in the batch ``key`` (stable across restarts)."""
    digest = hashlib.sha256(job_id.encode("utf-8")).hexdigest()[:20]
    return f"batch_{key}_{digest}"


def read_jobs(lines: Sequence[str] | Iterator[str], key: str) -> Iterator[BatchJob | BadLine]:
    """Every line of a JSONL input as a :class:`BatchJob`, or a :class:`BadLine` saying why not.

    Blank lines are skipped. A repeated id is a bad line (the first keeps the id).
    """
    seen: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        parsed = parse_job(text, number, key)
        if isinstance(parsed, BatchJob):
            first = seen.setdefault(parsed.id, number)
            if first != number:
                parsed = BadLine(
                    line=number, error=f"id {parsed.id!r} is already used by line {first}"
                )
        yield parsed


def parse_job(text: str, number: int, key: str) -> BatchJob | BadLine:
    """One input line as a job, or the reason it is not one (named key, value, what is valid)."""

    def bad(error: str) -> BadLine:
        return BadLine(line=number, error=error)

    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        return bad(f"not valid JSON: {exc}")
    if not isinstance(data, dict):
        return bad(f"expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(_LINE_KEYS))
    if unknown:
        return bad(
            f"unknown key(s) {', '.join(map(repr, unknown))}; valid keys: {', '.join(_LINE_KEYS)}"
        )
    job_id = data.get("id")
    if isinstance(job_id, int) and not isinstance(job_id, bool):
        job_id = str(job_id)
    if not isinstance(job_id, str) or not job_id.strip() or len(job_id) > MAX_ID_CHARS:
        return bad(
            f"id = {_short(data.get('id'))}: expected a non-empty string (or integer) of at most "
            f"{MAX_ID_CHARS} characters"
        )
    has_prompt, has_messages = "prompt" in data, "messages" in data
    if has_prompt == has_messages:
        return bad("expected exactly one of 'prompt' (a string) or 'messages' (a list)")
    prompt: str | tuple[Message, ...]
    if has_prompt:
        if not isinstance(data["prompt"], str) or not data["prompt"].strip():
            return bad(f"prompt = {_short(data['prompt'])}: expected a non-empty string")
        prompt = data["prompt"]
    else:
        raw = data["messages"]
        if not isinstance(raw, list) or not raw:
            return bad(f"messages = {_short(raw)}: expected a non-empty list of messages")
        messages: list[Message] = []
        for i, item in enumerate(raw):
            try:
                if not isinstance(item, dict):
                    raise ValueError(f"expected an object, got {type(item).__name__}")
                messages.append(message_from_json(item))
            except (KeyError, TypeError, ValueError) as exc:
                detail = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
                return bad(f"messages[{i}] = {_short(item)}: {detail}")
        prompt = tuple(messages)
    options: dict[str, Any] = {}
    for name in ("system_prompt", "profile"):
        if name in data:
            if not isinstance(data[name], str):
                return bad(f"{name} = {_short(data[name])}: expected a string")
            options[name] = data[name]
    if "tools" in data:
        tools = data["tools"]
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            return bad(f"tools = {_short(tools)}: expected a list of tool names")
        options["tools"] = tuple(tools)
    if "tool_choice" in data:
        choice = data["tool_choice"]
        if not isinstance(choice, str):
            return bad(
                f"tool_choice = {_short(choice)}: expected 'auto', 'none', 'required' or a "
                "tool name"
            )
        options["tool_choice"] = choice
    return BatchJob(
        id=job_id, line=number, run_id=job_run_id(key, job_id), prompt=prompt, options=options
    )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."
