"""The prompted examples of the guides work as written."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from prompted_support import TextModel

from toolwire.config import config_from_dict
from toolwire.prompted import PromptedAdapter, ToolDialects
from toolwire.prompted._adapter import wrap_adapter

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def test_the_user_guide_config_calls_one_tool_in_its_own_dialect() -> None:
    [text] = [b for b in _blocks(DOCS / "user-guide.md", "toml") if "tool_dialects" in b]
    config = config_from_dict(tomllib.loads(text))
    adapter = wrap_adapter(TextModel(), config.provider)
    assert isinstance(adapter, PromptedAdapter)
    assert adapter.dialects == ToolDialects("python", {"write_file": "xml"})


def test_the_adapter_author_guide_wraps_an_adapter_with_dialects_per_tool() -> None:
    [code] = [b for b in _blocks(DOCS / "adapter-authors.md", "python") if "ToolDialects(" in b]
    namespace: dict[str, Any] = {"inner": TextModel()}
    exec(compile(code, "adapter_authors_example", "exec"), namespace)  # the example text is ours
    adapter = namespace["adapter"]
    assert adapter.dialects.of("write_file") == "xml"
    assert adapter.dialects.of("search") == "typescript"
