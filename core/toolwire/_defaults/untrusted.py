"""Default plugin: the built-in untrusted-content filter (``toolwire.untrusted.filter_text``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._markers import hookimpl

if TYPE_CHECKING:
    from ..untrusted import FilterContext, FilteredText


@hookimpl(trylast=True)
def toolwire_filter_untrusted(texts: Sequence[str], context: FilterContext) -> list[FilteredText]:
    """Neutralise role tokens, tool envelopes and impersonation lines; flag injection phrasing."""
    from ..untrusted import default_filter

    return default_filter(texts)
