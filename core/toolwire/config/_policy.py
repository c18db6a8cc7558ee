"""``[policy]``: approval and refusal by side effect, result size, paths, unattended runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from .._effects import SideEffect
from .._fieldwise import record_eq, record_hash, record_repr
from .._surface import GUARDED_EFFECTS
from ._fields import each_item, setting, whole


def _side_effect_problem(effect: Any) -> str | None:
    names = [effect.value for effect in SideEffect]
    return None if effect in names else "one of " + ", ".join(names)


def _directory_problem(example: str) -> Callable[[str], str | None]:
    def problem(path: str) -> str | None:
        return f"a directory path such as {example!r}" if not path or "\x00" in path else None

    return problem


_EFFECTS = "list of side effects"


@attrs.frozen(kw_only=True, slots=False)
class PolicyConfig:
    """``[policy]``: approval and refusal by side effect, result size, unclassified tools."""

    __repr__ = record_repr
    __eq__ = record_eq
    __hash__ = record_hash

    require_approval: tuple[str, ...] = setting(
        (),
        check=each_item(_side_effect_problem),
        kind=_EFFECTS,
        help="calls of tools with these side effects wait for a person (`destructive`, "
        "`external_spend`, …)",
    )
    deny: tuple[str, ...] = setting(
        (),
        check=each_item(_side_effect_problem),
        kind=_EFFECTS,
        help="calls of tools with these side effects are refused (`blocked`)",
    )
    strict: bool = setting(False, help="refuse tools that declare no side effects")
    max_result_bytes: int | None = setting(
        None, bounds=(1, 2**30), unit="bytes", help="cap on every result sent to a model"
    )
    max_untrusted_result_bytes: int = setting(
        65_536,
        bounds=(1024, 2**30),
        unit="bytes",
        help="cap on the result of a tool that returns outside content "
        "(`returns_untrusted_content`) and did not filter it itself; the host then also runs it "
        "through the untrusted-content filter, whatever its status",
    )
    workspace: str | None = setting(
        None,
        check=whole(_directory_problem(".")),
        kind="path",
        default_text="the current directory",
        help="the directory the path arguments of file tools (`path_arguments`) must lie in; a "
        "relative path is taken from the directory of the config file that sets it",
    )
    trusted_roots: tuple[str, ...] = setting(
        (),
        check=each_item(_directory_problem("/srv/data")),
        kind="list of paths",
        help="more directories path arguments may lie in (relative ones as `workspace`)",
    )
    unattended: bool = setting(
        False,
        help="nobody watches the runs: calls of tools not marked `background_safe` (by default: "
        "every tool that is not read-only, or that asks for approval) are refused; `toolwire "
        "batch --unattended` sets it",
    )
    guarded: tuple[str, ...] = setting(
        GUARDED_EFFECTS,
        check=each_item(_side_effect_problem),
        kind=_EFFECTS,
        help="side effects a person agrees to first: on an interactive surface (`run` on a "
        "terminal, `chat`, the web chat) the call is put to the person; on an unattended one "
        "(`run` without a terminal, `batch`, `mcp serve`) it is refused (`blocked`, the model is "
        "told why). `[]` runs them without asking. A host that names no surface (Python use "
        "without `surface=`) applies only `require_approval` and `deny`",
    )
    unattended_allow: tuple[str, ...] = setting(
        (),
        check=each_item(_side_effect_problem),
        kind=_EFFECTS,
        help="guarded side effects that unattended surfaces run anyway; `--approve-all` (`run`, "
        "`batch`) allows every guarded one for that command, `mcp serve --approve TOOL` one tool",
    )
