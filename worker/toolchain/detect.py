"""What a toolchain root holds: compiler and HIP versions, ROCm libraries, GPU targets, packages.

Everything is read from the root's own files (its headers, libraries, package manifest and device
library bitcode), never assumed and never taken from the host. ``detect_toolchain()`` is cached per
process and root; it only stats and reads files (a few milliseconds).
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field

from worker.toolchain.rocm_libraries import ROCM_LIBRARIES, RocmLibrary
from worker.toolchain.roots import ToolchainNotFound, ToolchainRoot, select_root

HIP_PLATFORM = "amd"  # nvcc may be installed too; without this hipcc would target NVIDIA
_SHOWN_PACKAGE_PREFIXES = ("hip", "libhip", "librocm", "libroc", "libamdhip", "libmiopen", "rocm", "clang-",
                           "llvm-", "cmake", "make", "gcc", "g++", "libomp")


@dataclass(frozen=True)
class LibraryStatus:
    name: str
    installed: bool
    header: str  # header looked for (relative to an include dir)
    header_found: str  # path inside the root, empty when missing
    library: str  # "libfoo.so" looked for; empty for header-only libraries
    library_found: str
    package: str  # what provides it
    rocm_package: str


@dataclass(frozen=True)
class Toolchain:
    name: str  # the root's name, e.g. "rocm-6.4"; empty when none is installed
    root: str  # where the root lies on this machine
    hipcc: str  # path inside the root, empty when missing
    hipcc_version: str  # the HIP version, e.g. "6.4.43484"
    hipconfig_version: str
    clang: str  # the clang++ driver inside the root, called directly for per-file compiles and links
    clang_version: str
    rocm_path: str  # Debian installs ROCm under /usr; /opt/rocm holds links into it
    rocm_path_source: str
    hip_platform: str
    offload_targets: tuple[str, ...] = ()
    libraries: tuple[LibraryStatus, ...] = field(default_factory=tuple)
    packages: tuple[tuple[str, str], ...] = ()  # the ROCm/compiler packages installed, with versions
    container_image: str = ""  # the official image of the root's ROCm release (``ToolchainRoot.container_image``)
    error: str = ""  # why no toolchain is available

    @property
    def available(self) -> bool:
        return bool(self.hipcc) and not self.error

    @property
    def hip_version(self) -> str:
        return ".".join(self.hipcc_version.split(".")[:2])

    @property
    def fingerprint(self) -> str:
        """Identifies the compiler for cache keys: another root, HIP or clang invalidates objects."""
        return f"{self.name}|{self.hipcc_version}|{self.clang_version}|{self.root}"

    def missing_libraries(self) -> list[LibraryStatus]:
        return [lib for lib in self.libraries if not lib.installed]

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["available"] = self.available
        data["hip_version"] = self.hip_version
        return data


def detect_toolchain(name: str = "") -> Toolchain:
    """The toolchain root called ``name`` (the newest when empty), described from its files."""
    try:
        root = select_root(name)
    except ToolchainNotFound as exc:
        return missing_toolchain(str(exc))
    return describe_root(root)


def missing_toolchain(reason: str) -> Toolchain:
    return Toolchain("", "", "", "", "", "", "", "", "missing", HIP_PLATFORM, error=reason)


@functools.cache
def describe_root(root: ToolchainRoot) -> Toolchain:
    manifest = root.manifest()
    return Toolchain(
        name=root.name,
        root=str(root.path),
        hipcc=root.hipcc_path if root.host_path(root.hipcc_path).exists() else "",
        hipcc_version=root.hip_version,
        hipconfig_version=root.hip_version,
        clang=root.clang,
        clang_version=root.clang_version(),
        rocm_path=root.rocm_path,
        rocm_path_source=f"toolchain root {root.name}" + (" (/opt/rocm is a link to /usr)" if root.rocm_path == "/usr" else ""),
        hip_platform=HIP_PLATFORM,
        offload_targets=tuple(root.offload_targets()),
        libraries=tuple(library_status(lib, root) for lib in ROCM_LIBRARIES),
        packages=tuple(sorted((p, v) for p, v in manifest.items() if p.startswith(_SHOWN_PACKAGE_PREFIXES))),
        container_image=root.container_image,
    )


def hip_environment() -> dict[str, str]:
    """The variables every command in a toolchain root gets (besides PATH, HOME and TMPDIR).

    No ROCM_PATH: Debian's clang and hipcc find the device libraries by themselves, and clang takes a
    ROCM_PATH of /usr as a request to look for them in the wrong place."""
    return {"HIP_PLATFORM": HIP_PLATFORM, "LANG": "C.UTF-8"}


def library_status(lib: RocmLibrary, root: ToolchainRoot) -> LibraryStatus:
    header = next((f"{d}/{lib.header}" for d in root.include_dirs if root.host_path(f"{d}/{lib.header}").exists()), "")
    so_name = f"lib{lib.library}.so" if lib.library else ""
    library_found = ""
    if so_name:
        library_found = next((f"{d}/{so_name}" for d in root.lib_dirs if root.host_path(f"{d}/{so_name}").exists()), "")
    installed = bool(header) and (not so_name or bool(library_found))
    return LibraryStatus(lib.name, installed, lib.header, header, so_name, library_found, lib.package,
                         lib.rocm_package)
