"""A real PostgreSQL server for the session, and each ledger backend for the contract tests.

The server is initialised into a temporary directory and listens on 127.0.0.1 on a free port
(its socket in that directory too); it is stopped when the session ends. Running as root, it
runs as the non-root user ``postgres`` (``TOOLWIRE_PG_USER`` names another). Server binaries
come from ``TOOLWIRE_PG_BINDIR``, else ``/usr/lib/postgresql/15/bin`` (Debian's
``postgresql-15``, which ``.ci/run`` installs), else the newest ``/usr/lib/postgresql/*/bin``,
else ``PATH``. When no server can start, every test that needs one fails, saying why.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolwire.config import LedgerConfig
from toolwire.loop import Ledger

BACKENDS = ("sqlite", "postgresql")


def _bindir() -> Path | None:
    candidates = [os.environ.get("TOOLWIRE_PG_BINDIR"), "/usr/lib/postgresql/15/bin"]
    candidates += sorted(
        (str(p) for p in Path("/usr/lib/postgresql").glob("*/bin")),
        key=lambda p: int(p.split("/")[-2]) if p.split("/")[-2].isdigit() else 0,
        reverse=True,
    )
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").exists():
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        pytest.fail(
            f"PostgreSQL could not {what}: {' '.join(command)} exited {done.returncode}\n"
            f"{done.stdout}\n{done.stderr}",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a superuser connection to a PostgreSQL server started for the session."""
    bindir = _bindir()
    if bindir is None:
        pytest.fail(
            "PostgreSQL server binaries (initdb, pg_ctl) not found in TOOLWIRE_PG_BINDIR, "
            "/usr/lib/postgresql/*/bin or PATH: install Debian's postgresql-15 (.ci/run does)",
            pytrace=False,
        )
    root = Path(tempfile.mkdtemp(prefix="toolwire-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        user = os.environ.get("TOOLWIRE_PG_USER", "postgres")
        try:
            account = pwd.getpwnam(user)
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            pytest.fail(
                f"running as root, the PostgreSQL server needs a non-root OS user, and there is "
                f"no user {user!r}: create one (useradd --system {user}) or set TOOLWIRE_PG_USER",
                pytrace=False,
            )
        os.chown(root, account.pw_uid, account.pw_gid)
        as_user = ["runuser", "-u", user, "--"]
    data = root / "data"
    port = _free_port()
    _run(
        [
            *as_user,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        ],
        "initialise a cluster",
    )
    log = root / "server.log"
    started = subprocess.run(
        [
            *as_user,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(log),
            "-w",
            "-t",
            "60",
            "-o",
            f"-k {root} -c listen_addresses=127.0.0.1 -p {port} -F",
            "start",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if started.returncode != 0:
        text = log.read_text() if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(
            f"the PostgreSQL server could not start on 127.0.0.1:{port}: {started.stderr}\n{text}",
            pytrace=False,
        )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
            capture_output=True,
            timeout=120,
            check=False,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """The URL of a new, empty database on the session's server."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_server, autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{name}"')  # a generated name, not input
    return postgres_server.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn."""
    name: str = request.param
    return name


@pytest.fixture
def ledger_config(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> LedgerConfig:
    """A ``[ledger]`` section for a fresh ledger of the backend under test."""
    if backend == "postgresql":
        return LedgerConfig(url=request.getfixturevalue("postgres_url"))
    return LedgerConfig(path=str(tmp_path / "ledger.sqlite3"))


@pytest.fixture
def open_ledger(ledger_config: LedgerConfig) -> Iterator[Callable[[], Ledger]]:
    """Opens ledgers on the same storage (each its own connection, like separate workers)."""
    opened: list[Ledger] = []

    def open_one() -> Ledger:
        ledger = Ledger.open(ledger_config)
        opened.append(ledger)
        return ledger

    yield open_one
    for ledger in opened:
        ledger.close()
