"""The compile stage's part for PyTorch extensions when the toolchain root has no ROCm PyTorch.

Inputs: the scan's ``project_kind`` (extension markers, kernel directories), the original tree (the
builds' declarations, read with ``ast`` and the CMake reader: ``worker/scanning/extension_units.py``),
the hipify stage's renames, the header tree of the worker's torch (``worker/toolchain/torch_headers.py``,
built on first use). Every source an extension's build would compile is compiled in the sandbox
(``worker/toolchain/extension_build.py``); diagnostics are mapped back to the original CUDA file and line.
Output: compile data with the per-file results, ``extensions`` (each extension's own result) and
``checked`` ("compiled against PyTorch X's headers, hipified; linking and running need a ROCm PyTorch
runner"). Fails on real diagnostics (a file that does not compile); no extension source found, or no
header tree (no torch in the worker), is a failure with the cause ``environment``.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from worker.context import StageContext, StageResult
from worker.payloads import CompileData, ExtensionBuildData
from worker.scanning.extension_units import ExtensionUnit, extension_units, torch_cmake_dirs
from worker.scanning.project_kind import ProjectKind
from worker.toolchain.compile import CompileReport, FileResult
from worker.toolchain.detect import Toolchain
from worker.toolchain.extension_build import compile_extensions, plan_extension
from worker.toolchain.linemap import TreeLineMap
from worker.toolchain.sandbox import Sandbox
from worker.toolchain.stage_data import compile_payload
from worker.toolchain.torch_headers import HeaderTree, HeaderTreeUnavailable, ensure_header_tree

RUNNER_NEEDED = "needs a ROCm PyTorch runner"
RUNNER_IMAGE = "rocm/pytorch"
_PACKAGE_FILES = ("setup.py", "pyproject.toml")


def runner_commands(units: list[ExtensionUnit], archs: tuple[str, ...], tree: Path) -> list[str]:
    """What a runner with a ROCm PyTorch runs to build each extension: ``pip install .`` only where a
    package build exists (setup.py, pyproject.toml); a JIT ``load()`` project is built by running it."""
    targets = ";".join(archs)
    commands = []
    for unit in units:
        where = "/workspace/hip" if unit.directory == "." else f"/workspace/hip/{unit.directory}"
        if unit.how in ("load", "load_inline"):
            script = unit.declared_in.rsplit(":", 1)[0]
            command = (f"cd /workspace/hip && PYTORCH_ROCM_ARCH='{targets}' python3 {shlex.quote(script)}  "
                       f"# torch.utils.cpp_extension.{unit.how} builds {unit.name} at run time")
        elif any((tree / unit.directory / name).is_file() for name in _PACKAGE_FILES):
            command = (f"cd {where} && PYTORCH_ROCM_ARCH='{targets}' python3 -m pip install --no-build-isolation "
                       "--no-deps --target /workspace/site -v .")
        else:
            command = (f"cmake -S {where} -B /workspace/build/{unit.name} -DCMAKE_PREFIX_PATH=\"$(python3 -c "
                       "'import torch; print(torch.utils.cmake_prefix_path)')\" && cmake --build "
                       f"/workspace/build/{unit.name}")
        if command not in commands:
            commands.append(command)
    return commands


@dataclass
class ExtensionOutcome:
    result: StageResult
    report: CompileReport | None = None
    extensions: list[ExtensionBuildData] = field(default_factory=list)


def read_units(ctx: StageContext, kind: ProjectKind) -> list[ExtensionUnit]:
    return [u for u in extension_units(ctx.workspace.source, tuple(ctx.settings.exclude_globs), torch_cmake_dirs(kind))
            if u.sources or u.how == "load_inline"]


def run_extensions(ctx: StageContext, toolchain: Toolchain, sandbox: Sandbox, line_map: TreeLineMap,
                   units: list[ExtensionUnit], renames: dict[str, str]) -> ExtensionOutcome:
    """Compile every extension source in ``sandbox`` (the run's, work/ mounted) and judge by the results."""
    try:
        headers = ensure_header_tree()
    except HeaderTreeUnavailable as exc:
        return ExtensionOutcome(StageResult.failed(f"environment: {exc}", **CompileData(
            cause="environment", missing="PyTorch header tree", toolchain=toolchain.to_dict())))
    ctx.log(f"compile: PyTorch {headers.torch_version}'s headers, hipified ({headers.manifest.get('hipify')}, "
            f"{headers.manifest.get('hipified')} headers), at {headers.mount} in the sandbox\n")
    plan = plan_extension(units, renames, ctx.workspace.hip, ctx.settings, headers)
    for note in plan.notes:
        ctx.log(f"compile: {note}\n")
    if not plan.file_flags:
        return ExtensionOutcome(StageResult.failed(
            "No extension source to compile: the builds name no .cu/.cpp source found in the translated tree.",
            **CompileData(cause="environment", toolchain=toolchain.to_dict())))
    for unit in units:
        ctx.log(f"compile: extension {unit.name} ({unit.how}, {unit.declared_in}): "
                f"{len(plan.owners.get(unit.name, []))} sources\n")
    report = compile_extensions(plan, ctx.workspace.hip, ctx.workspace.build, ctx.settings, ctx.cache_dir, toolchain,
                                sandbox, headers, on_file=lambda r, done, total: _log_file(ctx, r, done, total),
                                should_stop=ctx.is_cancelled)
    ctx.check_cancelled()
    if report.error:
        return ExtensionOutcome(StageResult.failed(report.error, **CompileData(toolchain=toolchain.to_dict())))
    by_path = {f.path: f for f in report.files}
    extensions = [_extension_data(unit, plan.owners.get(unit.name, []), by_path, headers, line_map) for unit in units]
    payload = compile_payload(report, line_map)
    payload.update(CompileData(toolchain=toolchain.to_dict(), mode="extension", extensions=extensions,
                               checked=headers.checked_text, notes=plan.notes[:200], torch_headers=headers.manifest))
    failed = [f for f in report.files if f.status != "passed"]
    counts = f"{len(report.files)} extension sources, {report.cache_hits} cached, {len(failed)} failed"
    if failed:
        return ExtensionOutcome(StageResult.failed(f"Compile failed: {counts}.", **payload), report, extensions)
    return ExtensionOutcome(StageResult.passed(f"Compiled {counts}: {headers.checked_text}.", **payload),
                            report, extensions)


def _extension_data(unit: ExtensionUnit, sources: list[str], by_path: dict[str, FileResult], headers: HeaderTree,
                    line_map: TreeLineMap) -> ExtensionBuildData:
    results = [by_path[s] for s in sources if s in by_path]
    state = "failed" if any(r.status != "passed" for r in results) else "passed" if results else "not_compiled"
    return ExtensionBuildData(
        name=unit.name, how=unit.how, declared_in=unit.declared_in, directory=unit.directory, state=state,
        sources=[line_map.original_path(s) for s in sources], translated=sources,
        errors=sum(r.errors for r in results), checked=headers.checked_text if state == "passed" else "",
        link=RUNNER_NEEDED, notes=unit.notes[:20])


def _log_file(ctx: StageContext, result: FileResult, done: int, total: int) -> None:
    origin = "cached" if result.cached else f"{result.duration_s:.1f} s"
    ctx.log(f"[{done}/{total}] {result.path}: {result.status} ({origin})\n")
    if result.output.strip():
        ctx.log(result.output if result.output.endswith("\n") else result.output + "\n")
    if result.status != "cancelled":
        ctx.progress(done, total)
