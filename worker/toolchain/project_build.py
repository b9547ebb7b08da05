"""Mode 2: run the repository's own build (CMake, Make, or a given command) with hipcc, sandboxed.

CMake is configured with ``hipcc`` as the C++ compiler and the targets as HIP
architectures; Make gets ``CXX=hipcc HIPCC=hipcc NVCC=hipcc`` overrides;
``settings.build_command`` runs through ``sh -c`` in the translated tree.
Compiler diagnostics and link problems are parsed from the combined output.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from worker.project_settings import ProjectSettings
from worker.toolchain.diagnostics import (
    Diagnostic,
    LinkProblem,
    parse_compiler_output,
    parse_linker_output,
)
from worker.toolchain.sandbox import Mechanism, SandboxLimits, run_sandboxed


@dataclass
class BuildStep:
    name: str
    command: list[str]
    cwd: Path


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


def plan_build(hip_tree: Path, build_dir: Path, settings: ProjectSettings) -> tuple[str, list[BuildStep]]:
    jobs = str(os.cpu_count() or 1)
    if settings.build_command:
        return "command", [BuildStep("build", ["sh", "-c", settings.build_command], hip_tree)]
    if (hip_tree / "CMakeLists.txt").is_file():
        archs = ";".join(settings.offload_archs)
        configure = ["cmake", "-S", str(hip_tree), "-B", str(build_dir), "-DCMAKE_CXX_COMPILER=hipcc",
                     "-DCMAKE_HIP_COMPILER=hipcc", f"-DCMAKE_HIP_ARCHITECTURES={archs}",
                     f"-DAMDGPU_TARGETS={archs}", f"-DGPU_TARGETS={archs}"]
        if settings.cxx_std:
            configure.append(f"-DCMAKE_CXX_STANDARD={settings.cxx_std.split('++')[-1]}")
        return "cmake", [BuildStep("configure", configure, hip_tree),
                         BuildStep("build", ["cmake", "--build", str(build_dir), "-j", jobs], hip_tree)]
    if any((hip_tree / name).is_file() for name in ("Makefile", "makefile", "GNUmakefile")):
        arch_flags = " ".join(f"--offload-arch={arch}" for arch in settings.offload_archs)
        return "make", [BuildStep("build", ["make", "-j", jobs, "CXX=hipcc", "HIPCC=hipcc", "NVCC=hipcc",
                                            f"HIPFLAGS={arch_flags}"], hip_tree)]
    return "", []


def run_project_build(
    workspace_root: Path, hip_tree: Path, build_dir: Path, settings: ProjectSettings,
    on_line: Callable[[str], None] | None = None,
) -> ProjectBuildReport:
    """Run the build steps in the sandbox, within ``settings.build_timeout_s`` in total."""
    system, steps = plan_build(hip_tree, build_dir, settings)
    report = ProjectBuildReport(system)
    if not steps:
        report.error = "no CMakeLists.txt or Makefile in the translated tree and no build_command set"
        return report
    build_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    outputs: list[str] = []
    for step in steps:
        remaining = settings.build_timeout_s - (time.monotonic() - started)
        limits = SandboxLimits(timeout_s=max(remaining, 1.0), memory_mb=settings.build_memory_mb)
        result = run_sandboxed(step.command, workspace_root, step.cwd, limits, on_line)
        outputs.append(result.process.output)
        report.mechanism = result.mechanism
        report.violations += result.violations
        report.steps.append({"name": step.name, "command": step.command, "returncode": result.process.returncode,
                             "duration_s": round(result.process.duration_s, 3)})
        if result.violations:
            report.error = f"{step.name} step broke the sandbox rules: {result.violations[0]}"
            break
        if not result.ok:
            report.error = f"{step.name} step failed (exit status {result.process.returncode})"
            break
    report.ok = not report.error
    report.output = "".join(outputs)
    report.diagnostics = parse_compiler_output(report.output)
    report.link_problems = parse_linker_output(report.output)
    report.duration_s = time.monotonic() - started
    return report
