"""Context passages that plugins add to a model request (classic retrieval).

A plugin answers the ``toolwire_request_context`` hook with a :class:`RequestContext`: text the
model reads with the latest user message, the sources it came from, and the trust level those
sources require from this and every later provider of the run. The loop asks once per round,
after the round's offer is resolved, so a plugin can contribute only when its own tool is not
offered (a model without tool calling, the tool switched off, a provider trusted too little).
"""

from ._records import ContextRequest, RequestContext

__all__ = ["ContextRequest", "RequestContext"]
