"""``toolwire batch`` on one machine: records, ordering, bad lines, deadlines, approvals, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import batch_tools
import pytest
from batch_tools import KILL_SCRIPT, write_config
from waiting import HANG, running, until

from toolwire import Host
from toolwire.batch import BatchPlan, run_batch
from toolwire.batch._output import scan_output
from toolwire.cli import main


def _jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _command(config: Path) -> list[str]:
    return [sys.executable, "-m", "toolwire", "--config", str(config), "batch"]


def _batch(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_command(config), *args],
        capture_output=True,
        text=True,
        timeout=HANG,
    )


def test_each_run_is_one_record_with_its_input_id(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = _jsonl(
        workdir / "in.jsonl",
        [
            {"id": "a", "prompt": "job a", "tools": ["charge"]},
            {"id": 7, "messages": [{"role": "user", "content": "job seven"}], "tools": []},
        ],
    )
    out = workdir / "out.jsonl"
    code = main(["--config", str(config), "batch", str(jobs), "--out", str(out), "--json"])
    assert code == 0
    records = {r["id"]: r for r in _records(out)}
    assert set(records) == {"a", "7"}
    assert records["a"]["status"] == "done"
    assert records["a"]["stop_reason"] == "answered"
    assert records["a"]["tool_calls"][0]["tool"] == "charge"
    assert "charged" in records["a"]["text"]
    assert records["a"]["run_id"].startswith("batch_")
    assert records["7"]["text"] == "No tools were offered."
    assert (workdir / "effects.log").read_text().splitlines() == ["job a"]


async def test_records_come_in_the_order_runs_end(workdir: Path) -> None:
    config = write_config(workdir)
    sleeps = {"slow": 0.6, "mid": 0.3, "fast": 0}

    def jobs(start: str) -> Path:
        rows = [
            {"id": i, "prompt": f"{start}sleep={s}", "tools": ["wait"]} for i, s in sleeps.items()
        ]
        return _jsonl(workdir / "in.jsonl", rows)

    out = workdir / "out.jsonl"
    async with Host.load(config) as host:
        # The three calls start their sleeps together, however long each run took to get there.
        summary = await run_batch(host, jobs("together=3 "), out, plan=BatchPlan(concurrency=3))
    assert [r["id"] for r in _records(out)] == ["fast", "mid", "slow"]
    assert (summary.total, summary.done) == (3, 3)
    out.unlink()
    async with Host.load(config) as host:
        await run_batch(host, jobs(""), workdir / "serial.jsonl", plan=BatchPlan(concurrency=1))
    assert [r["id"] for r in _records(workdir / "serial.jsonl")] == ["slow", "mid", "fast"]


async def test_concurrency_bounds_the_runs_in_flight(workdir: Path) -> None:
    config = write_config(workdir)
    rows = [{"id": str(i), "prompt": "together=3 sleep=0.2", "tools": ["wait"]} for i in range(6)]
    jobs = _jsonl(workdir / "in.jsonl", rows)
    batch_tools.peak = 0
    async with Host.load(config) as host:
        summary = await run_batch(host, jobs, workdir / "out.jsonl", plan=BatchPlan(concurrency=3))
    assert summary.done == 6
    # Each call waits until three run at once: never more at once (unbounded), never fewer
    # (serial); two waves of three.
    assert batch_tools.peak == 3


def test_bad_lines_are_reported_with_their_number_and_skipped(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = workdir / "in.jsonl"
    jobs.write_text(
        "\n".join(
            [
                json.dumps({"id": "ok", "prompt": "fine", "tools": []}),
                "{not json",
                json.dumps(["a", "list"]),
                json.dumps({"prompt": "no id"}),
                json.dumps({"id": "x", "prompt": "p", "messages": []}),
                json.dumps({"id": "y", "prompt": "p", "temperature": 2}),
                json.dumps({"id": "ok", "prompt": "again"}),
                json.dumps({"id": "z", "messages": [{"role": "robot", "content": "hi"}]}),
                "",
                json.dumps({"id": "last", "prompt": "fine too", "tools": []}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    out = workdir / "out.jsonl"
    done = _batch(config, str(jobs), "--out", str(out), "--json")
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert [b["line"] for b in summary["bad_lines"]] == [2, 3, 4, 5, 6, 7, 8]
    assert summary["done"] == 2
    errors = {b["line"]: b["error"] for b in summary["bad_lines"]}
    assert "not valid JSON" in errors[2]
    assert "expected a JSON object, got list" in errors[3]
    assert "id = null" in errors[4]
    assert "exactly one of 'prompt'" in errors[5]
    assert "'temperature'" in errors[6]
    assert "valid keys" in errors[6]
    assert "already used by line 1" in errors[7]
    assert "messages[0]" in errors[8]
    for line in (2, 3, 4, 5, 6, 7, 8):
        assert f"in.jsonl:{line}: skipped:" in done.stderr
    assert sorted(r["id"] for r in _records(out)) == ["last", "ok"]


async def test_a_hanging_run_ends_at_its_deadline_and_the_batch_goes_on(workdir: Path) -> None:
    config = write_config(workdir, extra="[batch]\nrun_deadline_seconds = 0.5\n")
    jobs = _jsonl(
        workdir / "in.jsonl",
        [
            {"id": "stuck", "prompt": "hang please", "tools": ["hang"]},
            {"id": "fine", "prompt": "job fine", "tools": ["charge"]},
        ],
    )
    out = workdir / "out.jsonl"
    done = _batch(config, str(jobs), "--out", str(out), "--concurrency", "1")
    assert done.returncode == 1, done.stderr
    records = {r["id"]: r for r in _records(out)}
    assert records["stuck"]["status"] == "failed"
    assert records["stuck"]["stop_reason"] == "deadline"
    assert "0.5" in records["stuck"]["detail"]
    assert records["fine"]["status"] == "done"
    assert "1 done, 1 failed, 0 deferred" in done.stdout


async def test_errors_are_records(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = _jsonl(
        workdir / "in.jsonl",
        [
            {"id": "unknown-tool", "prompt": "p", "tools": ["no_such_tool"]},
            {"id": "bad-profile", "prompt": "p", "profile": "missing"},
            {"id": "fine", "prompt": "p", "tools": []},
        ],
    )
    out = workdir / "out.jsonl"
    async with Host.load(config) as host:
        summary = await run_batch(host, jobs, out, plan=BatchPlan(concurrency=2))
    records = {r["id"]: r for r in _records(out)}
    assert records["unknown-tool"]["stop_reason"] == "error"
    assert "no_such_tool" in records["unknown-tool"]["detail"]
    assert records["bad-profile"]["stop_reason"] == "error"
    assert "missing" in records["bad-profile"]["detail"]
    assert records["fine"]["status"] == "done"
    assert (summary.failed, summary.done) == (2, 1)


@pytest.mark.parametrize(
    ("flag", "status", "text"),
    [
        (None, "deferred", None),
        ("--approve-all", "done", "approved and ran"),
        ("--deny-all", "done", "denied"),
    ],
)
def test_approvals(workdir: Path, flag: str | None, status: str, text: str | None) -> None:
    config = write_config(workdir)
    jobs = _jsonl(workdir / "in.jsonl", [{"id": "a", "prompt": "p", "tools": ["approve_me"]}])
    out = workdir / "out.jsonl"
    args = ["--config", str(config), "batch", str(jobs), "--out", str(out)]
    assert main([*args, *([flag] if flag else [])]) == (0 if status == "done" else 1)
    [record] = _records(out)
    assert record["status"] == status
    if text is None:
        assert record["deferred"][0]["tool"] == "approve_me"
    else:
        assert text in record["text"]


def test_ids_already_in_the_output_are_skipped(workdir: Path) -> None:
    config = write_config(workdir)
    rows = [{"id": str(i), "prompt": f"job {i}", "tools": ["charge"]} for i in range(3)]
    jobs = _jsonl(workdir / "in.jsonl", rows)
    out = workdir / "out.jsonl"
    args = ["--config", str(config), "batch", str(jobs), "--out", str(out)]
    assert main(args) == 0
    _jsonl(jobs, [*rows, {"id": "3", "prompt": "job 3", "tools": ["charge"]}])
    assert main([*args, "--json"]) == 0
    assert sorted(r["id"] for r in _records(out)) == ["0", "1", "2", "3"]
    assert sorted((workdir / "effects.log").read_text().splitlines()) == [
        "job 0",
        "job 1",
        "job 2",
        "job 3",
    ]


def test_a_half_written_last_line_is_dropped_not_read(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = _jsonl(
        workdir / "in.jsonl",
        [{"id": "a", "prompt": "job a", "tools": []}, {"id": "b", "prompt": "job b", "tools": []}],
    )
    out = workdir / "out.jsonl"
    out.write_text(json.dumps({"id": "a", "status": "done"}) + '\n{"id": "b", "stat', "utf-8")
    assert scan_output(out).ids == {"a"}
    assert out.read_text().endswith("}\n")
    done = _batch(config, str(jobs), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert [r["id"] for r in _records(out)] == ["a", "b"]


def test_an_output_that_is_not_a_batch_output_is_refused(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = _jsonl(workdir / "in.jsonl", [{"id": "a", "prompt": "p"}])
    out = workdir / "out.jsonl"
    out.write_text("hello world\n", encoding="utf-8")
    done = _batch(config, str(jobs), "--out", str(out))
    assert done.returncode == 2
    assert "out.jsonl:1: not a JSON line" in done.stderr


@pytest.mark.parametrize(
    "text",
    ["first line\nsecond line, no newline at the end", "sk-token-without-newline"],
    ids=["notes", "one-line"],
)
def test_a_file_that_is_not_a_batch_output_is_refused_and_left_whole(
    workdir: Path, text: str
) -> None:
    config = write_config(workdir)
    jobs = _jsonl(workdir / "in.jsonl", [{"id": "a", "prompt": "p", "tools": []}])
    out = workdir / "notes.txt"
    out.write_text(text, encoding="utf-8")
    done = _batch(config, str(jobs), "--out", str(out))
    assert done.returncode == 2, done.stdout
    assert "is not a batch output" in done.stderr
    assert out.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink"])
def test_the_input_is_refused_as_the_output(workdir: Path, alias: str) -> None:
    config = write_config(workdir)
    rows = [{"id": "j0", "prompt": "job 0", "tools": []}, {"id": "j1", "prompt": "job 1"}]
    jobs = workdir / "jobs.jsonl"
    jobs.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[1]), encoding="utf-8")
    before = jobs.read_bytes()
    out = jobs
    if alias == "symlink":
        out = workdir / "out.jsonl"
        out.symlink_to(jobs)
    elif alias == "hardlink":
        out = workdir / "out.jsonl"
        os.link(jobs, out)
    done = _batch(config, str(jobs), "--out", str(out))
    assert done.returncode == 2, done.stdout
    assert "is the input file" in done.stderr
    assert jobs.read_bytes() == before


def test_a_file_name_that_is_not_utf8_is_written_and_read_back(workdir: Path) -> None:
    name = os.fsdecode(b"report-\xff.txt")
    (workdir / name).write_bytes(b"x")
    script = [
        {"tool_calls": [{"name": "listing", "arguments": {}}]},
        {"tool_calls": [{"name": "charge", "arguments": {"amount": 1}}]},
        {"text": "done"},
    ]
    config = write_config(workdir, script=script)
    jobs = _jsonl(
        workdir / "in.jsonl",
        [{"id": "a", "prompt": "list and charge", "tools": ["listing", "charge"]}],
    )
    out = workdir / "out.jsonl"
    done = _batch(config, str(jobs), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    (record,) = _records(out)
    assert record["status"] == "done", record
    listed = json.dumps(record)
    assert "report-\\udcff.txt" in listed  # the same string, read back from its JSON escape
    assert (workdir / "effects.log").read_text().splitlines() == ["list and charge"]
    assert scan_output(out).ids == {"a"}
    again = _batch(config, str(jobs), "--out", str(out), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["skipped"] == 1


def test_hostile_input_lines_cost_only_themselves(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = workdir / "in.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    jobs.write_text(
        "\n".join(
            [
                '{"id": "esc", "prompt": "\x1b]0;PWNED\x07\x1b[2J"}',  # raw control characters
                '{"id": "deep", "prompt": "p", "messages": ' + deep + "}",
                json.dumps({"id": "ok", "prompt": "fine", "tools": []}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    out = workdir / "out.jsonl"
    done = _batch(config, str(jobs), "--out", str(out), "--json")
    assert done.returncode == 1, done.stderr
    assert [b["line"] for b in json.loads(done.stdout)["bad_lines"]] == [1, 2]
    assert "\x1b" not in done.stderr
    assert [r["id"] for r in _records(out)] == ["ok"]
    jobs.write_bytes(b'{"id": "a", "prompt": "caf\xe9"}\n')  # not UTF-8: refused whole
    refused = _batch(config, str(jobs), "--out", str(workdir / "other.jsonl"))
    assert refused.returncode == 2
    assert "cannot be read" in refused.stderr
    assert not (workdir / "other.jsonl").exists()


def test_out_through_a_link_is_checked_at_its_target(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = _jsonl(workdir / "in.jsonl", [{"id": "b", "prompt": "job b", "tools": []}])
    notes = workdir / "notes.txt"
    notes.write_text("a note\nanother\n", encoding="utf-8")
    (workdir / "to-notes.jsonl").symlink_to(notes)
    done = _batch(config, str(jobs), "--out", str(workdir / "to-notes.jsonl"))
    assert done.returncode == 2
    assert notes.read_text(encoding="utf-8") == "a note\nanother\n"
    earlier = _jsonl(workdir / "earlier.jsonl", [{"id": "a", "status": "done"}])
    (workdir / "to-earlier.jsonl").symlink_to(earlier)
    done = _batch(config, str(jobs), "--out", str(workdir / "to-earlier.jsonl"))
    assert done.returncode == 0, done.stderr
    assert [r["id"] for r in _records(earlier)] == ["a", "b"]


def test_a_bad_argument_is_named(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = _jsonl(workdir / "in.jsonl", [{"id": "a", "prompt": "p"}])
    args = [str(jobs), "--out", str(workdir / "o.jsonl")]
    done = _batch(config, *args, "--concurrency", "0")
    assert done.returncode == 2
    assert "--concurrency 0: expected an integer from 1 to 1024" in done.stderr
    done = _batch(config, *args, "--workers", "2")
    assert done.returncode == 2
    assert "--workers 2: the local executor runs in this process" in done.stderr
    done = _batch(config, *args, "--executor", "nowhere")
    assert done.returncode == 2
    assert "no batch executor named 'nowhere'; available executors: local" in done.stderr
    done = _batch(config, str(workdir / "missing.jsonl"), "--out", "o.jsonl")
    assert done.returncode == 2
    assert "missing.jsonl" in done.stderr
    assert "cannot be read" in done.stderr


def test_a_bad_batch_setting_is_named(workdir: Path) -> None:
    config = write_config(workdir, extra="[batch]\nconcurrency = 0\n")
    jobs = _jsonl(workdir / "in.jsonl", [{"id": "a", "prompt": "p"}])
    done = _batch(config, str(jobs), "--out", "o.jsonl")
    assert done.returncode == 2
    assert "$.batch.concurrency = 0: expected an integer from 1 to 1024" in done.stderr


def test_resume_after_kill_9_runs_no_side_effect_twice(workdir: Path) -> None:
    config = write_config(workdir, script=KILL_SCRIPT)
    rows = [{"id": f"j{i}", "prompt": f"job {i}", "tools": ["charge", "wait"]} for i in range(6)]
    jobs = _jsonl(workdir / "in.jsonl", rows)
    out = workdir / "out.jsonl"
    (workdir / "block").write_text("3")  # runs that charge third or later block in `wait`
    with running(
        [*_command(config), str(jobs), "--out", str(out), "--concurrency", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as child:
        until(lambda: len(list(workdir.glob("waiting-*"))) >= 2, child, what="two blocking calls")
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=HANG)
    before = {r["id"] for r in _records(out)}
    assert before == {"j0", "j1"}
    charged_before = (workdir / "effects.log").read_text().splitlines()
    assert len(charged_before) == 4
    (workdir / "block").unlink()
    done = _batch(config, str(jobs), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["skipped"], summary["total"], summary["done"]) == (2, 4, 4)
    assert summary["resumed"] == 2
    records = _records(out)
    assert sorted(r["id"] for r in records) == [f"j{i}" for i in range(6)]
    charged = (workdir / "effects.log").read_text().splitlines()
    assert sorted(charged) == sorted(f"job {i}" for i in range(6))  # each exactly once
    resumed = [r for r in records if r["resumed"]]
    for record in resumed:
        outcomes = [c["outcome"] for c in record["tool_calls"]]
        assert outcomes == ["recovered", "executed"], record


def test_a_call_that_started_and_never_settled_waits_for_a_decision(workdir: Path) -> None:
    script = [
        {
            "tool_calls": [
                {"name": "charge", "arguments": {"amount": 1}},
                {"name": "wait", "arguments": {}},
            ]
        },
        {"text": "done"},
    ]
    config = write_config(workdir, script=script)
    jobs = _jsonl(
        workdir / "in.jsonl", [{"id": "only", "prompt": "job only", "tools": ["charge", "wait"]}]
    )
    out = workdir / "out.jsonl"
    (workdir / "block").write_text("1")
    # Serial calls: `charge` ran, its settled row waits for the end of the turn, and `wait`
    # blocks: the kill leaves the charge started and never settled.
    with running(
        [*_command(config), str(jobs), "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as child:
        until(lambda: bool(list(workdir.glob("waiting-*"))), child, what="the blocking call")
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=HANG)
    (workdir / "block").unlink()
    done = _batch(config, str(jobs), "--out", str(out), "--approve-all")
    assert done.returncode == 1, done.stderr
    [record] = _records(out)
    assert record["status"] == "deferred"
    assert [d["tool"] for d in record["deferred"]] == ["charge"]
    assert record["deferred"][0]["reason"] == "interrupted"
    assert (workdir / "effects.log").read_text().splitlines() == ["job only"]


def test_ctrl_c_stops_the_batch_and_the_same_command_goes_on(workdir: Path) -> None:
    config = write_config(workdir, script=KILL_SCRIPT)
    rows = [{"id": f"j{i}", "prompt": f"job {i}", "tools": ["charge", "wait"]} for i in range(4)]
    jobs = _jsonl(workdir / "in.jsonl", rows)
    out = workdir / "out.jsonl"
    block = workdir / "block"
    block.write_text("3")
    with running(
        [*_command(config), str(jobs), "--out", str(out), "--concurrency", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        until(lambda: len(list(workdir.glob("waiting-*"))) >= 2, child, what="two blocking calls")
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=HANG)
    assert child.returncode == 1
    assert "interrupted; run the same command again to go on" in stderr
    assert {r["id"] for r in _records(out)} == {"j0", "j1"}
    block.unlink()
    done = _batch(config, str(jobs), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["total"], summary["done"], summary["resumed"]) == (2, 2, 2)
    charged = (workdir / "effects.log").read_text().splitlines()
    assert sorted(charged) == ["job 0", "job 1", "job 2", "job 3"]


def test_the_command_collects_less_often_while_runs_go_and_leaves_the_collector_as_it_was(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from toolwire.cli import _batch, _collector

    seen: list[tuple[tuple[int, int, int], int]] = []
    show = _batch.ProgressLine.show

    def noting(self: Any, counts: Any) -> None:
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        show(self, counts)

    monkeypatch.setattr(_batch.ProgressLine, "show", noting)
    before = gc.get_threshold()
    config = write_config(workdir)
    jobs = _jsonl(workdir / "in.jsonl", [{"id": str(i), "prompt": "hi"} for i in range(3)])
    out = workdir / "out.jsonl"
    assert main(["--config", str(config), "batch", str(jobs), "--out", str(out)]) == 0
    assert len(seen) == 4  # at the start, then after each record
    assert all(t[0] == _collector.YOUNG_THRESHOLD and frozen > 0 for t, frozen in seen)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
