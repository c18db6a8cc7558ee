"""Loading the LangChain tools named in the config and turning each into a toolwire tool.

Imported only when ``[tools.langchain] tools`` names some: it imports ``langchain_core``.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from typing import Any

import attrs
from langchain_core.tools import BaseTool, BaseToolkit, InjectedToolArg, InjectedToolCallId
from langchain_core.tools.base import get_all_basemodel_annotations
from langchain_core.utils.function_calling import convert_to_openai_function

from toolwire.config import ConfigError
from toolwire.tools import Tool, ToolDefinitionError

from ._call import Injected, LangchainCall
from ._settings import SECTION, LangchainSettings


def load_reference(reference: str) -> object:
    """The object ``package.module:attribute`` names (its module imported)."""
    module_name, _, attribute = reference.partition(":")
    found: object = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


class LangchainTools:
    """The LangChain tools of one host, and what could not be used."""

    def __init__(self, settings: LangchainSettings) -> None:
        self.settings = settings
        self.problems: list[str] = []
        self._tools: list[Tool] | None = None

    def tools(self) -> list[Tool]:
        """The tools of every reference in the config, loaded and made once."""
        if self._tools is None:
            self._tools = self._collect()
        return self._tools

    def _collect(self) -> list[Tool]:
        made: dict[str, tuple[Tool, str]] = {}
        for reference in self.settings.tools:
            try:
                found = self._instances(reference, load_reference(reference))
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                # A class's argument values may be secrets (an API key): kept out of the report.
                for value in (self.settings.arguments.get(reference) or {}).values():
                    if isinstance(value, str) and len(value) >= 4:
                        error = error.replace(value, "[redacted]")
                self.problems.append(f"{reference}: {error}")
                continue
            for lc_tool in found:
                try:
                    tool = self._tool(lc_tool)
                except (ToolDefinitionError, ConfigError, ValueError, TypeError) as exc:
                    self.problems.append(f"{reference}, tool {lc_tool.name!r}: {exc}")
                    continue
                if tool.name in made:
                    self.problems.append(
                        f"tool {tool.name!r} comes from {made[tool.name][1]} and {reference}; "
                        "the first is kept"
                    )
                    continue
                made[tool.name] = (tool, reference)
        unknown = sorted(set(self.settings.policy) - set(made))
        if unknown:
            self.problems.append(
                f"{SECTION} policy names {', '.join(map(repr, unknown))}, which no named tool "
                f"has; the tools: {', '.join(sorted(made)) or 'none'}"
            )
        return [tool for tool, _ in made.values()]

    def _instances(self, reference: str, found: object) -> list[BaseTool]:
        """The LangChain tools ``found`` stands for (a class made with its arguments)."""
        arguments = self.settings.arguments.get(reference)
        if inspect.isclass(found) and issubclass(found, BaseTool | BaseToolkit):
            found = found(**(arguments or {}))
        elif arguments is not None:
            raise TypeError(
                f"{SECTION} arguments are for a class, and this is a {type(found).__name__}"
            )
        if isinstance(found, BaseToolkit):
            found = found.get_tools()
        items = found if isinstance(found, list | tuple) else [found]
        for item in items:
            if not isinstance(item, BaseTool):
                hint = (
                    "; decorate it with langchain_core.tools.tool"
                    if inspect.isfunction(item)
                    else ""
                )
                raise TypeError(
                    f"{item!r:.80} is not a LangChain tool (a BaseTool, a BaseTool subclass, "
                    f"a BaseToolkit or a list of tools){hint}"
                )
        return list(items)

    def _tool(self, lc_tool: BaseTool) -> Tool:
        # The function LangChain itself offers models: the tool-call schema (injected
        # arguments left out), references resolved, titles dropped.
        function = convert_to_openai_function(lc_tool)
        parameters = dict(function.get("parameters") or {})
        if not isinstance(lc_tool.args_schema, dict) and "additionalProperties" not in parameters:
            # pydantic would drop an unknown argument silently: refuse it with the list of
            # valid ones instead.
            parameters["additionalProperties"] = False
        name = lc_tool.name
        tool = Tool.from_schema(
            name,
            function.get("description") or lc_tool.description or "",
            parameters,
            LangchainCall(tool=lc_tool, injected=injected_arguments(lc_tool)),
            policy=self.settings.policy_of(name),
            normalize=True,
        )
        return attrs.evolve(tool, policy_config_key=self.settings.policy_key(name))


def injected_arguments(lc_tool: BaseTool) -> tuple[Injected, ...]:
    """The arguments of ``lc_tool`` that the host supplies: those its input schema marks
    ``InjectedToolArg``. An ``InjectedToolCallId`` is left out: LangChain fills it from the
    call's id."""
    if isinstance(lc_tool.args_schema, dict):
        return ()  # a JSON Schema cannot mark an argument injected
    schema = lc_tool.get_input_schema()
    fields = getattr(schema, "model_fields", {})
    out: list[Injected] = []
    for name, annotation in get_all_basemodel_annotations(schema).items():
        markers = typing.get_args(annotation)[1:]
        if not any(_is_marker(m, InjectedToolArg) for m in markers):
            continue
        if any(_is_marker(m, InjectedToolCallId) for m in markers):
            continue
        field = fields.get(name)
        out.append(Injected(name=name, required=field is None or field.is_required()))
    return tuple(out)


def _is_marker(marker: Any, kind: type) -> bool:
    return isinstance(marker, kind) or (isinstance(marker, type) and issubclass(marker, kind))
