"""Reading llm's tool plugins: their entry points, their ``register_tools`` hook, their toolboxes.

llm's own plugin loader is never run: each distribution's entry points in the group ``llm`` are
loaded here, and the ``register_tools`` implementation they hold is called with a ``register``
callback of this module. What it registers (functions, ``llm.Tool`` objects, ``llm.Toolbox``
classes) becomes toolwire tools; a toolbox is made, and every call of its tools runs, on one
thread of its own.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import inspect
import re
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from toolwire.config import ConfigError
from toolwire.tools import Tool, ToolDefinitionError

from ._call import LlmCall
from ._settings import SECTION, LlmToolsSettings

if TYPE_CHECKING:
    from concurrent.futures import Executor
    from importlib.metadata import EntryPoint

GROUP = "llm"
"""The entry-point group of llm's plugins."""

PREFIX = "llm-tools-"
"""The name every distribution of llm's tool plugins starts with."""


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@attrs.frozen
class Package:
    """An installed distribution with entry points in the group ``llm``."""

    name: str
    version: str
    entry_points: tuple[EntryPoint, ...]

    def describe(self) -> str:
        """``name version`` for messages."""
        return f"{self.name} {self.version}"


def installed_packages() -> dict[str, Package]:
    """Every distribution with entry points in the group ``llm``, by normalised name."""
    from importlib.metadata import entry_points

    grouped: dict[str, tuple[str, str, list[EntryPoint]]] = {}
    for ep in entry_points(group=GROUP):
        dist = ep.dist
        name = dist.name if dist is not None else ep.name
        version = dist.version if dist is not None else "?"
        grouped.setdefault(_normal(name), (name, version, []))[2].append(ep)
    return {
        key: Package(name, version, tuple(points))
        for key, (name, version, points) in sorted(grouped.items())
    }


def chosen_packages(
    settings: LlmToolsSettings, installed: dict[str, Package]
) -> tuple[list[Package], list[str]]:
    """The packages ``settings`` asks for (every ``llm-tools-*`` one by default), and why a
    named one cannot be used."""
    if settings.packages is None:
        return [p for key, p in installed.items() if key.startswith(PREFIX)], []
    chosen: list[Package] = []
    problems: list[str] = []
    for name in settings.packages:
        package = installed.get(_normal(name))
        if package is None:
            known = ", ".join(p.name for p in installed.values()) or "none"
            problems.append(
                f"{SECTION} packages names {name!r}, which is not installed with entry points "
                f"in the group {GROUP!r} (installed: {known})"
            )
        else:
            chosen.append(package)
    return chosen, problems


@attrs.define
class Registered:
    """What one package's ``register_tools`` registered."""

    package: Package
    tools: list[Any] = attrs.Factory(list)
    """``llm.Tool`` objects (plain functions are wrapped as llm wraps them)."""
    toolboxes: dict[str, type] = attrs.Factory(dict)
    """``llm.Toolbox`` subclasses by their name."""
    problems: list[str] = attrs.Factory(list)
    """Registrations that cannot be used (each costs only itself)."""

    def register(self, tool_or_function: Any, name: str | None = None) -> None:
        """The ``register`` callback ``register_tools`` receives, as llm defines it."""
        import llm  # the package itself imports it: already loaded

        if inspect.isclass(tool_or_function):
            if issubclass(tool_or_function, llm.Toolbox):
                self.toolboxes[name or tool_or_function.__name__] = tool_or_function
                return
            problem = f"the class {tool_or_function.__name__} is not an llm.Toolbox"
        elif isinstance(tool_or_function, llm.Tool):
            if name:
                tool_or_function = dataclasses.replace(tool_or_function, name=name)
            self.tools.append(tool_or_function)
            return
        elif callable(tool_or_function):
            try:
                made = llm.Tool.function(tool_or_function, name=name)  # type: ignore[no-untyped-call]
            except Exception as exc:
                problem = f"{tool_or_function!r:.60} cannot be a tool ({type(exc).__name__}: {exc})"
            else:
                self.tools.append(made)
                return
        else:
            problem = f"{tool_or_function!r:.60} is not a function, an llm.Tool or a toolbox class"
        self.problems.append(f"{self.package.describe()} registers {problem}")


def read_package(package: Package) -> Registered:
    """Load ``package``'s entry points and call their ``register_tools`` hooks.

    :raises Exception: whatever importing the package or its hook raised; the package is then
        left out.
    """
    found = Registered(package)
    hooks = [hook for ep in package.entry_points for hook in _register_hooks(ep.load())]
    for hook in hooks:
        hook(register=found.register)
    return found


def _register_hooks(plugin: object) -> Iterable[Callable[..., Any]]:
    """The ``register_tools`` implementations of one loaded entry point (marked with
    ``@llm.hookimpl``, under their own name or ``specname``)."""
    for attribute in dir(plugin):
        value = getattr(plugin, attribute, None)
        options = getattr(value, "llm_impl", None)
        if (
            callable(value)
            and isinstance(options, dict)
            and (options.get("specname") or attribute) == "register_tools"
        ):
            yield value


def _required_arguments(toolbox: type) -> list[str]:
    try:
        signature = inspect.signature(toolbox)
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in signature.parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _class_tool_names(toolbox: type) -> list[str]:
    """The names llm gives a toolbox's method tools, without making the toolbox."""
    try:
        return [tool.name for tool in toolbox.method_tools()]  # type: ignore[attr-defined]
    except Exception:
        return []


class LlmTools:
    """The tools of llm's tool plugins for one host, the threads of its toolboxes, and what
    could not be used."""

    def __init__(self, settings: LlmToolsSettings) -> None:
        self.settings = settings
        self.problems: list[str] = []
        self.threads: list[concurrent.futures.ThreadPoolExecutor] = []
        self._tools: list[Tool] | None = None
        self._finalizer = weakref.finalize(self, _shut_down, self.threads)

    def tools(self) -> list[Tool]:
        """The configured tools of every chosen package, read and made once."""
        if self._tools is None:
            self._tools = self._collect()
        return self._tools

    async def aclose(self) -> None:
        """End the toolboxes' threads (a call still running finishes in its thread)."""
        self._finalizer()

    # -- collecting ----------------------------------------------------------------------------

    def _collect(self) -> list[Tool]:
        settings = self.settings
        packages, self.problems = chosen_packages(settings, installed_packages())
        made: dict[str, tuple[Tool, Package]] = {}
        toolbox_names: set[str] = set()
        seen: set[str] = set()
        for package in packages:
            try:
                registered = read_package(package)
            except Exception as exc:
                self.problems.append(f"{package.describe()}: {type(exc).__name__}: {exc}")
                continue
            self.problems += registered.problems
            toolbox_names.update(registered.toolboxes)
            offered: list[tuple[Any, Executor | None]] = [(t, None) for t in registered.tools]
            for name, toolbox in registered.toolboxes.items():
                seen.update(_class_tool_names(toolbox))
                offered += self._toolbox(package, name, toolbox)
            for llm_tool, thread in offered:
                seen.add(llm_tool.name)
                if not settings.wanted(llm_tool.name):
                    continue
                tool = self._tool(package, llm_tool, thread)
                if tool is None:
                    continue
                if tool.name in made:
                    self.problems.append(
                        f"tool {tool.name!r} is registered by {made[tool.name][1].describe()} "
                        f"and {package.describe()}; the first is kept"
                    )
                    continue
                made[tool.name] = (tool, package)
        self._check_names(seen, toolbox_names)
        return [tool for tool, _ in made.values()]

    def _toolbox(self, package: Package, name: str, toolbox: type) -> list[tuple[Any, Executor]]:
        """The llm tools of ``toolbox`` made from its config, each with the thread the toolbox
        was made on and its calls run on; none when its tools are not wanted or it cannot be
        made."""
        settings = self.settings
        names = _class_tool_names(toolbox)
        if names and not any(settings.wanted(n) for n in names):
            return []
        arguments = settings.toolboxes.get(name, {})
        where = settings.toolbox_key(name)
        missing = [a for a in _required_arguments(toolbox) if a not in arguments]
        if missing:
            self.problems.append(
                f"toolbox {name} of {package.describe()} needs {', '.join(missing)}: set "
                f"{'it' if len(missing) == 1 else 'them'} in {where}, or leave the package out "
                f"with {SECTION} packages"
            )
            return []
        thread = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"llm-toolbox-{name}"
        )
        self.threads.append(thread)

        def make() -> list[Any]:
            instance = toolbox(**arguments)
            instance.prepare()
            return list(instance.tools())

        timeout = settings.startup_timeout
        try:
            return [(t, thread) for t in thread.submit(make).result(timeout=timeout)]
        except concurrent.futures.TimeoutError:
            problem = f"was not made within {timeout:g} s ({SECTION} startup_timeout)"
        except Exception as exc:
            # The arguments' names only: their values may be secrets, kept out of the error too.
            given = ", ".join(sorted(arguments)) or "no arguments"
            error = f"{type(exc).__name__}: {exc}"
            for value in arguments.values():
                if isinstance(value, str) and len(value) >= 4:
                    error = error.replace(value, "[redacted]")
            problem = f"could not be made from {where} ({given}): {error}"
        self.problems.append(f"toolbox {name} of {package.describe()} {problem}")
        thread.shutdown(wait=False, cancel_futures=True)
        self.threads.remove(thread)
        return []

    def _tool(
        self,
        package: Package,
        llm_tool: Any,
        thread: Executor | None,
    ) -> Tool | None:
        name = llm_tool.name
        implementation = llm_tool.implementation
        if implementation is None:
            self.problems.append(
                f"tool {name!r} of {package.describe()} has no implementation to run"
            )
            return None
        schema = dict(llm_tool.input_schema or {})
        if "additionalProperties" not in schema and _fixed_keywords(implementation):
            # The function takes only its own parameters: a misspelt argument is refused
            # with the list of valid ones instead of failing the call.
            schema["additionalProperties"] = False
        try:
            tool = Tool.from_schema(
                name,
                inspect.cleandoc(llm_tool.description or ""),
                schema,
                LlmCall.of(name, implementation, thread, self.settings.error_prefix),
                policy=self.settings.policy_of(name),
                normalize=True,
            )
        except (ToolDefinitionError, ConfigError) as exc:
            self.problems.append(f"tool {name!r} of {package.describe()}: {exc}")
            return None
        return attrs.evolve(tool, policy_config_key=self.settings.policy_key(name))

    def _check_names(self, seen: set[str], toolboxes: set[str]) -> None:
        """Report names in the config that no chosen package has (a typo loses a setting)."""
        settings = self.settings
        listed = ", ".join(sorted(seen)) or "none"
        for what, names in (
            ("include", settings.include or ()),
            ("exclude", settings.exclude),
            ("policy", settings.policy),
        ):
            unknown = sorted(set(names) - seen)
            if unknown:
                self.problems.append(
                    f"{SECTION} {what} names {', '.join(map(repr, unknown))}, which no chosen "
                    f"package registers; their tools: {listed}"
                )
        unknown = sorted(set(settings.toolboxes) - toolboxes)
        if unknown:
            known = ", ".join(sorted(toolboxes)) or "none"
            self.problems.append(
                f"{SECTION} toolboxes names {', '.join(map(repr, unknown))}, which no chosen "
                f"package registers; their toolboxes: {known}"
            )


def _fixed_keywords(implementation: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(implementation).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.kind is not p.VAR_KEYWORD for p in parameters)


def _shut_down(threads: list[concurrent.futures.ThreadPoolExecutor]) -> None:
    for thread in threads:
        thread.shutdown(wait=False, cancel_futures=True)
    threads.clear()
