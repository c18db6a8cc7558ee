"""Fixtures of the batch tests: the test tools installed by entry point, a work directory."""

from __future__ import annotations

import os
from pathlib import Path

import batch_tools
import pytest


@pytest.fixture(scope="session")
def tool_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site directory holding the ``batchtest`` plugin and its entry point."""
    return batch_tools.install(tmp_path_factory.mktemp("batch-site"))


@pytest.fixture
def workdir(tmp_path: Path, tool_site: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A work directory; the ``batchtest`` plugin is discoverable here and in subprocesses."""
    monkeypatch.syspath_prepend(str(tool_site))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", f"{tool_site}{os.pathsep}{path}" if path else str(tool_site))
    monkeypatch.chdir(tmp_path)
    return tmp_path
