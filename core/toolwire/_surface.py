"""Surfaces: where a host's runs happen (a terminal, a chat, a web page, a batch, an MCP client).

One notion serves two rules: which tools a surface offers (``[surfaces.<name>] allow/deny``, and
a closed offer for hosted surfaces whose config names no tools) and what happens to a call of a
guarded tool (``[policy] guarded``): an interactive surface asks the person first, an unattended
one refuses the call.
"""

from __future__ import annotations

import string

import attrs

_NAME_CHARS = frozenset(string.ascii_lowercase + string.digits + "_-")


def is_surface_name(text: object) -> bool:
    """Whether ``text`` names a surface: a lower-case word of letters, digits, ``-`` and ``_``
    starting with a letter, at most 64 characters (``chat``, ``mcp-serve``, ``helpdesk``)."""
    return (
        isinstance(text, str)
        and 0 < len(text) <= 64
        and text[0] in string.ascii_lowercase
        and set(text) <= _NAME_CHARS
    )


GUARDED_EFFECTS = ("destructive", "external_spend", "payment", "shell")
"""The default of ``[policy] guarded``: the side effects a person agrees to before a call."""


def _check_name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not is_surface_name(value):
        raise ValueError(
            f"surface name {value!r}: expected a lower-case word of letters, digits, '-' and '_' "
            "starting with a letter (like 'chat' or 'mcp-serve')"
        )


@attrs.frozen(kw_only=True)
class Surface:
    """Where a host's runs happen, and whether a person is there to answer.

    ``interactive`` surfaces have a person watching each run, who is asked before a call of a
    guarded tool (``[policy] guarded``); on the others (unattended) such a call is refused
    unless ``[policy] unattended_allow`` lists its side effects. A ``hosted`` surface runs as a
    service (a batch, an MCP server, a web chat on a network address): it offers no tool until
    the config names some. ``approved`` names tools a person approved in advance for this
    surface (``toolwire mcp serve --approve``): they are neither asked about nor refused for
    the guard.

    The built-in surfaces are :data:`BUILTIN_SURFACES`; an application names its own
    (``Surface(name="helpdesk", interactive=True)``).
    """

    name: str = attrs.field(validator=_check_name)
    interactive: bool
    hosted: bool = False
    approved: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)

    @classmethod
    def of(cls, surface: Surface | str) -> Surface:
        """``surface`` itself, or the built-in surface of that name.

        :raises ValueError: for a name that is no built-in surface (an application's own
            surface is made with ``Surface(name=…, interactive=…)``).
        """
        if isinstance(surface, Surface):
            return surface
        found = BUILTIN_SURFACES.get(surface)
        if found is None:
            known = ", ".join(BUILTIN_SURFACES)
            raise ValueError(
                f"no built-in surface is named {surface!r}; built-in surfaces: {known} (an "
                "application's own: toolwire.Surface(name=..., interactive=...))"
            )
        return found


BUILTIN_SURFACES: dict[str, Surface] = {
    "run": Surface(name="run", interactive=True),
    "chat": Surface(name="chat", interactive=True),
    "web": Surface(name="web", interactive=True),
    "batch": Surface(name="batch", interactive=False, hosted=True),
    "mcp-serve": Surface(name="mcp-serve", interactive=False, hosted=True),
}
"""The surfaces of toolwire's own commands: ``toolwire run`` (interactive on a terminal; the
command declares it unattended otherwise), ``toolwire chat``, the web chat (hosted when bound to
a network address), ``toolwire batch`` and ``toolwire mcp serve`` (unattended and hosted)."""
