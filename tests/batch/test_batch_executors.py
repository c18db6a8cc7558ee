"""Batch executors: ``[batch]`` settings, and executors that plugins register by name."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from batch_tools import write_config

import toolwire
from toolwire import Host
from toolwire.batch import (
    BatchExecutor,
    BatchExecutorError,
    BatchJob,
    BatchPlan,
    run_batch,
    run_job,
)
from toolwire.batch._executor import executor_classes
from toolwire.config import ConfigError, load_config


class OneByOne(BatchExecutor):
    """Runs jobs one after the other, newest line first (so its order is its own)."""

    name: ClassVar[str] = "one-by-one"

    async def results(self, jobs: Iterable[BatchJob]) -> AsyncIterator[dict[str, Any]]:
        for job in sorted(jobs, key=lambda j: -j.line):
            yield await run_job(self.host, job, self.plan.job)


class Forgetful(BatchExecutor):
    """Drops every job but the first: the engine must notice."""

    name: ClassVar[str] = "forgetful"

    async def results(self, jobs: Iterable[BatchJob]) -> AsyncIterator[dict[str, Any]]:
        for job in list(jobs)[:1]:
            yield await run_job(self.host, job, self.plan.job)


class Executors:
    __name__ = "executors"

    @toolwire.hookimpl
    def toolwire_batch_executors(self) -> list[object]:
        return [OneByOne, Forgetful, "not a class", type("Nameless", (BatchExecutor,), {})]


class Broken:
    __name__ = "broken"

    @toolwire.hookimpl
    def toolwire_batch_executors(self) -> list[object]:
        raise RuntimeError("boom")


async def test_a_plugin_executor_is_chosen_by_name(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(workdir)
    jobs = workdir / "in.jsonl"
    jobs.write_text(
        "".join(json.dumps({"id": str(i), "prompt": f"p{i}", "tools": []}) + "\n" for i in range(3))
    )
    out = workdir / "out.jsonl"
    async with Host.load(config, plugins=[Broken(), Executors()]) as host:
        assert sorted(executor_classes(host)) == ["forgetful", "local", "one-by-one"]
        summary = await run_batch(
            host, jobs, out, plan=BatchPlan(concurrency=1), executor="one-by-one"
        )
    err = capsys.readouterr().err
    assert "plugin 'broken': toolwire_batch_executors: RuntimeError: boom" in err
    assert "returned 'not a class', which is not a named" in err
    assert "Nameless" in err
    assert summary.executor == "one-by-one"
    lines = out.read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["2", "1", "0"]


async def test_an_unknown_executor_names_the_known_ones(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = workdir / "in.jsonl"
    jobs.write_text(json.dumps({"id": "a", "prompt": "p"}) + "\n")
    async with Host.load(config) as host:
        with pytest.raises(BatchExecutorError, match="'ray'; available executors: local"):
            await run_batch(
                host, jobs, workdir / "o.jsonl", plan=BatchPlan(concurrency=1), executor="ray"
            )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("concurrency = 0", "$.batch.concurrency = 0: expected an integer from 1 to 1024"),
        ('concurrency = "4"', "$.batch.concurrency"),
        ("run_deadline_seconds = 0", "$.batch.run_deadline_seconds = 0.0: expected seconds"),
        ('executor = "Ray Cluster"', "$.batch.executor = 'Ray Cluster': expected an executor name"),
        ("workers = 2", "unknown key"),
    ],
)
def test_batch_settings_are_validated(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "toolwire.toml"
    path.write_text(f"[batch]\n{text}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_batch_settings_defaults(tmp_path: Path) -> None:
    path = tmp_path / "toolwire.toml"
    path.write_text('[batch]\nconcurrency = 16\nexecutor = "ray"\n', encoding="utf-8")
    batch = load_config(path).batch
    assert (batch.concurrency, batch.executor, batch.run_deadline_seconds) == (16, "ray", 600.0)


async def test_an_executor_that_loses_jobs_is_an_error(workdir: Path) -> None:
    config = write_config(workdir)
    jobs = workdir / "in.jsonl"
    jobs.write_text(
        "".join(json.dumps({"id": str(i), "prompt": "p", "tools": []}) + "\n" for i in range(3))
    )
    async with Host.load(config, plugins=[Executors()]) as host:
        with pytest.raises(BatchExecutorError, match="returned 1 record"):
            await run_batch(
                host, jobs, workdir / "o.jsonl", plan=BatchPlan(concurrency=1), executor="forgetful"
            )
