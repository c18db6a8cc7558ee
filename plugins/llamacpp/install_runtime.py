"""Install llama-cpp-python, the embedded model's runtime, compiled once per machine.

llama-cpp-python is published as source only: pip compiles it with CMake and a C/C++ compiler,
about 5 minutes of CPU time (under 3 minutes on two idle cores). This script builds the tested
version once, keeps the wheel in a wheelhouse (``~/.cache/toolwire-wheelhouse``, or the folder
``TOOLWIRE_WHEELHOUSE`` names) and installs it from there. The README's quickstart and the nox
sessions both run it, so a machine compiles llama.cpp once for both.

The build is portable (``-DGGML_NATIVE=OFF``: the x86-64 baseline with AVX2 rather than every
instruction the processor reports, since virtual machines often report AVX-512 or AMX without
letting a guest run them, and a native build then dies at its first token with "Illegal
instruction") and leaves out the multimodal library and llama.cpp's ``common`` library (its
command-line tools' helpers, half the build's CPU time), which toolwire does not load. pip's own
wheel cache is bypassed on purpose: it keys a source build by the source's URL alone, so a wheel
built natively by any earlier command would be reused. Only this script writes to the wheelhouse.

Run it with the Python that will use the runtime: ``python plugins/llamacpp/install_runtime.py``.
With llama-cpp-python already installed it does nothing; without a compiler and with no wheel
kept, it stops (exit status 1) naming what to install, before a build that would fail with a
CMake error half a minute in.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VERSION = "0.3.36"
REQUIREMENT = f"llama-cpp-python=={VERSION}"
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
# llama-cpp-python's CMakeLists.txt forces LLAMA_BUILD_COMMON on in the cache, so a -D cannot turn
# it off. A plain variable set in llama.cpp's own scope, right after its project() call, shadows
# the cached one there (option() leaves a plain variable alone under CMP0077), and llama.cpp then
# neither builds nor installs the library.
NO_COMMON = "set(LLAMA_BUILD_COMMON OFF)\n"

_INSTALL = {
    "Linux": (
        "Debian/Ubuntu: sudo apt-get install build-essential; Fedora: sudo dnf install gcc-c++ "
        "make; Alpine: apk add build-base"
    ),
    "Darwin": "xcode-select --install",
    "Windows": "the Visual Studio Build Tools, with the 'Desktop development with C++' workload",
}


def wheelhouse() -> Path:
    """The folder that keeps the built wheel between installs."""
    named = os.environ.get("TOOLWIRE_WHEELHOUSE")
    return Path(named) if named else Path.home() / ".cache" / "toolwire-wheelhouse"


def cmake_args(folder: Path) -> str:
    """The ``CMAKE_ARGS`` of the build: a portable CPU build of llama.cpp's library alone, with
    the project include that leaves out ``common`` written into ``folder``."""
    include = folder / "llama-cpp-no-common.cmake"
    include.write_text(NO_COMMON, "utf-8")
    # scikit-build-core splits CMAKE_ARGS at spaces: the include's path must have none.
    return f"{CMAKE_ARGS} -DCMAKE_PROJECT_llama.cpp_INCLUDE={include.as_posix()}"


def _compiler() -> str | None:
    names = ("cl",) if platform.system() == "Windows" else ("c++", "g++", "clang++")
    return next((found for found in map(shutil.which, names) if found), None)


def main() -> int:
    try:
        installed = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed is not None:
        print(f"llama-cpp-python {installed} is already installed: nothing to build.")
        return 0
    house = wheelhouse()
    house.mkdir(parents=True, exist_ok=True)
    if any(house.glob(f"llama_cpp_python-{VERSION}-*.whl")):
        print(f"llama-cpp-python {VERSION}: the wheel kept in {house}.")
    else:
        compiler = _compiler()
        if compiler is None:
            how = _INSTALL.get(platform.system(), "a C and C++ compiler")
            print(
                "toolwire-llamacpp needs llama-cpp-python, which pip compiles from source, and no "
                f"C++ compiler was found (looked for c++, g++, clang++ or cl). Install one first: "
                f"{how}. The build then takes about 5 minutes of CPU time, once: the "
                f"wheel is kept in {house}.",
                file=sys.stderr,
            )
            return 1
        print(
            f"C++ compiler: {compiler}. Building llama-cpp-python {VERSION} takes about 5 minutes "
            f"of CPU time, once: the wheel is kept in {house}.",
            flush=True,
        )
    pip = [sys.executable, "-m", "pip"]
    links = ["--find-links", str(house)]
    with tempfile.TemporaryDirectory(prefix="toolwire-build-") as scratch:
        env = {**os.environ, "CMAKE_ARGS": cmake_args(Path(scratch))}
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        # A compatible wheel in the wheelhouse is taken as it is; otherwise the source is built.
        build = [*pip, "wheel", "--no-deps", "--no-cache-dir", *links, "--wheel-dir", str(house)]
        if subprocess.run([*build, REQUIREMENT], env=env, check=False).returncode != 0:
            return 1
    # pip prefers the kept wheel to the source of the same version; the index supplies the
    # runtime's own dependencies (numpy and the rest).
    return subprocess.run([*pip, "install", *links, REQUIREMENT], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
