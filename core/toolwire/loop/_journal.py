"""A run's stored record as append-only rows: its head, and what its lists gained since the
last write."""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from ._codec import ResultForms, message_to_json, source_to_json, stored_json
from ._run import Run, record_to_json

KINDS = ("messages", "tool_calls", "sources")
"""The lists of ``Run.to_json`` that grow with the run, each stored as one row per item."""

Row = tuple[str, int, str]
"""``(kind, seq, item JSON)``: one item of one of a run's lists."""


class LedgerCorrupt(ValueError):
    """The rows of a run in the ledger do not make up a whole run."""


@attrs.frozen(kw_only=True)
class RunRecord:
    """What one write of a run stores: its head (``Run.to_json(events=False)`` with the lists
    empty), the list lengths, the item rows that changed, and the kinds whose rows past their
    length must go (their tail was replaced by a shorter one, or the rows are not known)."""

    run_id: str
    head: str
    lengths: tuple[int, int, int]
    rows: tuple[Row, ...]
    truncate: tuple[str, ...]
    lists: tuple[tuple[Any, ...], ...] = attrs.field(eq=False, repr=False, default=())
    """The lists as written (objects), to compare the next write of the run with."""
    expected: int | None = None
    """The version of the stored run this write follows (the one this process last read or
    wrote): another process wrote the run since, and the write is refused. None: not known
    here, the write stands whatever is stored."""


def _unchanged(new: tuple[Any, ...], old: tuple[Any, ...]) -> int:
    """How many leading items of ``new`` were written already as ``old``.

    A run's lists only grow at their end, or have their tail replaced (the results after a
    turn are rebuilt when it is resumed), and their items are immutable: the written prefix
    ends at the last position, scanning back from the end, where both hold the same object.
    """
    i = min(len(new), len(old))
    while i and new[i - 1] is not old[i - 1]:
        i -= 1
    return i


class RunJournal:
    """What this process last wrote of each run, so that each write carries only the change:
    the cost of a write is that of the round's new items, not of the whole run so far."""

    def __init__(self) -> None:
        self._written: dict[str, tuple[tuple[Any, ...], ...]] = {}

    def record(
        self, run: Run, expected: int | None = None, forms: ResultForms | None = None
    ) -> RunRecord:
        """The write that brings the stored run up to ``run``, following its stored version
        ``expected`` (see :attr:`RunRecord.expected`; nothing is remembered yet), its results
        in the JSON forms of the write (``forms``: one per result for all its rows)."""
        lists = (run.messages, run.tool_calls, run.sources)
        result_json = ResultForms() if forms is None else forms
        encoders: tuple[Callable[[Any], dict[str, Any]], ...] = (
            functools.partial(message_to_json, result_json=result_json),
            functools.partial(record_to_json, result_json=result_json),
            source_to_json,
        )
        old = self._written.get(run.id)
        rows: list[Row] = []
        truncate: list[str] = []
        for index, (kind, items) in enumerate(zip(KINDS, lists, strict=True)):
            if old is None:
                start = 0
                truncate.append(kind)
            else:
                start = _unchanged(items, old[index])
                if len(items) < len(old[index]):
                    truncate.append(kind)
            encode = encoders[index]
            rows.extend(
                (kind, seq, stored_json(encode(items[seq]))) for seq in range(start, len(items))
            )
        head = Run(messages=(), **dict(zip(_HEAD_NAMES, _head_values(run), strict=True)))
        return RunRecord(
            run_id=run.id,
            head=stored_json(head.to_json(events=False)),
            lengths=(len(lists[0]), len(lists[1]), len(lists[2])),
            rows=tuple(rows),
            truncate=tuple(truncate),
            lists=lists,
            expected=expected,
        )

    def remember(self, record: RunRecord) -> None:
        """``record`` was committed: the next write of its run starts from it."""
        self._written[record.run_id] = record.lists

    def knows(self, run_id: str) -> bool:
        """Whether a record of the run was written since it was last forgotten."""
        return run_id in self._written

    def forget(self, run_id: str) -> None:
        """The run ended: its next write (a resume) stores it whole."""
        self._written.pop(run_id, None)


# A head is the run without its lists (their items are rows of their own; the head's are left
# empty) and without its events (never stored): an ``attrs.evolve`` of it, with the fields
# looked up once rather than on every write.
_HEAD_FIELDS = [a for a in attrs.fields(Run) if a.init and a.name not in (*KINDS, "events")]
_HEAD_NAMES = tuple(a.alias or a.name for a in _HEAD_FIELDS)
_head_values: Callable[[Run], tuple[Any, ...]] = operator.attrgetter(
    *(a.name for a in _HEAD_FIELDS)
)


def _loads(run_id: str, what: str, text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise LedgerCorrupt(
            f"the {what} of run {run_id!r} in the ledger is not valid JSON ({exc})"
        ) from None


def split(data: Mapping[str, Any]) -> tuple[str, tuple[int, int, int], list[Row]]:
    """A whole run's JSON (a snapshot of schema 1) as a head, list lengths and item rows."""
    head = {k: ([] if k in KINDS else v) for k, v in data.items()}
    rows: list[Row] = []
    lengths: list[int] = []
    for kind in KINDS:
        items = data.get(kind) or []
        lengths.append(len(items))
        rows.extend((kind, seq, stored_json(item)) for seq, item in enumerate(items))
    return stored_json(head), (lengths[0], lengths[1], lengths[2]), rows


def last_round(data: Mapping[str, Any]) -> int:
    """The round a run's JSON ended in (its ``rounds``, as ``Run.from_json`` reads it): the
    round whose calls a load reconciles it with. 0 when it is not a number (such a run does
    not load)."""
    try:
        return int(data.get("rounds", 0))
    except (TypeError, ValueError):
        return 0


def assemble(
    run_id: str, head: str, lengths: tuple[int, int, int], rows: Iterable[tuple[str, int, str]]
) -> dict[str, Any]:
    """The run's JSON (as ``Run.to_json(events=False)``) from its head and item rows.

    Rows past a list's length are left over from a longer tail and ignored.

    :raises LedgerCorrupt: when an item of a list is missing.
    """
    data = _loads(run_id, "head", head)
    if not isinstance(data, dict):
        raise LedgerCorrupt(f"the head of run {run_id!r} in the ledger is not a JSON object")
    items: dict[str, list[Any]] = {kind: [None] * n for kind, n in zip(KINDS, lengths, strict=True)}
    found = dict.fromkeys(KINDS, 0)
    for kind, seq, item in rows:
        target = items.get(kind)
        if target is not None and 0 <= seq < len(target):
            target[seq] = _loads(run_id, f"{kind} item {seq}", item)
            found[kind] += 1
    for kind, n in zip(KINDS, lengths, strict=True):
        if found[kind] != n:
            raise LedgerCorrupt(
                f"the ledger holds {found[kind]} of the {n} {kind} of run {run_id!r}: the run "
                "cannot be loaded"
            )
        data[kind] = items[kind]
    return data
