"""Before installing toolwire-llamacpp: can this machine build llama-cpp-python?

llama-cpp-python is published as source only, and pip compiles it with CMake and a C/C++ compiler
(about 7 minutes on two cores). Without a compiler the build fails after half a minute with a CMake
error that names neither toolwire nor the fix; this check says what to install, before the build
starts. Run: ``python plugins/llamacpp/check_build.py`` (exit status 1 when something is missing).
"""

from __future__ import annotations

import importlib.util
import platform
import shutil
import sys

_INSTALL = {
    "Linux": (
        "Debian/Ubuntu: sudo apt-get install build-essential; Fedora: sudo dnf install gcc-c++ "
        "make; Alpine: apk add build-base"
    ),
    "Darwin": "xcode-select --install",
    "Windows": "the Visual Studio Build Tools, with the 'Desktop development with C++' workload",
}


def main() -> int:
    if importlib.util.find_spec("llama_cpp") is not None:
        print("llama-cpp-python is already installed: nothing to build.")
        return 0
    names = ("cl",) if platform.system() == "Windows" else ("c++", "g++", "clang++")
    found = next((shutil.which(n) for n in names if shutil.which(n)), None)
    if found is None:
        how = _INSTALL.get(platform.system(), "a C and C++ compiler")
        print(
            "toolwire-llamacpp needs llama-cpp-python, which pip compiles from source, and no C++ "
            f"compiler was found (looked for {', '.join(names)}). Install one first: {how}. "
            "The build then takes about 7 minutes on two cores (pip keeps the wheel for later).",
            file=sys.stderr,
        )
        return 1
    print(f"C++ compiler: {found}. Building llama-cpp-python takes about 7 minutes on two cores.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
