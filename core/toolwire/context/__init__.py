"""The context of a model request: passages plugins add, and a conversation kept inside the
model's context window.

A plugin answers the ``toolwire_request_context`` hook with a :class:`RequestContext`: text the
model reads with the latest user message, the sources it came from, and the trust level those
sources require from this and every later provider of the run. The loop asks once per round,
after the round's offer is resolved, so a plugin can contribute only when its own tool is not
offered (a model without tool calling, the tool switched off, a provider trusted too little).

When a conversation nears ``[provider] context_tokens``, the loop clears old tool results and
has older turns summarised: ``toolwire_summarize_conversation`` is asked with a
:class:`SummaryRequest`, and :func:`transcript` writes turns out as plain text for a summary.
"""

from ._compact import SummaryRequest, transcript
from ._records import ContextRequest, RequestContext

__all__ = [
    "ContextRequest",
    "RequestContext",
    "SummaryRequest",
    "transcript",
]
