"""Mode 2: run the repository's own build (CMake, Make, or a given command) in the toolchain sandbox.

Every step runs in the sandbox over the toolchain root (``sandbox.py``): for a run, its ``work/`` at
``/workspace`` with the build's copy of the translated tree at ``/workspace/hip`` (``work.py``), nothing
of the host. The build files are read from the translated tree as translation wrote it (``read_tree``),
never from the copy a build may have changed. CMake is configured with the root's clang as the HIP compiler
(CMake's HIP language), ``hipcc`` as the C++ compiler, the project's targets as HIP architectures and
``gnu17`` for C without a standard of its own, then checked and its outputs inspected against CMake's own
model of the targets (``cmake_build.py``: File API, keep-going, "nothing built");
Makefiles are built one folder at a time as ``make_build.py`` says (make's own data base read first,
``make -k``, what was built checked); ``settings.build_command`` runs through
``sh -c`` inside the sandbox, in the translated tree. Compiler diagnostics and link problems are
parsed from the combined output. After a CMake or Make build, ``project_targets.py`` records the outputs and
the failing units by GPU target.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from worker.buildmodel.cmake_model import ModelError
from worker.project_settings import ProjectSettings
from worker.toolchain.cmake_build import (
    CMakeOutcome,
    check_configuration,
    configure_flags,
    inspect_outputs,
    keep_going,
    load_model,
    make_query,
    relative_build,
)
from worker.toolchain.demangle import sandboxed_demangler
from worker.toolchain.detect import Toolchain, detect_toolchain
from worker.toolchain.diagnostics import (
    Diagnostic,
    LinkProblem,
    parse_compiler_output,
    parse_linker_output,
)
from worker.toolchain.link_owners import locate_definitions
from worker.toolchain.log_families import as_diagnostics, parse_log
from worker.toolchain.make_build import (
    MakeUnitResult,
    build_make_units,
    make_commands,
    make_environment,
    single_target_environment,
)
from worker.toolchain.project_targets import (
    ProjectTargets,
    TargetProbe,
    cmake_compiles,
    existing_in_sandbox,
    make_compiles,
    unit_targets,
)
from worker.toolchain.roots import select_root
from worker.toolchain.sandbox import MOUNT, Mechanism, Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.version_defines import VersionDefine, version_defines
from worker.toolchain.work import WorkError


@dataclass
class BuildStep:
    name: str
    command: list[str]  # as run inside the sandbox
    cwd: str  # inside the sandbox


@dataclass
class ProjectBuildReport:
    system: str  # "cmake", "make", "command" or "" when none was found
    steps: list[dict[str, object]] = field(default_factory=list)  # name, command, returncode, duration_s
    ok: bool = False
    output: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    link_problems: list[LinkProblem] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    mechanism: Mechanism = "none"
    error: str = ""
    duration_s: float = 0.0
    run_dir: str = ""  # workspace-relative folder its outputs land in (smoke commands run there)
    cmake: CMakeOutcome | None = None  # CMake's model of the build and what it left (CMake builds)
    units: list[dict[str, object]] = field(default_factory=list)  # make: one result per build folder
    defines: tuple[VersionDefine, ...] = ()  # what the toolchain's HIP version needed, given to every step
    targets: ProjectTargets | None = None  # outputs and failing units by GPU target (project_targets.py)


def plan_build(
    hip_tree: Path, build_dir: Path, settings: ProjectSettings, toolchain: Toolchain, workspace: Path,
    read_tree: Path | None = None, folders: Sequence[str] = (), defines: Sequence[VersionDefine] = (),
) -> tuple[str, list[BuildStep]]:
    """The steps of the project's own build, with paths as the sandbox sees them; the build files are
    looked for in ``read_tree`` (default ``hip_tree``). ``defines`` go on CMake's HIP and C++ flags (a Makefile
    build gets them with the offload targets from ``make_build.make_environment``)."""
    jobs = str(os.cpu_count() or 1)
    source, build = _inside(workspace, hip_tree), _inside(workspace, build_dir)
    hip_tree = read_tree or hip_tree
    if settings.build_command:
        return "command", [BuildStep("build", ["sh", "-c", settings.build_command], source)]
    if (hip_tree / "CMakeLists.txt").is_file():
        configure = ["cmake", "-S", source, "-B", build, "-DCMAKE_CXX_COMPILER=hipcc",
                     f"-DCMAKE_HIP_COMPILER={toolchain.clang}", "-DCMAKE_HIP_PLATFORM=amd",
                     *configure_flags(list(settings.offload_archs))]
        if defines:
            flags = " ".join(d.flag for d in defines)
            configure += [f"-DCMAKE_HIP_FLAGS={flags}", f"-DCMAKE_CXX_FLAGS={flags}"]
        if settings.cxx_std:
            configure.append(f"-DCMAKE_CXX_STANDARD={settings.cxx_std.split('++')[-1]}")
        return "cmake", [BuildStep("configure", configure, source),
                         BuildStep("build", ["cmake", "--build", build, "-j", jobs], source)]
    if folders or any((hip_tree / name).is_file() for name in ("Makefile", "makefile", "GNUmakefile")):
        # The hipify stage converted the Makefiles (compilers, flags, paths): they run as they are now;
        # overriding CXX/NVCC here would drop what the conversion put on those variables.
        return "make", [BuildStep(f"make {folder}", make_commands(folder, int(jobs))[1], source)
                        for folder in (folders or ["."])]
    return "", []


def define_environment(defines: Sequence[VersionDefine]) -> dict[str, str]:
    """hipcc appends ``HIPCC_COMPILE_FLAGS_APPEND`` to every compile, whatever flags a build file gives it."""
    return {"HIPCC_COMPILE_FLAGS_APPEND": " ".join(d.flag for d in defines)} if defines else {}


def _inside(workspace: Path, path: Path) -> str:
    """From the names alone: a path the build may have made a link is never resolved on the host."""
    return str(MOUNT / Path(os.path.abspath(path)).relative_to(os.path.abspath(workspace)))


def run_project_build(
    workspace_root: Path, hip_tree: Path, build_dir: Path, settings: ProjectSettings,
    on_line: Callable[[str], None] | None = None, toolchain: Toolchain | None = None,
    should_stop: Callable[[], bool] = lambda: False, *, sandbox: Sandbox | None = None,
    read_tree: Path | None = None, make_folders: Sequence[str] = (),
) -> ProjectBuildReport:
    """Run the build steps in the sandbox (``sandbox``, else one over ``workspace_root``), within
    ``settings.build_timeout_s`` in total. ``hip_tree`` and ``build_dir`` lie in the sandbox's workspace;
    ``read_tree`` is where the build files are looked for on the root side (default ``hip_tree``)."""
    toolchain = toolchain or detect_toolchain(settings.toolchain)
    if not toolchain.available:
        return ProjectBuildReport("", error=toolchain.error or "the toolchain root has no hipcc")
    defines = version_defines(toolchain.hipcc_version, settings.defines)
    system, steps = plan_build(hip_tree, build_dir, settings, toolchain, workspace_root, read_tree, make_folders,
                               defines)
    report = ProjectBuildReport(system, run_dir="build" if system == "cmake" else "hip", defines=defines)
    if not steps:
        report.error = "no CMakeLists.txt or Makefile in the translated tree and no build_command set"
        return report
    sandbox = sandbox or Sandbox(select_root(toolchain.name), workspace_root)
    try:
        sandbox.writable_dir(build_dir)
        if system == "cmake":
            report.cmake = CMakeOutcome()
            make_query(sandbox, sandbox.inside(build_dir))
    except (OSError, SandboxUnavailable, WorkError) as exc:
        report.error = str(exc)
        return report
    started = time.monotonic()
    outputs: list[str] = []
    if system == "make":
        _make_build(report, sandbox, [step.name.removeprefix("make ") for step in steps], settings, on_line,
                    should_stop, started + settings.build_timeout_s, os.path.dirname(toolchain.clang), defines)
        outputs.append(report.output)
        steps = []
    for step in steps:
        remaining = settings.build_timeout_s - (time.monotonic() - started)
        limits = SandboxLimits(timeout_s=max(remaining, 1.0), memory_mb=settings.build_memory_mb)
        if on_line is not None:
            on_line(f"$ {' '.join(step.command)}\n")
        try:
            result = sandbox.run(step.command, step.cwd, limits, env=define_environment(defines), on_line=on_line,
                                 should_stop=should_stop)
        except SandboxUnavailable as exc:
            report.error = str(exc)
            break
        outputs.append(result.process.output)
        report.mechanism = result.mechanism
        report.violations += result.violations
        report.steps.append({"name": step.name, "command": step.command, "cwd": step.cwd,
                             "returncode": result.process.returncode,
                             "duration_s": round(result.process.duration_s, 3)})
        if not result.ok:  # decided by the sandbox's signals; the first violation says why where it can
            report.error = f"{step.name} step failed (exit status {result.process.returncode})" + "".join(
                f": {violation}" for violation in result.violations[:1])
            break
        if report.cmake is not None and step.name == "configure":
            report.error = _read_cmake_model(report.cmake, workspace_root, build_dir, read_tree or hip_tree,
                                             settings, on_line)
            if report.error:
                break
            steps[-1].command += keep_going(report.cmake.model.generator if report.cmake.model else "")
    built = any(s["name"] == "build" for s in report.steps)
    if report.cmake is not None and (built or not report.error):  # a failed build too: what it did leave
        found = inspect_outputs(report.cmake, sandbox, workspace_root, relative_build(workspace_root, build_dir),
                                str(Path(toolchain.clang).parent / "llvm-objdump"),
                                list(settings.offload_archs), "".join(outputs), read_tree or hip_tree)
        if report.error:
            report.cmake.nothing_built = ""  # the build step failed: that is the verdict, not "nothing built"
        report.error = report.error or found
    if report.cmake is not None and built:
        report.targets = _cmake_targets(report, sandbox, workspace_root, build_dir, settings,
                                        started + settings.build_timeout_s)
    report.ok = not report.error
    report.output = "".join(outputs)
    report.diagnostics = parse_compiler_output(report.output)
    report.diagnostics += as_diagnostics(parse_log(report.output), report.diagnostics)  # CMake, make, nvcc, Python, pip
    report.link_problems = parse_linker_output(report.output, sandboxed_demangler(sandbox))
    if read_tree is not None:  # the root side reads the run's hip/ folder, never the copy in work/
        locate_definitions(report.link_problems, read_tree)
    report.duration_s = time.monotonic() - started
    return report


def _read_cmake_model(outcome: CMakeOutcome, workspace: Path, build_dir: Path, tree: Path, settings: ProjectSettings,
                      on_line: Callable[[str], None] | None) -> str:
    """CMake's model after the configure step, checked; the configuration error ("" when it is sound)."""
    try:
        outcome.model = load_model(workspace, relative_build(workspace, build_dir))
    except ModelError as exc:
        return f"CMake's model of the build could not be read: {exc}"
    check_configuration(outcome, tree, list(settings.offload_archs))
    targets = outcome.model.built_targets
    if on_line is not None:
        on_line(f"[migrator] CMake's model: {len(targets)} target{'s' if len(targets) != 1 else ''} that build code"
                + (f" ({', '.join(t.name for t in targets[:8])})" if targets else "")
                + (f"; C compiled with -std={', '.join(outcome.c_dialects)}" if outcome.c_dialects else "") + "\n")
        for problem in outcome.problems:
            on_line(f"[migrator] build configuration: {problem}\n")
    if outcome.problems:
        return "build configuration: " + "; ".join(outcome.problems[:6])
    return ""


def _cmake_targets(report: ProjectBuildReport, sandbox: Sandbox, workspace: Path, build_dir: Path,
                   settings: ProjectSettings, deadline: float) -> ProjectTargets:
    """CMake's outputs by the targets their device code holds; failing units compiled per target with the
    commands of ``compile_commands.json``."""
    archs = list(settings.offload_archs)
    found = ProjectTargets(archs, "compile_commands.json")
    outcome = report.cmake
    found.outputs = [(o.path, o.target, o.offload_archs) for o in (outcome.outputs if outcome else [])
                     if o.present and o.offload_archs]
    environment = define_environment(report.defines)
    probe = TargetProbe(sandbox, lambda arch: environment, deadline, settings.build_memory_mb)
    compiles = cmake_compiles(workspace, relative_build(workspace, build_dir))
    made = existing_in_sandbox(sandbox, SandboxLimits(timeout_s=120, memory_mb=512))
    failed_build = any(s["name"] == "build" and s["returncode"] != 0 for s in report.steps)
    found.units = unit_targets(compiles, made, archs, probe, build_ok=not failed_build)
    return found


def _make_targets(results: list[MakeUnitResult], sandbox: Sandbox, settings: ProjectSettings,
                  defines: Sequence[VersionDefine], deadline: float) -> ProjectTargets:
    """Each file make produced by the targets its code objects hold; failing units compiled per target
    with the commands of make's dry run, in make's environment for that target alone."""
    archs = list(settings.offload_archs)
    found = ProjectTargets(archs, "make's dry run")
    environment = make_environment(settings, defines)
    probe = TargetProbe(sandbox, lambda arch: single_target_environment(environment, arch), deadline,
                        settings.build_memory_mb)
    made = existing_in_sandbox(sandbox, SandboxLimits(timeout_s=120, memory_mb=512))
    for unit in results:
        found.outputs += [(path, unit.folder, held) for path, held in unit.device_targets.items()]
        if unit.dry_run is not None:
            found.units += unit_targets(make_compiles(unit.dry_run), made, archs, probe, build_ok=unit.returncode == 0)
    return found


def _make_build(report: ProjectBuildReport, sandbox: Sandbox, folders: list[str], settings: ProjectSettings,
                on_line: Callable[[str], None] | None, should_stop: Callable[[], bool], deadline: float,
                llvm_bin: str, defines: Sequence[VersionDefine] = ()) -> None:
    """Each build folder as its own unit; the build passes when every unit built something for the run's
    targets and none failed."""
    results = build_make_units(sandbox, folders, settings, on_line, should_stop, deadline, llvm_bin, defines)
    report.units = [unit.to_dict() for unit in results]
    report.mechanism = "bwrap"
    report.output = "".join(unit.output for unit in results)
    report.steps = [{"name": f"make {u.folder}", "command": make_commands(u.folder, os.cpu_count() or 1)[1],
                     "cwd": u.folder, "returncode": u.returncode, "duration_s": round(u.duration_s, 3)}
                    for u in results]
    report.targets = _make_targets(results, sandbox, settings, defines, deadline)
    failed = [unit for unit in results if not unit.ok]
    if len(results) == 1 and failed:
        report.error = failed[0].error
    elif failed:
        report.error = (f"{len(failed)} of {len(results)} build folders failed: "
                        + "; ".join(unit.error for unit in failed[:3]) + (" ..." if len(failed) > 3 else ""))
    elif not results:
        report.error = "cancelled before any build folder ran"
