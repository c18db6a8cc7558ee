"""What the terminal chat and the web chat share: approval grants and the token estimate of the
message being written.

- :class:`Grants`: "allow this tool for this conversation" and "always allow" (by tool, by MCP
  server, by side-effect class); the lasting ones live in :class:`GrantStore`, a file beside the
  user's config. A grant answers only a call that asks for approval, never an interrupted or
  deferred one, and never a side effect the system config locks under
  ``[policy] require_approval``.
- :func:`count_message`: about how many tokens a message and the registered instructions sent
  with it take.
"""

from ._grants import Grant, GrantError, Grants, GrantScope, GrantStore, tool_server
from ._tokens import MessageCount, count_message

__all__ = [
    "Grant",
    "GrantError",
    "GrantScope",
    "GrantStore",
    "Grants",
    "MessageCount",
    "count_message",
    "tool_server",
]
