"""Testing kit: a scripted model, fake provider servers and the adapter conformance suite.

``ScriptedModel`` answers from a script in process. The fake servers (``FakeOpenAIChatServer``,
``FakeOpenAIResponsesServer``, ``FakeAnthropicServer``) speak the real wire formats on
127.0.0.1 and record every request; they are imported on first use (they need aiohttp's server).
The conformance suite is the pytest plugin ``toolwire.testing.conformance``.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr
from ._scripted import ScriptedModel, ScriptTurn, example_arguments, tool_call

if TYPE_CHECKING:
    from ._servers import (
        ErrorReply,
        FakeAnthropicServer,
        FakeOpenAIChatServer,
        FakeOpenAIResponsesServer,
        FakeProviderServer,
        RecordedRequest,
        Reply,
        ScriptItem,
        ServerCall,
        ServerTurn,
    )

_SERVER_NAMES = frozenset(
    {
        "ErrorReply",
        "FakeAnthropicServer",
        "FakeOpenAIChatServer",
        "FakeOpenAIResponsesServer",
        "FakeProviderServer",
        "RecordedRequest",
        "Reply",
        "ScriptItem",
        "ServerCall",
        "ServerTurn",
    }
)


# The fake servers import aiohttp.web; hosts that only use the scripted model never pay it.
__getattr__ = lazy_getattr(globals(), dict.fromkeys(_SERVER_NAMES, "._servers"))


__all__ = [
    "ErrorReply",
    "FakeAnthropicServer",
    "FakeOpenAIChatServer",
    "FakeOpenAIResponsesServer",
    "FakeProviderServer",
    "RecordedRequest",
    "Reply",
    "ScriptItem",
    "ScriptTurn",
    "ScriptedModel",
    "ServerCall",
    "ServerTurn",
    "example_arguments",
    "tool_call",
]
