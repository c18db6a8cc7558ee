"""The call lifecycle under every interleaving Hypothesis finds: a stateful test over a run whose
model answers are drawn, resumed with fresh and stale decisions (given with a ``Run`` and by
id), denials and supplied results, in this process and in child processes killed with -9 at
their n-th ledger write, two processes racing on one ledger, and loads while a call runs in
another process; on a SQLite file and on PostgreSQL.

Invariants, after every step:

- a non-idempotent tool's effect happens at most once per call, plus once for each decision
  given on a request of that call that says it was interrupted;
- the run as loaded answers every call of every turn, but the ones it lists as deferred (an
  interrupted run has its last turn to finish); driven to its end, every call is answered;
- ``load`` never calls a live call interrupted: while a call runs elsewhere it says so;
- no output of any process (its trace, the run's redacted JSON, its events) shows the
  sensitive value, whatever spelling the model used for the tool.

The default (``repeatable``) profile runs a few fixed machines; ``--hypothesis-profile=explore``
runs many new ones, longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from lifecycle_tools import CANARY, decisions_from, effects, make_loop
from loop_support import assert_no_orphans

from toolwire.loop import Run, RunInProgress, ToolCallingLoop

CHILD = Path(__file__).parent.parent / "loop" / "lifecycle_tools.py"
NON_IDEMPOTENT = {"charge", "note", "login"}
FINISHED = ("answered", "max_rounds")
STALE_DECISIONS = ("has no deferred call with id", "already answered")
"""How ``resume`` refuses decisions given with a run another process took further since."""

# Fixed draws run a few short machines in CI; exploring runs many longer ones. Every rule is
# always enabled and does nothing when the run gives it nothing to do: the run's state depends on
# races and kills, and a precondition on it would make the draws differ from one run to the next.
# An assertion that holds on one schedule and not on another is reported by Hypothesis as Flaky
# (FlakyStrategyDefinition when its replay draws past the step where the failing run stopped):
# every assertion of a step must hold however a loaded machine schedules the processes.
EXPLORING = not settings.default.derandomize
MACHINE = settings(
    max_examples=200 if EXPLORING else 12,
    stateful_step_count=30 if EXPLORING else 15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_call = st.one_of(
    st.builds(lambda n: {"name": "charge", "arguments": {"amount": n}}, st.integers(1, 99)),
    st.builds(lambda t: {"name": "note", "arguments": {"text": t}}, st.sampled_from("ab")),
    st.just({"name": "fetch", "arguments": {"key": "k"}}),
    st.builds(
        lambda name: {"name": name, "arguments": {"user": "ann", "password": CANARY}},
        st.sampled_from(["login", "Login", "LOGIN"]),
    ),
    st.just({"name": "Charge", "arguments": {"amount": 5}}),
)
# Each turn leads with a call that waits for approval more often than not, so runs defer, get
# resumed, killed and raced, rather than answer at once.
_charge = st.builds(lambda n: {"name": "charge", "arguments": {"amount": n}}, st.integers(1, 99))
SCRIPTS = st.lists(
    st.tuples(st.one_of(_charge, _call), st.lists(_call, max_size=2)).map(
        lambda calls: {"tool_calls": [calls[0], *calls[1]]}
    ),
    min_size=1,
    max_size=4,
).map(lambda turns: [*turns, "All done."])
KINDS = st.sampled_from(["approve", "approve", "deny", "supply"])


class Lifecycle(RuleBasedStateMachine):
    """One run of the scripted model, driven through its life (see the module)."""

    location_of: Any = None  # set by the test: the ledger location for a work directory

    def __init__(self) -> None:
        super().__init__()
        self.workdir = Path(tempfile.mkdtemp(prefix="toolwire-lifecycle-"))
        self.location = type(self).location_of(self.workdir)
        self.loop: ToolCallingLoop | None = None
        self.run_id = ""
        self.seen: list[Run] = []  # every run of run_id the test was given, for stale decisions
        self.rerun: Counter[tuple[str, str]] = Counter()  # interrupted requests approved, by call
        self.event_loop = asyncio.new_event_loop()  # one for the machine, as a host has one
        self.exit: tuple[int, str] = (0, "")  # the last child's exit code and stderr

    # -- steps -----------------------------------------------------------------------------

    @initialize(script=SCRIPTS)
    def start(self, script: list[Any]) -> None:
        self.loop = make_loop(self.workdir, self.location)
        self.next_run(script)

    @rule(script=SCRIPTS)
    def next_run(self, script: list[Any]) -> None:
        """Once a run answered, the next one (the ledger keeps the earlier ones)."""
        if self.run_id and self._load().stop_reason not in FINISHED:
            return
        self.run_id = f"run_{len(list(self.workdir.glob('script-*.json')))}"
        (self.workdir / f"script-{self.run_id}.json").write_text(json.dumps(script))
        self.seen = [self._await(self._loop().run("go", run_id=self.run_id))]

    @rule()
    def load_again(self) -> None:
        """Loading changes nothing (the invariants look at the run as loaded)."""
        assert self._load() == self._load()

    @rule(kinds=st.lists(KINDS, min_size=3, max_size=3), by_id=st.booleans())
    def decide(self, kinds: list[str], by_id: bool) -> None:
        """Fresh decisions on every waiting call, with the run as loaded or by id."""
        loaded = self._load()
        if not loaded.deferred:
            return
        decisions = self._fresh(loaded, kinds)
        run: Run | str = self.run_id if by_id else loaded
        self.seen.append(self._await(self._loop().resume(run, decisions_from(decisions))))

    @rule(pick=st.integers(0, 10), kind=KINDS)
    def decide_on_an_older_run(self, pick: int, kind: str) -> None:
        """A decision given with a run the caller kept: on its requests, maybe old ones."""
        old = self.seen[pick % len(self.seen)]
        current = {d.call_id: d for d in self._load().deferred}
        if not current:
            return
        decisions = {
            d.call_id: [kind, None] for d in old.deferred if d.call_id in current
        }  # each answers the request the old run shows
        for call_id in decisions:
            request = current[call_id]
            given = next(d for d in old.deferred if d.call_id == call_id)
            event(
                "a decision on an earlier request"
                if given.attempt < request.attempt
                else "a decision with an older run, on the current request"
            )
            if kind == "approve" and given.attempt == request.attempt:
                self._count(request)
        self.seen.append(self._await(self._loop().resume(old, decisions_from(decisions))))

    @rule(kind=KINDS)
    def decide_by_id_without_naming_the_request(self, kind: str) -> None:
        """A decision given by run id without its attempt answers each call's first request."""
        loaded = self._load()
        if not loaded.deferred:
            return
        decisions = {}
        for request in loaded.deferred:
            decisions[request.call_id] = [kind, None]
            if request.attempt > 1:
                event("a decision by id on an earlier request")
            elif kind == "approve":
                self._count(request)
        self.seen.append(self._await(self._loop().resume(self.run_id, decisions_from(decisions))))

    @rule(
        kinds=st.lists(KINDS, min_size=3, max_size=3),
        write=st.integers(1, 4),
        before=st.booleans(),
    )
    def resume_in_a_process_killed_at_a_ledger_write(
        self, kinds: list[str], write: int, before: bool
    ) -> None:
        loaded = self._load()
        if loaded.stop_reason in FINISHED:
            return
        plan = {"decisions": self._fresh(loaded, kinds), "kill": write, "before": before}
        code, err = _finish(self._child(plan))
        assert code in (0, -9), f"the child failed ({code}): {err}"
        event(f"a child killed {'before' if before else 'after'} write {write}: exit {code}")

    @rule(kinds=st.lists(KINDS, min_size=3, max_size=3))
    def two_processes_resume_at_once(self, kinds: list[str]) -> None:
        """Two processes load the run and resume it with the same decisions at once: each call
        runs in one of them; the other finds it running or, when it resumes only after the
        first answered the turn, is refused its decisions."""
        loaded = self._load()
        if loaded.stop_reason in FINISHED:
            return
        go = f"go-{uuid.uuid4().hex}"
        plan = {"decisions": self._fresh(loaded, kinds), "go": go}
        self._fresh(loaded, kinds)  # the second process decides the same: counted twice
        children = [self._child(plan), self._child(plan)]
        for child in children:  # each loads the run, then says it is ready
            ready = self.workdir / f"{go}.{child.pid}"
            while not ready.exists() and child.poll() is None:
                self._await(asyncio.sleep(0.01))
        (self.workdir / go).write_text("")
        first, second = (_finish(child) for child in children)
        after = self._load()
        answered = after.rounds > loaded.rounds or after.stop_reason in FINISHED
        for (code, err), other in ((first, second[0]), (second, first[0])):
            event("racing child: " + _raced(code, err, ran_first=other == 0 and answered))

    @rule(by_id=st.booleans(), kind=KINDS)
    def a_decision_kept_from_before_a_crash(self, by_id: bool, kind: str) -> None:
        """A process approves the charge and is killed with -9 while it runs; then the same
        decision is given again, with the run from before the crash or by id."""
        before = self._load()
        if not any(d.tool == "charge" and d.attempt == 1 for d in before.deferred):
            return
        with self._charge_running_elsewhere(self._fresh(before, ["approve"] * 3)) as child:
            ran = (self.workdir / "charge.started").exists()
            child.kill()
        if not ran:
            return
        event(
            "a decision kept from before a crash, given " + ("by id" if by_id else "with its run")
        )
        again = {d.call_id: [kind, None] for d in before.deferred}
        run: Run | str = self.run_id if by_id else before
        self.seen.append(self._await(self._loop().resume(run, decisions_from(again))))

    @rule(kill=st.booleans())
    def load_while_a_charge_runs_elsewhere(self, kill: bool) -> None:
        """Another process runs the charge: loading or resuming here says so and touches
        nothing; then that process finishes, or is killed with -9 while the charge runs."""
        loaded = self._load()
        if not any(d.tool == "charge" for d in loaded.deferred):
            return
        decisions = self._fresh(loaded, ["approve"] * 3)
        with self._charge_running_elsewhere(decisions) as child:
            if (self.workdir / "charge.started").exists():
                event("loaded while a charge ran elsewhere")
                with pytest.raises(RunInProgress, match="is running in another process"):
                    self._loop().load(self.run_id)
                with pytest.raises(RunInProgress):
                    self._await(self._loop().resume(self.run_id, decisions_from(decisions)))
                if kill:
                    child.kill()
        code, err = self.exit
        assert code in (0, -9) if kill else code == 0, err

    # -- invariants ------------------------------------------------------------------------

    @invariant()
    def a_side_effect_happens_once_unless_a_decision_asks_again(self) -> None:
        done = effects(self.workdir)
        counts = Counter((run, call) for run, call, tool in done if tool in NON_IDEMPOTENT)
        for call, count in counts.items():
            assert count <= 1 + self.rerun[call], (call, count, self.rerun[call])

    @invariant()
    def the_stored_run_answers_every_call_and_runs_nowhere(self) -> None:
        if self.loop is None:
            return
        run = self._load()  # no process runs it now: RunInProgress would fail here
        if run.stop_reason != "interrupted":
            assert_no_orphans(run)

    @invariant()
    def no_output_shows_the_sensitive_value(self) -> None:
        if self.loop is None:
            return
        for trace in self.workdir.glob("trace-*.jsonl"):
            assert CANARY not in trace.read_text(), trace.name
        run = self._load()
        assert CANARY not in json.dumps(run.to_json(redact=self._loop().host.tools))
        for seen in self.seen:
            assert CANARY not in json.dumps(seen.to_json()["events"])

    def teardown(self) -> None:
        """Driven to its end, the run answers every call."""
        try:
            if self.loop is not None:
                for _ in range(12):
                    run = self._load()
                    if run.stop_reason in FINISHED:
                        break
                    decisions = decisions_from(self._fresh(run, ["approve"] * 3))
                    self._await(self._loop().resume(run, decisions))
                run = self._load()
                assert run.stop_reason in FINISHED, run.detail
                assert_no_orphans(run, allow_deferred=False)
                self.a_side_effect_happens_once_unless_a_decision_asks_again()
        finally:
            if self.loop is not None and self.loop.ledger is not None:
                self.loop.ledger.close()
            self.event_loop.close()

    # -- helpers ---------------------------------------------------------------------------

    def _loop(self) -> ToolCallingLoop:
        assert self.loop is not None
        return self.loop

    def _load(self) -> Run:
        """The run as the ledger has it (an answered run without side effects is not stored:
        then as this process last saw it)."""
        loop = self._loop()
        assert loop.ledger is not None
        if loop.ledger.load_run(self.run_id) is None:
            last = self.seen[-1]
            assert last.stop_reason == "answered"
            ran = [r.tool for r in last.tool_calls if r.outcome == "executed"]
            assert NON_IDEMPOTENT.isdisjoint(ran), "a run with side effects was not stored"
            return last
        return loop.load(self.run_id)

    def _count(self, request: Any) -> None:
        if request.reason == "interrupted":
            event("an approval of an interrupted request")
            self.rerun[(self.run_id, request.call_id)] += 1

    def _fresh(self, run: Run, kinds: list[str]) -> dict[str, list[Any]]:
        """Decisions naming each waiting call's current request; approvals of interrupted
        requests counted."""
        decisions: dict[str, list[Any]] = {}
        for request, kind in zip(run.deferred, kinds * 3, strict=False):
            if request.reason == "external" and kind == "approve":
                kind = "supply"
            decisions[request.call_id] = [kind, request.attempt]
            if kind == "approve":
                self._count(request)
        return decisions

    @contextlib.contextmanager
    def _charge_running_elsewhere(
        self, decisions: dict[str, list[Any]]
    ) -> Iterator[subprocess.Popen[bytes]]:
        """A child process resuming the run with ``decisions``, inside the block once its charge
        runs (or once it ended without running one); its exit code and stderr in ``exit``."""
        (self.workdir / "block-charge").write_text("")
        marker = self.workdir / "charge.started"
        child = self._child({"decisions": decisions})
        try:
            while not marker.exists() and child.poll() is None:
                self._await(asyncio.sleep(0.02))
            yield child
        finally:
            (self.workdir / "block-charge").unlink()
            self.exit = _finish(child)
            marker.unlink(missing_ok=True)

    def _child(self, plan: dict[str, Any]) -> subprocess.Popen[bytes]:
        path = self.workdir / f"plan-{uuid.uuid4().hex}.json"
        path.write_text(json.dumps(plan))
        command = [
            sys.executable,
            str(CHILD),
            str(self.workdir),
            self.location,
            self.run_id,
            str(path),
        ]
        return subprocess.Popen(command, stderr=subprocess.PIPE)

    def _await(self, awaitable: Any) -> Any:
        return self.event_loop.run_until_complete(awaitable)


def _raced(code: int, err: str, *, ran_first: bool) -> str:
    """What a child racing another on one resume did (exit ``code``, stderr ``err``); fails for
    anything but running, finding the other's call running, or (``ran_first``: the other ran
    and took the run past the decided turn) refusing decisions that no call waits on any more.
    """
    if code == 0:
        return "ran"
    if "RunInProgress" in err:  # it refuses to take over the other's call
        return "found the call running"
    # Scheduled late (a loaded machine), it resumed only after the other one had answered the
    # turn: its decisions name calls that wait no more, or a run that answered.
    assert ran_first, err
    assert any(refusal in err for refusal in STALE_DECISIONS), err
    return "came after the other one answered the turn"


def _finish(child: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Wait for a child (killed with -9 if it outlives two minutes); its exit code and stderr."""
    try:
        _, err = child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        child.kill()
        _, err = child.communicate()
    return child.returncode, err.decode(errors="replace")


def test_the_lifecycle_on_a_sqlite_file() -> None:
    Lifecycle.location_of = staticmethod(lambda workdir: str(workdir / "ledger.sqlite3"))
    run_state_machine_as_test(Lifecycle, settings=MACHINE)


def test_the_lifecycle_on_postgresql(postgres_server: str) -> None:
    import psycopg

    def database(workdir: Path) -> str:
        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(postgres_server, autocommit=True) as db:
            db.execute(f'CREATE DATABASE "{name}"')  # a generated name, not input
        return postgres_server.rsplit("/", 1)[0] + f"/{name}"

    Lifecycle.location_of = staticmethod(database)
    run_state_machine_as_test(Lifecycle, settings=MACHINE)
