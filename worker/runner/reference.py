"""The CUDA reference: build the ORIGINAL sources with nvcc and run the smoke command on an NVIDIA GPU.

Build mirrors the per-TU mode of the HIP side: each translation unit (.cu, .cpp, .cc, .cxx, .c)
is compiled with ``nvcc -c``; each unit that defines ``main`` is linked with all the units that
do not into ``<build_dir>/<stem of the main file>``. The target is the leased GPU's ``sm_XX``,
else ``-arch=native``. Every nvcc call runs in the sandbox (the host's toolkit read-only): for a run,
the sources read-only at ``/workspace/source`` and the build folder in its ``work/``, which the root
side reaches only through sandboxed commands. Standard library only: this module also runs on bare GPU
machines.
"""
from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from translator.globs import is_excluded
from translator.tree import link_stays_inside
from worker.project_settings import ProjectSettings
from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.work import WorkError, make_dirs, remove

TU_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
BUILD_OUTPUT_LIMIT = 200_000
_MAIN = re.compile(r"^\s*(?:int|auto|void)\s+main\s*\(", re.MULTILINE)
Log = Callable[[str], None]


@dataclass
class StepRecord:
    """One nvcc call."""

    target: str  # the source (compile) or the executable (link)
    command: str
    ok: bool
    duration_s: float
    output: str  # compiler messages, bounded

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class BuildResult:
    ok: bool
    arch: str
    build_dir: str
    executables: list[str] = field(default_factory=list)  # paths relative to build_dir
    compiles: list[StepRecord] = field(default_factory=list)
    links: list[StepRecord] = field(default_factory=list)
    error: str = ""
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def find_translation_units(source_tree: Path, exclude_globs: tuple[str, ...]) -> list[Path]:
    """Sources to compile, relative to ``source_tree``, sorted."""
    units = []
    for path in sorted(source_tree.rglob("*")):
        relative = path.relative_to(source_tree).as_posix()
        if path.suffix not in TU_SUFFIXES or not path.is_file():
            continue
        if path.is_symlink() and not link_stays_inside(path, source_tree):
            continue  # never compile what a link outside the tree points at
        if is_excluded(relative, exclude_globs):
            continue
        units.append(path.relative_to(source_tree))
    return units


def defines_main(path: Path) -> bool:
    try:
        return _MAIN.search(path.read_text(errors="replace")) is not None
    except OSError:
        return False


def arch_flag(arch: str) -> str:
    return f"-arch={arch or 'native'}"


def compile_flags(source_tree: Path, settings: ProjectSettings, unit: Path) -> list[str]:
    flags = [f"-I{source_tree}", f"-I{source_tree / unit.parent}"]
    flags += [f"-I{(source_tree / d) if not os.path.isabs(d) else d}" for d in settings.include_dirs]
    flags += [f"-D{define}" for define in settings.defines]
    if unit.suffix != ".c":
        flags.append(f"-std={settings.cxx_std or 'c++17'}")
    return flags


def object_path(build_dir: Path, unit: Path) -> Path:
    return build_dir / "obj" / (unit.as_posix().replace("/", "__") + ".o")


def _step(argv: list[str], target: str, sandbox: Sandbox, cwd: Path, timeout_s: float) -> StepRecord:
    """One nvcc call, in the sandbox (the host's toolkit read-only, only the workspace writable)."""
    inside = [_inside_argument(sandbox, arg) for arg in argv]
    try:
        done = sandbox.run(inside, sandbox.inside(cwd), SandboxLimits(timeout_s=timeout_s, processes=256,
                                                                    output_bytes=BUILD_OUTPUT_LIMIT))
    except SandboxUnavailable as exc:
        return StepRecord(target, " ".join(argv), False, 0.0, f"could not start: {exc}")
    notes = "".join(f"\n[{violation}]" for violation in done.violations)
    return StepRecord(target, " ".join(argv), done.ok, round(done.process.duration_s, 3),
                      done.process.output.strip() + notes)


def _inside_argument(sandbox: Sandbox, argument: str) -> str:
    """Workspace paths in an argument (``-I/ws/source``, ``/ws/build/a.o``) as the sandbox sees them."""
    for prefix in ("-I", "-o", ""):
        rest = argument[len(prefix):]
        if argument.startswith(prefix) and rest.startswith("/"):
            try:
                return prefix + sandbox.inside(rest)
            except ValueError:
                continue  # not a path of the workspace or its read-only folders (a system folder)
    return argument


def _compile_all(
    source_tree: Path, build_dir: Path, settings: ProjectSettings, arch: str, nvcc: str, log: Log, sandbox: Sandbox
) -> list[StepRecord]:
    records = []
    for unit in find_translation_units(source_tree, settings.exclude_globs):
        out = object_path(build_dir, unit)
        argv = [nvcc, arch_flag(arch), *compile_flags(source_tree, settings, unit), "-c", str(source_tree / unit), "-o", str(out)]
        record = _step(argv, unit.as_posix(), sandbox, build_dir, settings.compile_timeout_s)
        log(f"nvcc -c {unit.as_posix()}: {'ok' if record.ok else 'FAILED'} ({record.duration_s:.1f} s)\n")
        records.append(record)
    return records


def _link_all(
    source_tree: Path, build_dir: Path, settings: ProjectSettings, arch: str, nvcc: str, log: Log, sandbox: Sandbox
) -> tuple[list[StepRecord], list[str]]:
    units = find_translation_units(source_tree, settings.exclude_globs)
    mains = [u for u in units if defines_main(source_tree / u)]
    shared = [str(object_path(build_dir, u)) for u in units if u not in mains]
    records, executables = [], []
    for unit in mains:
        exe = build_dir / unit.with_suffix("").name
        libs = [f"-l{lib}" for lib in settings.link_libraries]
        argv = [nvcc, arch_flag(arch), str(object_path(build_dir, unit)), *shared, "-o", str(exe), *libs]
        record = _step(argv, exe.name, sandbox, build_dir, settings.compile_timeout_s)
        log(f"nvcc link {exe.name}: {'ok' if record.ok else 'FAILED'}\n")
        records.append(record)
        if record.ok:
            executables.append(exe.name)
    return records, executables


def build_cuda_reference(
    source_tree: Path | str,
    build_dir: Path | str,
    settings: ProjectSettings,
    sandbox: Sandbox,
    arch: str = "",
    nvcc: str = "nvcc",
    log: Log = lambda text: None,
) -> BuildResult:
    """Compile and link the untranslated sources; a failed compile is a result, not an exception."""
    started = time.monotonic()
    source, build = Path(source_tree).resolve(), Path(os.path.abspath(build_dir))  # build: never resolved
    result = BuildResult(ok=False, arch=arch or "native", build_dir=str(build))
    try:
        remove(sandbox, sandbox.inside(build))  # the build folder is the sandbox's: emptied and made there
        make_dirs(sandbox, sandbox.inside(build / "obj"))
    except (WorkError, SandboxUnavailable, ValueError) as exc:
        result.error = f"could not prepare the build folder: {exc}"
        return result
    nvcc = shutil.which(nvcc) or nvcc  # the same path inside: the host's /usr and /opt are bound read-only
    result.compiles = _compile_all(source, build, settings, arch, nvcc, log, sandbox)
    failed = [r.target for r in result.compiles if not r.ok]
    if not result.compiles:
        result.error = "no CUDA or C++ translation unit found"
    elif failed:
        result.error = f"{len(failed)} translation unit(s) failed to compile: {', '.join(failed[:5])}"
    elif settings.link_target != "none":
        result.links, result.executables = _link_all(source, build, settings, arch, nvcc, log, sandbox)
        if any(not r.ok for r in result.links):
            result.error = "linking failed"
    result.ok = not result.error
    result.duration_s = round(time.monotonic() - started, 3)
    return result
