"""The single-source change: the CUDA tree stays the source of truth and gains a HIP path.

Inputs: the CUDA tree (the run's fetched original, or the CUDA branch checked out) and the run's
translated tree. Output: a ``Change`` that
- adds ``rocm/`` (the build-time translation script, hipcc standing in for nvcc, the CMake module or
  the Makefile part), the same files for every project;
- edits the top-level ``CMakeLists.txt`` or ``Makefile`` (``buildedits``), guarded so the CUDA build
  does what it did, and for CMake each CMakeLists.txt below it that enables CUDA itself;
- for a PyTorch extension built by a top-level ``setup.py`` (``CUDAExtension``): ``setupedits`` makes
  CUDAExtension's own ROCm path work (ROCm PyTorch's ``BuildExtension`` hipifies at build time), and
  since that hipify knows nothing of wavefronts, the engine's certain wave-size fixes go into the
  sources behind ``#if defined(__HIP_PLATFORM_AMD__)`` (``waveguards``);
- adds a ROCm Dockerfile or CI workflow beside each one the run's build fixes changed
  (``Dockerfile`` -> ``Dockerfile.rocm``, ``.github/workflows/ci.yml`` -> ``ci-rocm.yml``), never
  rewriting the CUDA one.
CMake and Make: source files are not edited: the build translates them with the same engine (rewrites
and wave-size fixes included) every time it runs. ``only``: the paths that changed since the last delivery; build
files outside it are not examined again (their earlier edit is kept by the caller).
"""
from __future__ import annotations

from collections.abc import Collection
from pathlib import Path, PurePosixPath

from worker.delivery.buildedits import NotUnderstood, edit_cmake, edit_makefile, edit_nested_cmake
from worker.delivery.model import Change, FileChange
from worker.delivery.setupedits import edit_setup_py
from worker.delivery.waveguards import DEVICE_SUFFIXES, guard_wave_fixes, tree_facts
from worker.scanning.libraries import CMAKE_LIBRARIES

ADDED = Path(__file__).parent / "added"
ADDED_FILES = {  # repository path -> our file, per build system
    "cmake": {"rocm/hipify_tree.py": "hipify_tree.py", "rocm/MigratorHIP.cmake": "MigratorHIP.cmake"},
    "make": {"rocm/hipify_tree.py": "hipify_tree.py", "rocm/hip.mk": "hip.mk", "rocm/nvcc_as_hipcc.py": "nvcc_as_hipcc.py"},
    "setuptools": {"rocm/torch_rocm.py": "torch_rocm.py", "rocm/nvcc_as_hipcc.py": "nvcc_as_hipcc.py"},
}
BUILD_FILES = {"cmake": ("CMakeLists.txt",), "make": ("Makefile", "makefile", "GNUmakefile"), "setuptools": ("setup.py",)}
_CI_FOLDERS = (".github/workflows", ".gitlab")


def added_file(name: str) -> bytes:
    """One of the files the change adds; the CMake module gets the CUDA -> ROCm library table the
    scanner uses (``worker.scanning.libraries``)."""
    data = (ADDED / name).read_bytes()
    if name == "MigratorHIP.cmake":
        table = ";".join(f"{cuda}={package}={target}" for cuda, (package, target) in sorted(CMAKE_LIBRARIES.items()))
        data = data.replace(b"@MIGRATOR_CUDA_LIBRARIES@", table.encode())
    return data


def build_system(tree: Path) -> str:
    for system, names in BUILD_FILES.items():
        if system == "setuptools" and not _declares_cuda_extension(tree / "setup.py"):
            continue
        if any((tree / name).is_file() for name in names):
            return system
    return ""


def _declares_cuda_extension(setup: Path) -> bool:
    return setup.is_file() and not setup.is_symlink() and "CUDAExtension" in setup.read_text(errors="replace")


def single_source(tree: Path, translated: Path | None, only: Collection[str] | None = None) -> Change:
    system = build_system(tree)
    if not system:
        return Change("single-source", "", notes=("no top-level CMakeLists.txt, Makefile or setup.py with a "
                                                  "CUDAExtension: nothing gives the build a HIP path; deliver a "
                                                  "converted copy instead",))
    name = next(n for n in BUILD_FILES[system] if (tree / n).is_file())
    files = [FileChange(path, added_file(ours), "added: the AMD build's part") for path, ours in ADDED_FILES[system].items()]
    notes: list[str] = []
    examined: list[str] = []
    if only is None or name in only:
        examined.append(name)
        text = (tree / name).read_text(encoding="utf-8")
        try:
            edited = _edit_top(system, text, notes)
        except NotUnderstood as exc:
            notes.append(f"{name} was not changed: {exc}")
        else:
            if edited != text:
                files.append(FileChange(name, edited.encode(), "a guarded HIP path beside the CUDA build"))
    if system == "cmake":
        for relative in nested_cmake_files(tree):
            if only is None or relative in only:
                examined.append(relative)
                text = (tree / relative).read_text(encoding="utf-8", errors="surrogateescape")
                edited = edit_nested_cmake(text)
                if edited != text:
                    files.append(FileChange(relative, edited.encode("utf-8", "surrogateescape"),
                                            "CUDA enabled only when the AMD build is off"))
    if system == "setuptools":
        guarded, guard_notes = wave_guards(tree, only)
        files += guarded
        notes += guard_notes
        examined += [f.path for f in guarded]
    if translated is not None:
        files += sidecars(tree, translated, only)
    return Change("single-source", system, tuple(files), tuple(notes), tuple(examined))


def _edit_top(system: str, text: str, notes: list[str]) -> str:
    if system == "cmake":
        return edit_cmake(text)
    if system == "make":
        return edit_makefile(text)
    edit = edit_setup_py(text)
    notes += edit.notes
    return edit.text


def wave_guards(tree: Path, only: Collection[str] | None) -> tuple[list[FileChange], list[str]]:
    """The sources whose wave-size fixes are guarded for AMD (every device-code file of the tree is read
    for the constants and macros a fix may depend on; only those in ``only`` are edited)."""
    sources = [p.relative_to(tree).as_posix() for p in sorted(tree.rglob("*"))
               if p.suffix.lower() in DEVICE_SUFFIXES and p.is_file() and not p.is_symlink()
               and ".git" not in p.relative_to(tree).parts and "rocm" != p.relative_to(tree).parts[0]]
    facts = tree_facts(tree, sources)
    files: list[FileChange] = []
    notes: list[str] = []
    for relative in sources:
        if only is not None and relative not in only:
            continue
        guarded = guard_wave_fixes(relative, (tree / relative).read_text(encoding="utf-8", errors="surrogateescape"),
                                   facts)
        if guarded is None:
            continue
        notes += guarded.notes
        if guarded.fixes:
            files.append(FileChange(relative, guarded.text.encode("utf-8", "surrogateescape"),
                                    f"{guarded.fixes} wave-size fix(es) behind #if defined(__HIP_PLATFORM_AMD__)"))
    return files, notes


def nested_cmake_files(tree: Path) -> list[str]:
    """Every CMakeLists.txt below the top (not in .git, not through a link)."""
    found = []
    for path in sorted(tree.rglob("CMakeLists.txt")):
        relative = path.relative_to(tree)
        if len(relative.parts) > 1 and ".git" not in relative.parts and path.is_file() and not path.is_symlink():
            found.append(relative.as_posix())
    return found


def sidecars(tree: Path, translated: Path, only: Collection[str] | None) -> list[FileChange]:
    """A ROCm twin beside each Dockerfile and CI file the translation changed."""
    found = []
    for path in sorted(translated.rglob("*")):
        relative = path.relative_to(translated).as_posix()
        original = tree / relative
        if not path.is_file() or path.is_symlink() or not _is_container_or_ci(relative) or not original.is_file():
            continue
        if (only is not None and relative not in only) or original.read_bytes() == path.read_bytes():
            continue
        found.append(FileChange(_twin(relative), path.read_bytes(), f"the ROCm side of {relative}, beside it"))
    return found


def _is_container_or_ci(relative: str) -> bool:
    name = PurePosixPath(relative).name
    return name.startswith("Dockerfile") or name == ".gitlab-ci.yml" or relative.startswith(_CI_FOLDERS)


def _twin(relative: str) -> str:
    path = PurePosixPath(relative)
    if path.name.startswith("Dockerfile"):
        return str(path.with_name(path.name + ".rocm"))
    return str(path.with_name(f"{path.stem}-rocm{path.suffix}"))
