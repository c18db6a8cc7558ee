"""Content from outside (web pages, search results) on its way to the model.

A tool that returns outside content runs it through :func:`filter_untrusted` after truncating
it; that calls the ``toolwire_filter_untrusted`` hook, whose built-in implementation is
:func:`filter_text`: it neutralises text that could forge structure (chat-template role
tokens, tool-call and tool-result envelopes, system-prompt impersonation lines) and flags
common injection phrasing. A plugin can answer the hook first with a better classifier.
Filtering never drops content; when no filter can run, the content passes and a
``ContentFiltered`` event warns the user.
"""

from ._apply import filter_result, filter_untrusted
from ._builtin import default_filter, filter_text
from ._records import FilterContext, FilteredText, FilterOutcome

__all__ = [
    "FilterContext",
    "FilterOutcome",
    "FilteredText",
    "default_filter",
    "filter_result",
    "filter_text",
    "filter_untrusted",
]
