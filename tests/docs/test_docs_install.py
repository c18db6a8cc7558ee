"""The docs install toolwire the ways that work: from the repository's folders or built wheels.

No toolwire distribution is on the package index, so an instruction to `pip install` one by
name alone would fail for every reader.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_INSTALL = re.compile(r"pip install(?P<args>[^\n`&;|#]*)")
_BY_NAME = re.compile(r"(?<![\w./-])toolwire(?:-[a-z]+)?(?:\[[a-z,]+\])?(?![\w./-])")


def _docs() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("plugins", "contrib-tools"):
        found.extend(sorted((ROOT / folder).glob("*/README.md")))
    return found


def test_every_install_instruction_names_folders_or_a_wheel_folder() -> None:
    offending: list[str] = []
    for path in _docs():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for match in _INSTALL.finditer(line):
                args = match.group("args")
                if _BY_NAME.search(args) and "--find-links" not in args:
                    offending.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offending, "install by name from the index:\n" + "\n".join(offending)


def test_the_user_guide_says_how_to_install_from_a_clone_and_from_wheels() -> None:
    guide = (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    assert "python -m pip install ./ ./plugins/openai ./contrib-tools/web" in guide
    assert "python -m pip wheel --no-deps -w dist" in guide
    assert "--find-links dist" in guide
