"""Per-translation-unit compile of a translated tree, each file in the sandbox over the toolchain root.

Every TU (``.cu``/``.hip``, and C/C++ sources with CUDA/HIP content) is compiled
as HIP (``clang++ -x hip``, the toolchain's own driver, called directly so that no
shell ever sees a file name) for each target in ``settings.offload_archs``, in
parallel (a thread pool driving one sandboxed compiler per TU), each with its own
time limit. Objects are cached by content (see ``cache.py``), so an unchanged
re-run compiles nothing.

The compiler reads the translated tree read-only (``/workspace/.translated``) and writes objects into
the build folder; the root side reads the tree as translation wrote it (sources, cache keys) and reaches
into the build folder only through ``worker.contained`` and sandboxed commands (``work.py``).
"""
from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from worker.contained import ContainedFileError, stat_beneath
from worker.project_settings import ProjectSettings
from worker.toolchain.cache import ObjectCache, staged
from worker.toolchain.detect import Toolchain, detect_toolchain
from worker.toolchain.diagnostics import Diagnostic, parse_compiler_output
from worker.toolchain.roots import select_root
from worker.toolchain.runner import ProcessResult
from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.sources import (
    HEADER_SUFFIXES,
    BuildUnit,
    SourceTree,
    detect_cxx_std,
    scan_tree,
)
from worker.toolchain.targets import (
    MAX_PROBED_UNITS,
    ProbeBudget,
    ProbeOutcome,
    TargetResult,
    TargetStatus,
    probe_targets,
    project_place,
    single_target,
    target_archs,
    uniform,
)
from worker.toolchain.version_defines import VersionDefine, version_defines
from worker.toolchain.work import TRANSLATED_MOUNT, WorkError, make_dirs, step

FileStatus = Literal["passed", "failed", "timeout", "crashed", "cancelled"]
C_DIALECT = "gnu17"  # C sources without -std: the GNU dialect of C17 (the toolchain's compilers default to C23)
# ...with the warnings, not errors, that compilers before clang 16 and GCC 14 gave old C code
_LENIENT_C = ("-Wno-error=implicit-function-declaration", "-Wno-error=implicit-int", "-Wno-error=int-conversion")
COMPILED_SUFFIXES = (".cu", ".hip", ".cpp", ".cc", ".cxx", ".c++", ".c")
COMPILE_OUTPUT_BYTES = 2_000_000  # one file's compiler messages; more is a runaway (a template error loop)
LIMIT_FLAG = "limit"  # the ``flag`` of a diagnostic Migrator adds for a limit its sandbox recorded (causes.py)


@dataclass
class FileResult:
    path: str  # tree-relative
    status: FileStatus
    duration_s: float
    object_path: str = ""  # absolute (in the sandbox's workspace), empty when no object
    object_size: int = 0
    cached: bool = False
    diagnostics: list[Diagnostic] = field(default_factory=list)
    output: str = ""
    command: list[str] = field(default_factory=list)
    targets: tuple[TargetResult, ...] = ()  # per GPU target (targets.py)

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "warning")


@dataclass
class CompileReport:
    files: list[FileResult]
    cxx_std: str
    include_dirs: list[str]
    cache_hits: int
    cache_misses: int
    duration_s: float
    error: str = ""  # set when nothing could be compiled at all (no hipcc, no tree)
    defines: tuple[VersionDefine, ...] = ()  # what this HIP version needed (version_defines.py)
    offload_archs: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.error and all(f.status == "passed" for f in self.files)

    @property
    def diagnostics(self) -> list[tuple[str, Diagnostic]]:
        return [(f.path, d) for f in self.files for d in f.diagnostics]

    def objects(self) -> list[str]:
        return [f.object_path for f in self.files if f.status == "passed" and f.object_path]


@dataclass(frozen=True)
class _Plan:
    tree: SourceTree
    build_dir: Path
    base_flags: list[str]
    toolchain: Toolchain
    cache: ObjectCache
    timeout_s: float
    should_stop: Callable[[], bool]
    sandbox: Sandbox
    file_flags: dict[str, list[str]] = field(default_factory=dict)  # per file, from its build targets
    probes: ProbeBudget = field(default_factory=lambda: ProbeBudget(MAX_PROBED_UNITS))
    output_bytes: int = COMPILE_OUTPUT_BYTES


def compile_tree(
    hip_tree: Path,
    build_dir: Path,
    settings: ProjectSettings,
    cache_dir: Path,
    toolchain: Toolchain | None = None,
    *,
    original_tree: Path | None = None,
    jobs: int | None = None,
    on_file: Callable[[FileResult, int, int], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    units: Sequence[BuildUnit] = (),
    sandbox: Sandbox | None = None,
    output_bytes: int = COMPILE_OUTPUT_BYTES,
) -> CompileReport:
    """Compile every TU of ``hip_tree`` into ``build_dir/obj``; ``on_file(result, done, total)`` per file.

    ``sandbox`` sees ``hip_tree`` read-only and ``build_dir`` in its workspace (a run's sandbox:
    ``work.run_sandbox``); without one, a sandbox with ``build_dir`` as its workspace and ``hip_tree``
    read-only. With ``units`` (the targets of the project's build files) the sources are theirs, each
    compiled with its targets' include directories and definitions; without, every translation unit."""
    started = time.monotonic()
    toolchain = toolchain or detect_toolchain(settings.toolchain)
    if not toolchain.available:
        return CompileReport([], "", [], 0, 0, 0.0, error=toolchain.error or "the toolchain root has no hipcc")
    if not hip_tree.is_dir():
        return CompileReport([], "", [], 0, 0, 0.0, error="the translated tree does not exist")
    if sandbox is None:
        build_dir.mkdir(parents=True, exist_ok=True)  # a folder of the caller's that no sandbox used yet
        sandbox = workspace_sandbox(toolchain, hip_tree, build_dir)
    tree = scan_tree(hip_tree, settings.exclude_globs, settings.include_dirs)
    cxx_std = settings.cxx_std or detect_cxx_std(*(p for p in (original_tree, hip_tree) if p))
    defines = version_defines(toolchain.hipcc_version, settings.defines)
    plan = _Plan(tree, build_dir, compile_flags(settings, cxx_std, tree.include_dirs, defines), toolchain,
                 ObjectCache(cache_dir), settings.compile_timeout_s, should_stop, sandbox, unit_flags(tree, units),
                 output_bytes=output_bytes)
    sources = sorted(plan.file_flags) if units else tree.translation_units
    try:
        results = _compile_all(plan, sources, jobs or os.cpu_count() or 1, on_file)
    except (WorkError, SandboxUnavailable) as exc:
        return CompileReport([], cxx_std, tree.include_dirs, 0, 0, time.monotonic() - started, error=str(exc))
    hits = sum(1 for r in results if r.cached)
    misses = sum(1 for r in results if not r.cached and r.status != "cancelled")
    return CompileReport(results, cxx_std, tree.include_dirs, hits, misses, time.monotonic() - started,
                         defines=defines, offload_archs=settings.offload_archs)


def unit_flags(tree: SourceTree, units: Sequence[BuildUnit]) -> dict[str, list[str]]:
    """Each compilable source of the build targets, with the -I and -D flags of the targets listing it."""
    flags: dict[str, list[str]] = {}
    files = tree.file_set
    for unit in units:
        own = [f"-I{d}" for d in unit.include_dirs] + [f"-D{d}" for d in unit.defines]
        for source in unit.sources:
            if source in files and Path(source).suffix.lower() in COMPILED_SUFFIXES:
                std = [f"-std={unit.std}"] if unit.std and ("++" in unit.std) != source.lower().endswith(".c") else []
                flags[source] = list(dict.fromkeys([*flags.get(source, []), *own, *std]))
    return flags


def workspace_sandbox(toolchain: Toolchain, hip_tree: Path, build_dir: Path) -> Sandbox:
    """A sandbox over the toolchain's root with ``build_dir`` as its workspace and ``hip_tree`` read-only
    at /workspace/.translated (for callers without a run: benchmarks, tests)."""
    return Sandbox(select_root(toolchain.name), build_dir, read_only=(), binds={str(TRANSLATED_MOUNT): hip_tree})


def language_flags(base_flags: list[str], unit: str) -> list[str]:
    """C sources are compiled as C (HIP's platform defined for any HIP header they include; gnu17 where the
    build files name no C standard); the rest as HIP."""
    if Path(unit).suffix.lower() == ".c":
        kept = [f for f in base_flags if not f.startswith(("-std=c++", "-std=gnu++", "--offload-arch="))]
        dialect = [] if any(f.startswith("-std=") for f in kept) else [f"-std={C_DIALECT}", *_LENIENT_C]
        return [*kept, *dialect, "-D__HIP_PLATFORM_AMD__", "-x", "c"]
    return [*base_flags, "-x", "hip"]


def argument_path(relative: str) -> str:
    """A tree-relative path as a command argument: never mistaken for an option."""
    return relative if not relative.startswith("-") else f"./{relative}"


def compile_flags(settings: ProjectSettings, cxx_std: str, include_dirs: list[str],
                  defines: Sequence[VersionDefine] = ()) -> list[str]:
    """Flags shared by every TU; paths are tree-relative so objects and cache keys are relocatable.
    ``defines``: what the toolchain's HIP version needs (``version_defines``)."""
    # -fPIC: objects also go into shared libraries; -fno-crash-diagnostics: no reproducers left in /tmp
    flags = ["-c", f"-std={cxx_std}", "-O3", "-fPIC", "-fno-color-diagnostics", "-fno-crash-diagnostics"]
    flags += [f"--offload-arch={arch}" for arch in settings.offload_archs]
    flags += [f"-I{d}" for d in include_dirs]
    flags += [d if d.startswith("-D") else f"-D{d}" for d in settings.defines]
    flags += [d.flag for d in defines]
    flags += list(settings.extra_flags)
    return flags


def _compile_all(
    plan: _Plan, units: list[str], jobs: int, on_file: Callable[[FileResult, int, int], None] | None
) -> list[FileResult]:
    """Cached objects are put in place first (one sandboxed copy), then the rest compile in parallel."""
    results: list[FileResult] = []

    def report(result: FileResult) -> None:
        results.append(result)
        if on_file is not None:
            on_file(result, len(results), len(units))

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        keys = dict(zip(units, pool.map(lambda unit: _key_or_none(plan, unit), units), strict=True))
        folders = {plan.sandbox.inside(_object_path(plan, unit).parent) for unit in units}
        make_dirs(plan.sandbox, *folders)
        for result in _restore(plan, keys):
            report(result)
        done = {result.path for result in results}
        futures = [pool.submit(_compile_one_safely, plan, unit, keys[unit]) for unit in units if unit not in done]
        for future in as_completed(futures):  # report files as they finish, not in submission order
            report(future.result())
    return sorted(results, key=lambda result: result.path)


def object_path(build_dir: Path, unit: str) -> Path:
    """Where the object of the tree-relative ``unit`` goes in ``build_dir``."""
    return build_dir / "obj" / f"{unit}.o"


def _object_path(plan: _Plan, unit: str) -> Path:
    return object_path(plan.build_dir, unit)


def _key_or_none(plan: _Plan, unit: str) -> str | None:
    try:
        return cache_key(plan, unit)
    except OSError:
        return None  # compiled without the cache; the compile says what is wrong with the file


def _restore(plan: _Plan, keys: dict[str, str | None]) -> list[FileResult]:
    """Results for the units whose objects are cached, copied into the build folder by the sandbox user
    from a read-only folder; none when that copy fails (they are compiled instead)."""
    if plan.should_stop():
        return []
    started = time.monotonic()
    found = {unit: cached for unit, key in keys.items() if key and (cached := plan.cache.get(key)) is not None}
    if not found:
        return []
    obj = plan.build_dir / "obj"
    with staged(plan.cache.cache_dir, {f"{unit}.o": cached.object_path for unit, cached in found.items()}) as folder:
        box = plan.sandbox.with_binds({"/tmp/cached-objects": folder})
        try:
            step(box, ["cp", "-R", "--preserve=mode,timestamps", "--", "/tmp/cached-objects/.", box.inside(obj)],
                 "restore cached objects")
        except WorkError:
            return []
    duration = (time.monotonic() - started) / len(found)
    results = []
    for unit, cached in sorted(found.items()):
        size = _object_size(plan, _object_path(plan, unit))
        if size:
            results.append(FileResult(unit, "passed", duration, str(_object_path(plan, unit)), size, True,
                                      _diagnostics(plan, cached.output), cached.output,
                                      targets=uniform(_archs(plan, unit), "passed")))
    return results


def _object_size(plan: _Plan, path: Path) -> int:
    """The size of the object the compiler wrote (0: none), seen through a descriptor beneath the workspace."""
    try:
        return stat_beneath(plan.sandbox.workspace, _workspace_relative(plan, path)).st_size
    except ContainedFileError:
        return 0


def _workspace_relative(plan: _Plan, path: Path) -> str:
    return plan.sandbox.inside(path).removeprefix("/workspace/")


def cache_key(plan: _Plan, unit: str) -> str:
    digest = hashlib.sha256()
    digest.update(plan.toolchain.fingerprint.encode())
    digest.update("\0".join([*plan.base_flags, *plan.file_flags.get(unit, [])]).encode())
    included, macro_include = plan.tree.include_closure(unit)
    if macro_include:  # cannot follow #include MACRO: depend on every header in the tree
        included = [f for f in plan.tree.files if Path(f).suffix.lower() in HEADER_SUFFIXES]
    for relative in [unit, *included]:
        digest.update(f"\0{relative}\0".encode())
        digest.update((plan.tree.root / relative).read_bytes())
    return digest.hexdigest()


def _compile_one_safely(plan: _Plan, unit: str, key: str | None) -> FileResult:
    """A file that cannot be read or written (odd permissions, vanished) fails alone, not the stage."""
    try:
        return _compile_one(plan, unit, key)
    except OSError as exc:
        return FileResult(unit, "failed", 0.0, output=f"migrator: cannot compile {unit}: {exc.strerror or exc}\n")


def _compile_one(plan: _Plan, unit: str, key: str | None) -> FileResult:
    if plan.should_stop():
        return FileResult(unit, "cancelled", 0.0)
    output = _object_path(plan, unit)
    command = [plan.toolchain.clang, *language_flags(plan.base_flags, unit), *plan.file_flags.get(unit, []),
               argument_path(unit), "-o", plan.sandbox.inside(output)]
    try:
        done = plan.sandbox.run(command, plan.sandbox.inside(plan.tree.root), _limits(plan),
                                should_stop=plan.should_stop)
    except SandboxUnavailable as exc:
        return FileResult(unit, "failed", 0.0, output=f"migrator: {exc}\n", command=command)
    if done.process.stopped:
        return FileResult(unit, "cancelled", done.process.duration_s, command=command)
    process = done.process
    if done.violations and not process.timed_out:
        process.output += "".join(f"migrator: {v}\n" for v in done.violations)
    result = _file_result(plan, unit, process, output, command)
    result.diagnostics += limit_diagnostics(done.violations)
    result.targets = _targets(plan, unit, result)
    if result.status == "passed" and key:
        try:
            plan.cache.put(key, plan.sandbox.workspace, _workspace_relative(plan, output), process.output)
        except ContainedFileError:
            pass  # not a regular file in the build folder after all: simply not cached
    return result


def _archs(plan: _Plan, unit: str) -> list[str]:
    return target_archs(language_flags(plan.base_flags, unit))  # none for C sources


def _targets(plan: _Plan, unit: str, result: FileResult) -> tuple[TargetResult, ...]:
    """Per target: all passed with the unit; a failing unit of several targets compiled again per target."""
    archs = _archs(plan, unit)
    if result.status == "passed":
        return uniform(archs, "passed")
    if len(archs) == 1:
        first = _first_error(result.diagnostics)
        status: TargetStatus = result.status
        return (TargetResult(archs[0], status, *first, duration_s=result.duration_s),)
    if result.status != "failed" or not plan.probes.take():
        return uniform(archs, "unchecked")
    return probe_targets(archs, lambda arch: _probe(plan, unit, arch))


def _probe(plan: _Plan, unit: str, arch: str) -> ProbeOutcome:
    """``unit`` compiled for ``arch`` alone, its object discarded."""
    if plan.should_stop():
        return ProbeOutcome("cancelled")
    command = [plan.toolchain.clang, *language_flags(single_target(plan.base_flags, arch), unit),
               *plan.file_flags.get(unit, []), argument_path(unit), "-o", "/dev/null"]
    try:
        done = plan.sandbox.run(command, plan.sandbox.inside(plan.tree.root), _limits(plan), should_stop=plan.should_stop)
    except SandboxUnavailable:
        return ProbeOutcome("unchecked")
    process = done.process
    status: TargetStatus = ("cancelled" if process.stopped else "timeout" if process.timed_out else
                            "crashed" if process.crashed else "passed" if process.ok else "failed")
    message, file, line = _first_error(_diagnostics(plan, process.output)) if status == "failed" else ("", "", 0)
    return ProbeOutcome(status, message, file, line, process.duration_s)


def _first_error(diagnostics: Sequence[Diagnostic]) -> tuple[str, str, int]:
    first = next((d for d in diagnostics if d.is_error), None)
    return (first.message, *project_place(first.file, first.line, first.notes)) if first else ("", "", 0)


def _limits(plan: _Plan) -> SandboxLimits:
    return SandboxLimits(timeout_s=plan.timeout_s, memory_mb=8192, processes=256, output_bytes=plan.output_bytes)


def limit_diagnostics(violations: Sequence[str]) -> list[Diagnostic]:
    """One error per limit the sandbox recorded for a file's compile (time, output, memory, processes, disk,
    decided from signals and counters): a diagnostic whose cause is Migrator (``LIMIT_FLAG``), so the
    file's failure is explained by the limit rather than by whatever the compiler printed before it stopped."""
    return [Diagnostic("", 0, 0, "error", violation, LIMIT_FLAG) for violation in violations]


def _file_result(plan: _Plan, unit: str, process: ProcessResult, output_path: Path, command: list[str]) -> FileResult:
    size = _object_size(plan, output_path) if process.ok else 0
    status: FileStatus = "passed" if process.ok and size else "failed"
    output = process.output
    if process.timed_out:
        status = "timeout"
        output += f"\nmigrator: compile of {unit} killed after the {plan.timeout_s:g} s time limit\n"
    elif process.crashed:
        status = "crashed"
        output += f"\nmigrator: the compiler crashed on {unit} (exit status {process.returncode})\n"
    return FileResult(unit, status, process.duration_s, str(output_path) if status == "passed" else "",
                      size if status == "passed" else 0, False, _diagnostics(plan, output), output, command)


def _diagnostics(plan: _Plan, output: str) -> list[Diagnostic]:
    diagnostics = parse_compiler_output(output.replace(f"{plan.sandbox.inside(plan.tree.root)}/", ""))
    root = plan.tree.root.resolve()
    for diagnostic in diagnostics:
        diagnostic.file = _tree_relative(root, diagnostic.file)
        diagnostic.include_stack = [_tree_relative(root, entry) for entry in diagnostic.include_stack]
    return diagnostics


def _tree_relative(root: Path, printed: str) -> str:
    """``./inc/a.h`` -> ``inc/a.h``; paths outside the tree (system headers) stay as printed."""
    if not printed:
        return printed
    path, _, rest = printed.partition(":") if printed.count(":") == 1 else (printed, "", "")
    full = (root / path).resolve()
    try:
        relative = full.relative_to(root).as_posix()
    except ValueError:
        return printed
    return f"{relative}:{rest}" if rest else relative
