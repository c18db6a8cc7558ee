"""``[artifacts] dir``: the artifacts of tool results written to files, referenced from the result.

Registered only when a directory is configured (a host without one pays nothing). The
references go in the result's ``metadata["artifacts"]``, which the run record and the ledger
keep and no model is shown; the artifacts stay on the result for the caller as well.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Awaitable, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .._markers import hookimpl

if TYPE_CHECKING:
    from ..config import ArtifactsConfig
    from ..messages import ToolCall
    from ..tools import ToolContext, ToolResult

NAME = "toolwire._defaults.artifacts"
"""The registration name of the artifact store (block it to keep artifacts in memory only)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, limit: int = 80) -> str:
    """``text`` as one path component: unsafe characters replaced, no leading dot, bounded."""
    cleaned = _UNSAFE.sub("_", text).lstrip(".")[:limit]
    return cleaned or "_"


def encode(value: Any) -> bytes:
    """An artifact's bytes: bytes as they are, text as UTF-8, anything else as JSON.

    :raises TypeError: for a value JSON cannot hold.
    """
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    try:
        return json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"a {type(value).__name__} is neither bytes, text nor JSON ({exc})"
        ) from None


class ArtifactStore:
    """Writes each result's artifacts under ``dir/<run>/<call>/`` and references them."""

    def __init__(self, config: ArtifactsConfig) -> None:
        if config.dir is None:
            raise ValueError("[artifacts] dir is not set")
        self.root = Path(os.path.expanduser(config.dir))
        self.max_bytes = config.max_bytes

    @hookimpl(wrapper=True)
    def toolwire_execute_tool(
        self, call: ToolCall, context: ToolContext
    ) -> Generator[None, Any, Awaitable[ToolResult]]:
        """Write the artifacts of the call's result and add their references to it."""
        inner = yield
        return self._persisted(inner, context.run_id, call.id)

    async def _persisted(self, inner: Awaitable[ToolResult], run_id: str, call_id: str) -> Any:
        result = await inner
        if not result.artifacts:
            return result
        references = await asyncio.to_thread(self.write, run_id, call_id, result.artifacts)
        return attrs.evolve(result, metadata={**result.metadata, "artifacts": references})

    def write(
        self, run_id: str, call_id: str, artifacts: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """Write ``artifacts`` of one call; one reference per artifact, in name order. One that
        cannot be written (too large, not encodable, the disk refusing) is referenced with an
        ``error`` and costs only itself."""
        folder = self.root / safe_name(run_id) / safe_name(call_id)
        references: list[dict[str, Any]] = []
        for index, name in enumerate(sorted(artifacts)):
            reference: dict[str, Any] = {"name": name}
            try:
                data = encode(artifacts[name])
                if len(data) > self.max_bytes:
                    raise ValueError(
                        f"{len(data)} bytes, over [artifacts] max_bytes = {self.max_bytes}"
                    )
                path = folder / f"{index:03d}-{safe_name(str(name))}"
                _write_whole(path, data)
            except (OSError, TypeError, ValueError) as exc:
                reference["error"] = f"artifact {name!r} was not written: {exc}"
            else:
                reference.update(
                    path=str(path), bytes=len(data), sha256=hashlib.sha256(data).hexdigest()
                )
            references.append(reference)
        return references


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that the file is either absent or complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
