"""The public surface: exactly the names ``docs/api.md`` lists, each documented, and the only
names the plugins of this repository import.

A module is public when no part of its dotted name starts with ``_``; its public names are its
``__all__``. The API reference pins them: a name added to or dropped from a facade without the
page changing fails here, and so does a plugin reaching past the facades.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import pkgutil
import re
import types
from pathlib import Path

import pytest

import toolwire

ROOT = Path(__file__).resolve().parents[2]
API_PAGE = ROOT / "docs" / "api.md"
PLUGIN_SOURCES = sorted(
    path
    for folder in ("plugins", "contrib-tools")
    for path in (ROOT / folder).glob("*/toolwire_*/**/*.py")
)


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def _public_modules() -> list[str]:
    found = {"toolwire"}
    for info in pkgutil.walk_packages(toolwire.__path__, "toolwire."):
        if not _is_private(info.name):
            found.add(info.name)
    return sorted(found)


def _documented() -> dict[str, list[str]]:
    """The names the API reference lists, per ``## `module``` section, in page order."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in API_PAGE.read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"## `([\w.]+)`", line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
        elif current is not None and (row := re.match(r"\| `(\w+)` \| (.*) \|$", line)):
            assert row.group(2).strip(), f"docs/api.md: {row.group(1)} has no description"
            current.append(row.group(1))
    return sections


PUBLIC_MODULES = _public_modules()
DOCUMENTED = _documented()
EXPORTS = {module: list(importlib.import_module(module).__all__) for module in PUBLIC_MODULES}
# What a facade binds besides its names: the lazy loader and the names of typing's machinery.
FACADE_HELPERS = {"TYPE_CHECKING", "annotations", "lazy_getattr"}


def test_every_public_module_is_in_the_reference() -> None:
    assert set(PUBLIC_MODULES) == set(DOCUMENTED)


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_all_is_sorted_and_is_what_the_reference_lists(module: str) -> None:
    names = list(EXPORTS[module])
    assert names == sorted(names), f"{module}.__all__ is not sorted"
    assert len(set(names)) == len(names)
    assert names == sorted(DOCUMENTED.get(module, [])), f"{module}: __all__ and docs/api.md differ"


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_name_resolves_and_a_facade_shows_no_other(module: str) -> None:
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert getattr(mod, name) is not None
    if mod.__file__ is not None and mod.__file__.endswith("__init__.py"):
        # A facade binds only what it exports (and its own submodules); lazy names load on use.
        shown = {
            name
            for name, value in vars(mod).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType)
        }
        assert shown <= set(mod.__all__) | FACADE_HELPERS, module


def _attribute_docstrings() -> set[str]:
    """Module-level names of the core followed by a string: the docstring of a constant."""
    found: set[str] = set()
    for path in (ROOT / "core" / "toolwire").rglob("*.py"):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for node, after in itertools.pairwise(body):
            target = (
                node.targets[0]
                if isinstance(node, ast.Assign) and len(node.targets) == 1
                else node.target
                if isinstance(node, ast.AnnAssign)
                else None
            )
            if (
                isinstance(target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                found.add(target.id)
    return found


def test_every_public_name_has_a_docstring() -> None:
    constants = _attribute_docstrings()
    undocumented = []
    for module in PUBLIC_MODULES:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            value = getattr(mod, name)
            if name in constants or name == "__version__":
                documented = True
            elif inspect.isclass(value):
                documented = bool(vars(value).get("__doc__"))
            elif callable(value) and value.__doc__ != type(value).__doc__:
                documented = bool(value.__doc__)  # a function, also cached or a fixture
            else:
                documented = False
            if not documented:
                undocumented.append(f"{module}.{name}")
    assert undocumented == []


def test_top_level_names_are_the_homes_own() -> None:
    """``toolwire.X`` is the very object its home module exports, never a second definition."""
    homes = [m for m in PUBLIC_MODULES if m != "toolwire"]
    for name in toolwire.__all__:
        value = getattr(toolwire, name)
        for module in homes:
            mod = importlib.import_module(module)
            if name in mod.__all__:
                assert getattr(mod, name) is value, f"toolwire.{name} is not {module}.{name}"


def test_each_name_has_one_home_below_the_top_level() -> None:
    """No facade re-exports what another facade exports (the top level aside)."""
    owners: dict[int, list[str]] = {}
    for module in PUBLIC_MODULES:
        if module == "toolwire":
            continue
        mod = importlib.import_module(module)
        for name in mod.__all__:
            value = getattr(mod, name)
            if not isinstance(value, str | int | float | tuple | frozenset):  # equal constants
                owners.setdefault(id(value), []).append(f"{module}.{name}")
    assert [names for names in owners.values() if len(names) > 1] == []


def test_the_loop_exports_no_name_of_the_cli() -> None:
    import toolwire.loop

    assert not hasattr(toolwire.loop, "__getattr__")
    for name in toolwire.loop.__all__:
        assert not getattr(toolwire.loop, name).__module__.startswith("toolwire.cli")
    with pytest.raises(AttributeError):
        toolwire.loop.TerminalRenderer  # type: ignore[attr-defined]  # noqa: B018


def _toolwire_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """Each ``toolwire`` module ``path`` imports (line, module, name or None), and each
    ``toolwire.…`` attribute chain it spells in code (as a module with no name)."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module == "toolwire" or node.module.startswith("toolwire."):
                found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name, None)
                for alias in node.names
                if alias.name.split(".")[0] == "toolwire"
            ]
        elif isinstance(node, ast.Attribute):
            chain: list[str] = []
            part: ast.expr = node
            while isinstance(part, ast.Attribute):
                chain.insert(0, part.attr)
                part = part.value
            if isinstance(part, ast.Name) and part.id == "toolwire":
                found.append((node.lineno, ".".join(["toolwire", *chain]), None))
    return found


def test_plugins_import_only_public_names() -> None:
    assert len(PLUGIN_SOURCES) > 50
    wrong = []
    for path in PLUGIN_SOURCES:
        where = path.relative_to(ROOT)
        for line, module, name in _toolwire_imports(path):
            if _is_private(module):
                wrong.append(f"{where}:{line}: {module}")
            elif name is not None and module in EXPORTS and name not in EXPORTS[module]:
                if f"{module}.{name}" not in PUBLIC_MODULES:
                    wrong.append(f"{where}:{line}: {module}.{name} is not in its __all__")
            elif name is None and module not in PUBLIC_MODULES:
                # An attribute chain: a public module and then one of its public names.
                owner, _, attr = module.rpartition(".")
                if owner not in EXPORTS or attr not in EXPORTS[owner]:
                    wrong.append(f"{where}:{line}: {module}")
    assert wrong == []


def test_the_plugin_check_finds_a_private_import(tmp_path: Path) -> None:
    source = tmp_path / "plugin.py"
    source.write_text(
        "import toolwire\n"
        "from toolwire.loop._run import Run\n"
        "from toolwire.config import without_password\n"
        "x = toolwire.loop._state\n",
        encoding="utf-8",
    )
    imports = _toolwire_imports(source)
    assert (2, "toolwire.loop._run", "Run") in imports
    assert (4, "toolwire.loop._state", None) in imports
    assert "without_password" not in EXPORTS["toolwire.config"]


def test_tests_import_public_names_from_the_public_modules() -> None:
    """A test reaches into a private module only for what no public module exports."""
    public: dict[int, str] = {}
    for module in PUBLIC_MODULES:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            value = getattr(mod, name)
            if isinstance(value, type | types.FunctionType):
                public.setdefault(id(value), f"{module}.{name}")
    wrong = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for line, module, name in _toolwire_imports(path):
            if name is None or not _is_private(module):
                continue
            value = getattr(importlib.import_module(module), name, None)
            if id(value) in public and isinstance(value, type | types.FunctionType):
                wrong.append(f"{path.relative_to(ROOT)}:{line}: use {public[id(value)]}")
    assert wrong == []
