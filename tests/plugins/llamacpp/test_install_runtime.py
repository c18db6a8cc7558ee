"""plugins/llamacpp/install_runtime.py: llama-cpp-python is compiled once per machine and installed
from the wheelhouse it was kept in; a missing compiler is named, with the install command, before
a long build starts."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import shutil
import stat
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pip
import pytest
from waiting import HANG

SCRIPT = Path(__file__).resolve().parents[3] / "plugins" / "llamacpp" / "install_runtime.py"
VERSION = "0.3.36"


def _run(
    python: Path | str, *, path: str, wheelhouse: Path, pythonpath: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        **({"PYTHONPATH": str(pythonpath)} if pythonpath else {}),
        "PATH": path,
        "TOOLWIRE_WHEELHOUSE": str(wheelhouse),
        # Offline: pip finds only what the wheelhouse holds.
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": "",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_CACHE_DIR": str(wheelhouse.parent / "pip-cache"),
    }
    # -S: no site-packages, so llama-cpp-python counts as not installed.
    flags = ["-S"] if python == sys.executable else []
    return subprocess.run(
        [str(python), *flags, str(SCRIPT)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=HANG,
    )


def _compiler(folder: Path) -> Path:
    compiler = folder / "c++"
    compiler.write_text("#!/bin/sh\nexit 1\n")
    compiler.chmod(compiler.stat().st_mode | stat.S_IEXEC)
    return compiler


def _kept_wheel(wheelhouse: Path) -> Path:
    """A wheel of the pinned version, as a build would have left it (a stand-in module)."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    info = f"llama_cpp_python-{VERSION}.dist-info"
    files = {
        "llama_cpp/__init__.py": "BUILT_HERE = True\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: llama_cpp_python\nVersion: {VERSION}\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    wheel = wheelhouse / f"llama_cpp_python-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel


def test_without_a_compiler_or_a_kept_wheel_it_says_what_to_install(tmp_path: Path) -> None:
    result = _run(sys.executable, path=str(tmp_path), wheelhouse=tmp_path / "wheelhouse")
    assert result.returncode == 1
    assert "no C++ compiler was found" in result.stderr
    assert "build-essential" in result.stderr
    assert list((tmp_path / "wheelhouse").iterdir()) == []


def test_with_a_compiler_and_no_kept_wheel_it_names_the_compiler_and_builds(
    tmp_path: Path,
) -> None:
    compiler = _compiler(tmp_path)
    # No index here, so the build stops at finding the source; it was asked for.
    result = _run(sys.executable, path=str(tmp_path), wheelhouse=tmp_path / "wheelhouse")
    assert result.returncode == 1
    assert f"C++ compiler: {compiler}." in result.stdout
    assert f"llama-cpp-python=={VERSION}" in result.stderr


@pytest.mark.integration
def test_a_kept_wheel_is_installed_without_a_compiler_or_a_build(tmp_path: Path) -> None:
    wheel = _kept_wheel(tmp_path / "wheelhouse")
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    # pip alone on the new environment's path, instead of a copy of it installed there.
    pip_only = tmp_path / "pip-only"
    pip_only.mkdir()
    (pip_only / "pip").symlink_to(Path(pip.__file__).parent)
    # No compiler on PATH: a build would fail, so only the kept wheel can satisfy the install.
    result = _run(
        python, path=str(tmp_path / "no-tools"), wheelhouse=wheel.parent, pythonpath=pip_only
    )
    assert result.returncode == 0, result.stderr
    assert f"the wheel kept in {wheel.parent}" in result.stdout
    found = subprocess.run(
        [str(python), "-c", "import llama_cpp; print(llama_cpp.BUILT_HERE)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout == "True\n"
    assert sorted(wheel.parent.iterdir()) == [wheel]
    # Run again (the test command after the main job, or a reused nox environment): nothing to do.
    again = _run(
        python, path=str(tmp_path / "no-tools"), wheelhouse=wheel.parent, pythonpath=pip_only
    )
    assert again.returncode == 0, again.stderr
    assert f"llama-cpp-python {VERSION} is already installed: nothing to build." in again.stdout


_PARENT = """cmake_minimum_required(VERSION 3.21)
project(parent NONE)
set(LLAMA_BUILD_COMMON ON CACHE BOOL "" FORCE)
add_subdirectory(llama.cpp)
"""
_LLAMA_CPP = """cmake_minimum_required(VERSION 3.14)
project("llama.cpp" NONE)
option(LLAMA_BUILD_COMMON "" OFF)
if (LLAMA_BUILD_COMMON)
    message(STATUS "common: built")
else()
    message(STATUS "common: left out")
endif()
"""


def _configure(source: Path, build: Path, cmake_args: str) -> str:
    # Split at spaces, as scikit-build-core splits CMAKE_ARGS.
    result = subprocess.run(
        ["cmake", "-S", str(source), "-B", str(build), *cmake_args.split()],
        capture_output=True,
        text=True,
        check=True,
        timeout=HANG,
    )
    return result.stdout


@pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake")
def test_the_build_leaves_out_common_though_the_parent_project_forces_it(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("install_runtime", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    # llama-cpp-python's CMakeLists.txt, in small: it forces the option on before adding llama.cpp.
    source = tmp_path / "source"
    (source / "llama.cpp").mkdir(parents=True)
    (source / "CMakeLists.txt").write_text(_PARENT)
    (source / "llama.cpp" / "CMakeLists.txt").write_text(_LLAMA_CPP)
    forced = _configure(source, tmp_path / "forced", "-DLLAMA_BUILD_COMMON=OFF")
    assert "common: built" in forced  # a -D cannot undo the parent's FORCE
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    output = _configure(source, tmp_path / "build", script.cmake_args(scratch))
    assert "common: left out" in output
