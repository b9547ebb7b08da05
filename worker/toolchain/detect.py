"""Find the ROCm toolchain (hipcc, clang, ROCM_PATH) and which ROCm libraries are installed.

``detect_toolchain()`` is cached per process: it runs ``hipcc --version`` and
``hipconfig --version`` once (well under a second) and then only stats files.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from worker.toolchain.rocm_libraries import ROCM_LIBRARIES, RocmLibrary

HIP_PLATFORM = "amd"  # nvcc is on PATH too; without this hipcc would target NVIDIA
_LIB_DIRS = ("lib", "lib64", "lib/x86_64-linux-gnu")


@dataclass(frozen=True)
class LibraryStatus:
    name: str
    installed: bool
    header: str  # header looked for (relative to an include dir)
    header_found: str  # absolute path, empty when missing
    library: str  # "libfoo.so" looked for; empty for header-only libraries
    library_found: str
    package: str  # what to install when missing
    rocm_package: str


@dataclass(frozen=True)
class Toolchain:
    hipcc: str  # absolute path, empty when hipcc is missing
    hipcc_version: str
    hipconfig_version: str
    clang_version: str
    rocm_path: str
    rocm_path_source: str  # "env", "/opt/rocm" or "debian"
    hip_platform: str
    libraries: tuple[LibraryStatus, ...] = field(default_factory=tuple)

    @property
    def available(self) -> bool:
        return bool(self.hipcc)

    @property
    def fingerprint(self) -> str:
        """Identifies the compiler for cache keys: a new hipcc or clang invalidates objects."""
        return f"{self.hipcc}|{self.hipcc_version}|{self.clang_version}|{self.rocm_path}"

    def missing_libraries(self) -> list[LibraryStatus]:
        return [lib for lib in self.libraries if not lib.installed]

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["available"] = self.available
        return data


def hip_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment hipcc runs in: ``HIP_PLATFORM=amd`` always."""
    env = dict(os.environ if base is None else base)
    env["HIP_PLATFORM"] = HIP_PLATFORM
    return env


@functools.cache
def detect_toolchain() -> Toolchain:
    hipcc = shutil.which("hipcc") or ""
    version_text = _run([hipcc, "--version"]) if hipcc else ""
    rocm_path, source = _rocm_path()
    return Toolchain(
        hipcc=hipcc,
        hipcc_version=_first_match(r"HIP version:\s*(\S+)", version_text),
        hipconfig_version=_run(["hipconfig", "--version"]).strip() if shutil.which("hipconfig") else "",
        clang_version=_first_match(r"clang version\s*(\S+)", version_text),
        rocm_path=rocm_path,
        rocm_path_source=source,
        hip_platform=HIP_PLATFORM,
        libraries=tuple(_library_status(lib, Path(rocm_path)) for lib in ROCM_LIBRARIES),
    )


def _rocm_path() -> tuple[str, str]:
    from_env = os.environ.get("ROCM_PATH", "")
    if from_env and Path(from_env).is_dir():
        return from_env, "env"
    if Path("/opt/rocm/include/hip/hip_runtime.h").exists():
        return "/opt/rocm", "/opt/rocm"
    if Path("/usr/include/hip/hip_runtime.h").exists():
        return "/usr", "debian"
    return "", "missing"


def _library_status(lib: RocmLibrary, rocm_path: Path) -> LibraryStatus:
    include_dirs = [rocm_path / "include", Path("/usr/include")]
    header = next((d / lib.header for d in include_dirs if (d / lib.header).exists()), None)
    library_found: Path | None = None
    so_name = f"lib{lib.library}.so" if lib.library else ""
    if so_name:
        lib_dirs = [rocm_path / d for d in _LIB_DIRS] + [Path("/usr/lib/x86_64-linux-gnu"), Path("/usr/lib")]
        library_found = next((d / so_name for d in lib_dirs if (d / so_name).exists()), None)
    installed = header is not None and (not so_name or library_found is not None)
    return LibraryStatus(
        name=lib.name,
        installed=installed,
        header=lib.header,
        header_found=str(header or ""),
        library=so_name,
        library_found=str(library_found or ""),
        package=lib.package,
        rocm_package=lib.rocm_package,
    )


def _run(command: list[str]) -> str:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=30, env=hip_environment(), check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def _first_match(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    return found.group(1) if found else ""
