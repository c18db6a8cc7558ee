"""Lint checks on tool definitions, run by ``toolwire doctor`` over every enabled tool."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

import attrs

from ._model import Tool
from ._names import is_snake_case, provider_name_problems, suggest_tool_name, tool_name_problems
from ._normalize import FOREIGN_WORDS
from ._typeschema import is_union, strip_annotated
from ._validation import resolve_ref

Severity = Literal["warning", "info"]

# Phrasing that tells the model how to behave, which belongs in ``instructions``: imperatives
# addressed to the model, and absolute words that are often (not always) such rules.
_BEHAVIOUR = re.compile(
    r"\b(you must|you should|you need to|make sure|be sure to|before answering|"
    r"before responding|important:)",
    re.IGNORECASE,
)
_ABSOLUTE = re.compile(r"\b(always|never|do not|don't|must not|ignore)\b", re.IGNORECASE)


@attrs.frozen(kw_only=True)
class LintFinding:
    """One thing ``toolwire doctor`` reports about a tool.

    ``code`` is stable for filtering: ``missing-description``, ``parameter-without-description``,
    ``unsafe-name``, ``not-snake-case``, ``not-strict-compatible``, ``instructions-in-description``,
    ``null-means-default``, ``normalized-schema``, ``foreign-schema-word``,
    ``undeclared-side-effect``, ``undeclared-path-argument``, ``inline-may-wait``.
    """

    tool: str
    code: str
    message: str
    severity: Severity = "warning"
    parameter: str | None = None

    def __str__(self) -> str:
        where = f"{self.tool}({self.parameter})" if self.parameter else self.tool
        return f"{self.severity}: {where}: {self.message} [{self.code}]"


_FOREIGN_PATHS = tuple(f".{word}" for word in FOREIGN_WORDS)


def _properties(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _undescribed(node: Any, root: Mapping[str, Any], path: str, out: list[str], depth: int) -> None:
    node = resolve_ref(node, root)
    if not isinstance(node, Mapping) or depth > 8:
        return
    for key, sub in _properties(node).items():
        where = f"{path}.{key}" if path else key
        resolved = resolve_ref(sub, root)
        has_text = isinstance(sub, Mapping) and sub.get("description")
        has_text = has_text or (isinstance(resolved, Mapping) and resolved.get("description"))
        if not has_text:
            out.append(where)
        _undescribed(resolved, root, where, out, depth + 1)
    items = node.get("items")
    if isinstance(items, Mapping):
        _undescribed(items, root, f"{path}[]", out, depth + 1)
    for member in node.get("anyOf") or ():
        _undescribed(member, root, path, out, depth + 1)


_PATH_NAME = re.compile(r"(?:^|_)(?:paths?|files?|filename|filenames|dir|directory|folder)$")


def _undeclared_paths(tool: Tool) -> list[str]:
    """String parameters named like paths of a file tool that are not in ``path_arguments``."""
    effects = {str(getattr(e, "value", e)) for e in tool.policy.side_effects or ()}
    if not effects & {"reads_files", "writes_files"}:
        return []
    out = []
    for name, sub in _properties(tool.parameters).items():
        if name in tool.path_arguments or not _PATH_NAME.search(name):
            continue
        kinds = sub.get("type") if isinstance(sub, Mapping) else None
        items = sub.get("items") if isinstance(sub, Mapping) else None
        item_kind = items.get("type") if isinstance(items, Mapping) else None
        if kinds == "string" or (kinds == "array" and item_kind == "string"):
            out.append(name)
    return out


def lint_tool(tool: Tool) -> list[LintFinding]:
    """Findings about one tool: what keeps models from using it well on every provider."""
    return [finding for check in _CHECKS for finding in check(tool)]


def _finding(
    tool: Tool,
    code: str,
    message: str,
    *,
    parameter: str | None = None,
    severity: Severity = "warning",
) -> LintFinding:
    return LintFinding(
        tool=tool.name, code=code, message=message, parameter=parameter, severity=severity
    )


def _from_python(tool: Tool) -> bool:
    """Whether the tool is a Python function, so advice about Python code can be acted on.

    A tool defined by a schema (an MCP server's, another ecosystem's) is fixed where that schema
    is written: Python advice would be advice its user cannot act on.
    """
    return getattr(tool._runner, "function", None) is not None


def _check_description(tool: Tool) -> Iterator[LintFinding]:
    description = tool.description_for_model or tool.description
    if not description.strip():
        yield _finding(
            tool,
            "missing-description",
            "the tool has no description: a model decides whether to call a tool from it "
            "(write a docstring or pass description=...)",
        )


def _check_name(tool: Tool) -> Iterator[LintFinding]:
    broken = tool_name_problems(tool.name)
    unsafe = provider_name_problems(tool.name)
    if broken:
        yield _finding(
            tool, "unsafe-name", f"the name {tool.name!r} breaks the name rule: {'; '.join(broken)}"
        )
    elif unsafe:
        # Valid, but some API or dialect takes it only under an alias: worth knowing, not wrong.
        yield _finding(
            tool,
            "unsafe-name",
            f"the name {tool.name!r} is not taken unchanged everywhere: {'; '.join(unsafe)}",
            severity="info",
        )
    if not broken and not is_snake_case(tool.name):
        suggestion = suggest_tool_name(tool.name)
        yield _finding(
            tool,
            "not-snake-case",
            f"the name {tool.name!r} is not lower-case snake_case, the one spelling every "
            "provider and prompted dialect takes unchanged and models read best"
            + (f": rename it {suggestion!r}" if suggestion else "")
            + " (a name from another host may keep its spelling: it is sent under an alias "
            "where an API refuses it)",
        )


def _check_schema_notes(tool: Tool) -> Iterator[LintFinding]:
    # Notes on the words JSON Schema ignores (read all the same) warn; other notes inform.
    foreign = [n for n in tool.schema_notes if n.split(":", 1)[0].endswith(_FOREIGN_PATHS)]
    normalized = [n for n in tool.schema_notes if n not in foreign]
    if foreign:
        yield _finding(
            tool,
            "foreign-schema-word",
            "the schema uses words JSON Schema ignores, read by their meaning in other hosts "
            f"({'; '.join(foreign)}); write standard JSON Schema, which every provider reads the "
            'same way: leave an optional property out of its object\'s "required", and allow '
            'null with "type": [T, "null"]',
        )
    if normalized:
        yield _finding(
            tool,
            "normalized-schema",
            f"the schema was written in another host's dialect and normalised "
            f"({len(normalized)} change(s)): {'; '.join(normalized)}",
            severity="info",
        )


def _check_parameter_descriptions(tool: Tool) -> Iterator[LintFinding]:
    undescribed: list[str] = []
    _undescribed(tool.parameters, tool.parameters, "", undescribed, 0)
    if not undescribed:
        return
    python = _from_python(tool)
    for path in undescribed:
        yield _finding(
            tool,
            "parameter-without-description",
            f"parameter {path} has no description: a model cannot use an argument it cannot "
            + (
                'read about (use Annotated[T, "…"] or the docstring\'s Args section)'
                if python
                else "read about (its schema gives none; whoever writes that schema can add one)"
            ),
            parameter=path,
        )


def _check_strict(tool: Tool) -> Iterator[LintFinding]:
    if tool.strict is False or tool.external:
        return
    projection = tool.strict_projection()
    if not projection.ok:
        yield _finding(
            tool,
            "not-strict-compatible",
            "strict mode cannot express the schema, so hosts that bind output get this tool "
            f"non-strict: {'; '.join(projection.problems)}",
            severity="info",
        )


def _check_instructions(tool: Tool) -> Iterator[LintFinding]:
    """The first description that tells the model how to behave (one finding at most)."""
    for text, where in (
        (tool.description, "description"),
        (tool.description_for_model, "description_for_model"),
    ):
        if not text:
            continue
        match = _BEHAVIOUR.search(text)
        found = match or _ABSOLUTE.search(text)
        if found is not None:
            yield _finding(
                tool,
                "instructions-in-description",
                f"the {where} tells the model how to behave ({found.group(0)!r}); "
                + (
                    "put behaviour rules in instructions=..., which go into the system prompt "
                    "when the tool is offered, and keep the description to what the tool does"
                    if _from_python(tool)
                    else "the tool's own definition says so; whoever writes it can keep the "
                    "description to what the tool does"
                ),
                severity="warning" if match else "info",
            )
            return


def _check_effects(tool: Tool) -> Iterator[LintFinding]:
    for effect, seen in _undeclared_effects(tool):
        yield _finding(
            tool,
            "undeclared-side-effect",
            f"the function uses {', '.join(seen)} but the tool does not declare the side effect "
            f"{effect!r}; declare it (side_effects=[...]) so [policy] can ask for approval or "
            "refuse it",
        )
    for name in _undeclared_paths(tool):
        yield _finding(
            tool,
            "undeclared-path-argument",
            f"the tool reads or writes files and parameter {name} looks like a path, but it is "
            "not in path_arguments; list it (path_arguments=[...]) so [policy] workspace and "
            "trusted_roots are enforced before the tool runs",
            parameter=name,
        )


def _check_inline(tool: Tool) -> Iterator[LintFinding]:
    if not tool.policy.inline:
        return
    reasons = []
    effects = sorted(str(e) for e in tool.policy.side_effects or () if str(e) in _WAITING_EFFECTS)
    if effects:
        reasons.append(f"declares {', '.join(effects)}")
    runner = tool._runner
    function = getattr(runner, "function", None) or getattr(runner, "handler", None)
    if function is not None:
        names, _ = _code_facts(function)
        seen = names & (_WAITING_NAMES | _PROCESS_NAMES)
        if seen:
            reasons.append(f"uses {', '.join(sorted(seen))}")
    if reasons:
        yield _finding(
            tool,
            "inline-may-wait",
            f"the tool runs inline, on the event loop, but {' and '.join(reasons)}: while it "
            "waits every other call, stream and conversation of the process waits, and no "
            "timeout stops it; drop inline=True so it runs in a worker thread",
        )


def _check_null_defaults(tool: Tool) -> Iterator[LintFinding]:
    for name in _none_unreachable(tool):
        yield _finding(
            tool,
            "null-means-default",
            f"parameter {name} accepts None but has another default; a null from the model means "
            "'left out', so the function never receives None (make None the default, or drop "
            "None from the type)",
            parameter=name,
            severity="info",
        )
    required = tool.parameters.get("required") or ()
    for name, sub in _properties(tool.parameters).items():
        if name in required or not isinstance(sub, Mapping):
            continue
        if "default" in sub and _accepts_null(sub):
            yield _finding(
                tool,
                "null-means-default",
                f"parameter {name} is optional with default {sub['default']!r} and also accepts "
                "null; "
                "a null from the model means 'left out', so the default is used, never null",
                parameter=name,
                severity="info",
            )


_CHECKS: tuple[Callable[[Tool], Iterable[LintFinding]], ...] = (
    _check_description,
    _check_name,
    _check_schema_notes,
    _check_parameter_descriptions,
    _check_strict,
    _check_instructions,
    _check_effects,
    _check_inline,
    _check_null_defaults,
)
"""The checks of :func:`lint_tool`, in the order their findings are reported."""


def _accepts_null(node: Mapping[str, Any]) -> bool:
    kinds = node.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    return any(isinstance(m, Mapping) and m.get("type") == "null" for m in node.get("anyOf") or ())


def _none_unreachable(tool: Tool) -> list[str]:
    """Optional parameters of a function tool typed ``X | None`` whose default is not None."""
    function = tool.__wrapped__
    if function is None or tool.parameters is None:
        return []
    try:
        signature = inspect.signature(function)
        hints = typing.get_type_hints(getattr(function, "__func__", function), include_extras=True)
    except (TypeError, ValueError, NameError):
        return []
    out = []
    offered = _properties(tool.parameters)
    for name, parameter in signature.parameters.items():
        if name not in offered or parameter.default in (None, inspect.Parameter.empty):
            continue
        base, _ = strip_annotated(hints.get(name))
        if is_union(base) and type(None) in typing.get_args(base):
            out.append(name)
    return out


# Names in a function's own code that show it starts processes or touches files. A heuristic:
# what the function's callees do is not seen, and a name may belong to something else, so the
# ambiguous ones count only beside the module they come from.
_PROCESS_NAMES = frozenset(
    {
        "subprocess",
        "Popen",
        "create_subprocess_exec",
        "create_subprocess_shell",
        "popen",
        "execv",
        "execvp",
        "spawnv",
        "spawnl",
    }
)
_OS_PROCESS_NAMES = frozenset({"system"})  # os.system, not platform.system
# What an inline tool (run on the event loop) must not wait for: the effects that mean waiting on
# something outside, and the names in its code that show it does.
_WAITING_EFFECTS = frozenset({"network", "shell", "external_service", "installs_dependencies"})
_WAITING_NAMES = frozenset(
    {"sleep", "urlopen", "requests", "httpx", "socket", "create_connection", "input"}
)
_FILE_WRITE_NAMES = frozenset(
    {
        "write_text",
        "write_bytes",
        "unlink",
        "rmtree",
        "mkdir",
        "makedirs",
        "copyfile",
        "copytree",
        "touch",
    }
)
_OS_FILE_WRITE_NAMES = frozenset({"remove", "rename", "replace", "move"})  # also str/list methods
_FILE_READ_NAMES = frozenset({"open", "read_text", "read_bytes", "listdir", "scandir", "iterdir"})
_WRITE_MODES = frozenset({"w", "wb", "wt", "a", "ab", "at", "x", "xb", "w+", "r+", "a+", "r+b"})


def _code_facts(function: Any) -> tuple[set[str], set[str]]:
    """The global and attribute names, and the string constants, of a function's code and of
    the code nested in it."""
    code = getattr(function, "__code__", None)
    if code is None:
        code = getattr(getattr(function, "__func__", None), "__code__", None)
    names: set[str] = set()
    strings: set[str] = set()
    stack = [code] if code is not None else []
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        for constant in current.co_consts:
            if inspect.iscode(constant):
                stack.append(constant)
            elif isinstance(constant, str) and len(constant) <= 3:
                strings.add(constant)
    return names, strings


def _undeclared_effects(tool: Tool) -> list[tuple[str, list[str]]]:
    """The side effects the tool's function visibly has and does not declare."""
    function = getattr(tool._runner, "function", None)
    if function is None:
        return []
    names, strings = _code_facts(function)
    modules = names & {"os", "shutil"}
    declared = {str(e) for e in tool.policy.side_effects or ()}
    found: list[tuple[str, list[str]]] = []
    process = names & _PROCESS_NAMES
    if "os" in names:
        process |= names & _OS_PROCESS_NAMES
    if process and "shell" not in declared:
        found.append(("shell", sorted(process)))
    writes = names & _FILE_WRITE_NAMES
    if modules:
        writes |= names & _OS_FILE_WRITE_NAMES
    if "open" in names and strings & _WRITE_MODES:
        writes.add("open")
    if writes and not declared & {"writes_files", "destructive"}:
        found.append(("writes_files", sorted(writes)))
    reads = names & _FILE_READ_NAMES
    if reads and not writes and not declared & {"reads_files", "writes_files", "destructive"}:
        found.append(("reads_files", sorted(reads)))
    return found
