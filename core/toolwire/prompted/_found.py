"""``Found``: one call read from a model's text, before it gets an id."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Found:
    """A call read from text: the tool name, the arguments, or why they could not be read.

    ``name`` is ``""`` when no name could be read at all.
    """

    name: str
    arguments: dict[str, Any] | None
    reason: str | None
