"""Compile a PyTorch extension's sources against the hipified PyTorch header tree, in the sandbox.

What ROCm PyTorch's ``BuildExtension`` would compile, file by file: each ``.cu`` source as its hipified
``.hip`` (the hipify stage's renames) with ``-x hip`` for the run's offload targets and the extension's
``nvcc`` flags mapped as for Makefiles (``worker/scanning/nvcc_flags.py``); each ``.cpp`` as C++ with its
``cxx`` flags, as the host compiler builds it. Both get BuildExtension's definitions for ROCm
(``USE_ROCM``, ``__HIP_PLATFORM_AMD__``, ``TORCH_EXTENSION_NAME``, ...), the extension's include
directories and definitions, and ``-isystem`` for torch's headers, its C++ API and Python's headers
from the header tree (``torch_headers.py``), bound read-only into the sandbox under its key.

The compiles themselves are the per-file compile's (``compile.py``): one sandboxed ``clang++`` per file,
in parallel, objects cached by content (the header tree's key is in every command line, so a new tree
is a new key). Nothing is linked: linking and running need a ROCm PyTorch.
"""
from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from worker.project_settings import ProjectSettings
from worker.scanning.extension_units import ExtensionUnit
from worker.scanning.nvcc_flags import nvcc_flag_hits
from worker.toolchain.cache import ObjectCache
from worker.toolchain.compile import CompileReport, FileResult, _compile_all, _Plan
from worker.toolchain.detect import Toolchain
from worker.toolchain.sandbox import Sandbox, SandboxUnavailable
from worker.toolchain.sources import scan_tree
from worker.toolchain.torch_headers import HeaderTree
from worker.toolchain.work import WorkError

BASE_FLAGS = ["-c", "-fPIC", "-fno-color-diagnostics", "-fno-crash-diagnostics"]
# BuildExtension's flags for ROCm (torch.utils.cpp_extension: COMMON_HIP_FLAGS, COMMON_HIPCC_FLAGS)
ROCM_DEFINES = ["-D__HIP_PLATFORM_AMD__=1", "-DUSE_ROCM=1", "-DHIPBLAS_V2", "-DTORCH_API_INCLUDE_EXTENSION_H",
                "-D_GLIBCXX_USE_CXX11_ABI=1"]
HIPCC_DEFINES = ["-DCUDA_HAS_FP16=1", "-D__HIP_NO_HALF_OPERATORS__=1", "-D__HIP_NO_HALF_CONVERSIONS__=1"]
DEFAULT_STD = "-std=c++17"
_HIP_SUFFIXES = (".cu", ".hip")


@dataclass
class ExtensionPlan:
    file_flags: dict[str, list[str]] = field(default_factory=dict)  # translated source -> its flags
    owners: dict[str, list[str]] = field(default_factory=dict)  # extension name -> its translated sources
    notes: list[str] = field(default_factory=list)


def map_nvcc_flags(flags: Sequence[str], archs: Sequence[str]) -> tuple[list[str], list[str]]:
    """The extension's nvcc flags for clang: mapped, or dropped with a note; target flags give way to the run's."""
    line = shlex.join(flags)
    hits = sorted(nvcc_flag_hits(line, archs, "setup", nvcc_only=True), key=lambda hit: hit.column, reverse=True)
    notes = []
    for hit in hits:
        if hit.replacement is None:
            notes.append(f"nvcc flag {hit.text!r} dropped: {hit.explanation}")
        line = line[:hit.column] + (hit.replacement or "") + line[hit.column + len(hit.text):]
    try:
        mapped = shlex.split(line)
    except ValueError:
        return [], [*notes, f"nvcc flags {line!r} could not be split; none used"]
    return [f for f in mapped if not f.startswith("--offload-arch=")], notes


def module_name(extension: str) -> str:
    """What ``TORCH_EXTENSION_NAME`` is for ``pkg._C`` (``_C``), as an identifier even where the name is a
    template of run-time values (``pkg._{cc}_C`` -> ``__cc__C``)."""
    return re.sub(r"\W", "_", extension.rsplit(".", 1)[-1]) or "extension"


def plan_extension(units: Sequence[ExtensionUnit], renames: dict[str, str], hip_tree: Path,
                   settings: ProjectSettings, headers: HeaderTree) -> ExtensionPlan:
    """Each source of each extension, with the flags its build would give it (original -> translated paths)."""
    plan = ExtensionPlan()
    archs = settings.offload_archs
    for unit in units:
        nvcc, notes = map_nvcc_flags(unit.nvcc_flags, archs)
        plan.notes += [f"{unit.name}: {note}" for note in notes + unit.notes]
        own = [f"-DTORCH_EXTENSION_NAME={module_name(unit.name)}", *ROCM_DEFINES]
        own += [f"-I{d}" for d in [*unit.include_dirs, *settings.include_dirs]]
        own += [d if d.startswith("-D") else f"-D{d}" for d in [*unit.defines, *settings.defines]]
        own += headers.include_flags()
        for source in unit.sources:
            translated = renames.get(source, source)
            if not (hip_tree / translated).is_file():
                plan.notes.append(f"{unit.name}: {source} is not in the translated tree; not compiled")
                continue
            if PurePosixPath(translated).suffix.lower() in _HIP_SUFFIXES:
                # -x hip comes first from the per-file compile (``compile.language_flags``)
                flags = [DEFAULT_STD, *own, *HIPCC_DEFINES, *(f"--offload-arch={a}" for a in archs), *nvcc]
            else:
                flags = ["-x", "c" if translated.endswith(".c") else "c++",
                         *([] if translated.endswith(".c") else [DEFAULT_STD]), *own, *unit.cxx_flags]
            plan.file_flags.setdefault(translated, flags)
            plan.owners.setdefault(unit.name, []).append(translated)
    return plan


def compile_extensions(plan: ExtensionPlan, hip_tree: Path, build_dir: Path, settings: ProjectSettings,
                       cache_dir: Path, toolchain: Toolchain, sandbox: Sandbox, headers: HeaderTree, *,
                       on_file: Callable[[FileResult, int, int], None] | None = None,
                       should_stop: Callable[[], bool] = lambda: False) -> CompileReport:
    """Compile every planned source in ``sandbox`` (the run's: the translated tree at its read-only place)."""
    started = time.monotonic()
    box = sandbox.with_binds({headers.mount: headers.path})
    tree = scan_tree(hip_tree, settings.exclude_globs, settings.include_dirs)
    compile_plan = _Plan(tree, build_dir, list(BASE_FLAGS), toolchain, ObjectCache(cache_dir),
                         settings.compile_timeout_s, should_stop, box, plan.file_flags)
    try:
        results = _compile_all(compile_plan, sorted(plan.file_flags), os.cpu_count() or 1, on_file)
    except (WorkError, SandboxUnavailable) as exc:
        return CompileReport([], DEFAULT_STD, [], 0, 0, time.monotonic() - started, error=str(exc))
    hits = sum(1 for r in results if r.cached)
    misses = sum(1 for r in results if not r.cached and r.status != "cancelled")
    return CompileReport(results, DEFAULT_STD.removeprefix("-std="), [], hits, misses, time.monotonic() - started)
