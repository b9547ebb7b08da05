"""Compile stage: build the translated tree with the real ROCm toolchain.

Inputs: ``ctx.workspace.hip`` (translated tree from hipify), ``ctx.workspace.source``
(for mapping diagnostics back to original lines), ``ctx.settings`` (build_mode: ``auto`` runs the
project's own build where its build files are understood, else compiles file by file, see
``toolchain/build_mode.py``;
offload_archs, cxx_std, include_dirs, defines, extra_flags, compile/build limits),
``ctx.cache_dir`` (object cache shared by the project's runs), ``ctx.settings.toolchain``
(the toolchain root; every compiler and build command runs in the sandbox over it),
``ctx.hipify_data()["renames"]`` when present (original -> translated path, as the translator
records them; inverted here for mapping diagnostics back).
Outputs: objects under ``/workspace/build/obj`` (per-TU mode: compiled from the read-only translated
tree) or the project's own build in ``/workspace/hip`` (a fresh copy of the translated tree made in the
sandbox) and ``/workspace/build``, all in the run's ``work/`` folder; data with toolchain, per-file
results, diagnostics mapped to original lines (capped; all of them in ``records/compile.json``), a
per-file summary and cache hits/misses; per GPU target, the file × target results (per-TU mode: ``files[].targets``;
project mode: ``project_targets``, the outputs' device code and the failing units compiled again per target)
and ``failed_targets``. The streamed log is the raw compiler output.
Fails when the translated tree is missing, no toolchain root is installed, the sandbox cannot
start (bubblewrap or user namespaces missing: nothing runs unsandboxed), any TU fails, times
out or crashes the compiler, or (project mode) the sandboxed build fails.
"""
from __future__ import annotations

from worker.context import StageContext, StageResult
from worker.payloads import BuildUnitData, CompileData, ProjectBuildData, ProjectTargetsData
from worker.stages.extension_project import run_extension_project
from worker.stages.kind_gate import extension_build_kind, kind_gate
from worker.toolchain.build_mode import ModeChoice, choose_build_mode
from worker.toolchain.compile import C_DIALECT, FileResult, compile_tree
from worker.toolchain.detect import Toolchain, detect_toolchain
from worker.toolchain.linemap import TreeLineMap
from worker.toolchain.make_build import C_DIALECT_TOOLS
from worker.toolchain.make_flags import describe as describe_make_flags
from worker.toolchain.make_flags import with_make_flags
from worker.toolchain.project_build import run_project_build
from worker.toolchain.roots import select_root
from worker.toolchain.sandbox import Sandbox, SandboxUnavailable
from worker.toolchain.sources import BuildUnit
from worker.toolchain.stage_data import (
    compile_payload,
    diagnostic_data,
    store_compile_record,
    summary_by_file,
)
from worker.toolchain.version_defines import VersionDefine, describe_defines, version_defines
from worker.toolchain.work import BUILD, HIP_COPY, WorkError, copy_translated, make_dirs, open_work, remove, run_sandbox


def run(ctx: StageContext) -> StageResult:
    if (gated := kind_gate(ctx, "compile")) is not None:  # project kinds (issue 16): not applicable
        return gated
    if not ctx.workspace.hip.is_dir():
        return StageResult("failed", "No translated tree to compile: the hipify stage did not produce one.")
    toolchain = detect_toolchain(ctx.settings.toolchain)
    if not toolchain.available:
        return StageResult.failed(f"No ROCm toolchain: {toolchain.error}", **CompileData(toolchain=toolchain.to_dict()))
    ctx.log(f"toolchain {toolchain.name}: HIP {toolchain.hipcc_version}, clang {toolchain.clang_version}, "
            "in the sandbox over that toolchain root (the translated tree at /workspace/.translated, "
            "the build at /workspace/build, no network)\n")
    defines = version_defines(toolchain.hipcc_version, ctx.settings.defines)
    ctx.log(f"GPU targets: {', '.join(ctx.settings.offload_archs)} (one compiler invocation per translation unit, "
            "a device compile per target)\n" + describe_defines(defines))
    line_map = TreeLineMap(ctx.workspace.hip, ctx.workspace.source, _renames(ctx))
    kind = extension_build_kind(ctx)
    if kind is not None:  # PyTorch extensions: against the hipified header tree (issue 26)
        return run_extension_project(ctx, kind, toolchain, line_map, _compile)
    return _compile(ctx, toolchain, line_map)


def _compile(ctx: StageContext, toolchain: Toolchain, line_map: TreeLineMap) -> StageResult:
    """The C/C++ path: the project's own build where it is understood, else file by file."""
    choice = choose_build_mode(ctx.workspace.hip, ctx.settings, ctx.fetch_data().get("project_dir", ""))
    ctx.log(f"{choice.reason}\n")
    defines = version_defines(toolchain.hipcc_version, ctx.settings.defines)
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log) as work:
        sandbox = run_sandbox(select_root(toolchain.name), ctx.workspace, work, tools={"cdialect": C_DIALECT_TOOLS})
        try:
            remove(sandbox, HIP_COPY, BUILD)  # a redelivered compile starts clean
            if choice.mode == "project":
                copy_translated(sandbox, fresh=True)
            make_dirs(sandbox, BUILD)
        except (WorkError, SandboxUnavailable) as exc:
            return StageResult.failed(str(exc), **CompileData(toolchain=toolchain.to_dict()))
        if choice.mode == "project":
            return _project_build(ctx, sandbox, line_map, toolchain.to_dict(), choice, defines)
        units = _per_file_units(ctx, sandbox, choice, defines)
        report = compile_tree(
            ctx.workspace.hip, ctx.workspace.build, ctx.settings, ctx.cache_dir, toolchain,
            original_tree=ctx.workspace.source, on_file=lambda result, done, total: _log_file(ctx, result, done, total),
            should_stop=ctx.is_cancelled, units=units, sandbox=sandbox,
        )
    ctx.check_cancelled()
    if report.error:
        return StageResult.failed(report.error, **CompileData(toolchain=toolchain.to_dict()))
    payload = CompileData(**compile_payload(report, line_map), toolchain=toolchain.to_dict(), mode_reason=choice.reason,
                          build_units=[_unit_data(u) for u in units], c_std=C_DIALECT)
    store_compile_record(ctx.workspace.records, payload)
    failed = [f for f in report.files if f.status != "passed"]
    counts = f"{len(report.files)} files, {report.cache_hits} cached, {len(failed)} failed"
    if not report.files:
        return StageResult.failed("No translation units found in the translated tree.", **payload)
    how = " (built file by file, not with the project's build)" if choice.reason.startswith("build_mode auto") else ""
    if failed:
        on = f" (failing for {', '.join(payload['failed_targets'])})" if payload.get("failed_targets") else ""
        return StageResult.failed(f"Compile failed: {counts}{on}{how}.", **payload)
    return StageResult.passed(f"Compiled {counts}{how}.", **payload)


def _per_file_units(ctx: StageContext, sandbox: Sandbox, choice: ModeChoice,
                    defines: tuple[VersionDefine, ...]) -> list[BuildUnit]:
    """The build files' units, those of Makefiles with the flags make's own dry run gives them."""
    flags = with_make_flags(choice.units, sandbox, sandbox.inside(ctx.workspace.hip), ctx.settings, defines,
                            ctx.is_cancelled)
    if line := describe_make_flags(flags):
        ctx.log(line + "\n")
    return flags.units


def _log_file(ctx: StageContext, result: FileResult, done: int, total: int) -> None:
    origin = "cached" if result.cached else f"{result.duration_s:.1f} s"
    ctx.log(f"[{done}/{total}] {result.path}: {result.status} ({origin})\n")
    if result.output.strip():
        ctx.log(result.output if result.output.endswith("\n") else result.output + "\n")
    if result.status != "passed" and len(result.targets) > 1:
        ctx.log(f"  per target: {', '.join(f'{t.arch} {t.status}' for t in result.targets)}\n")
    if result.status != "cancelled":  # a cancelled compile stops at the count it really reached
        ctx.progress(done, total)


def _unit_data(unit: BuildUnit) -> BuildUnitData:
    return BuildUnitData(name=unit.name, kind=unit.kind, build_file=unit.build_file, sources=unit.sources[:200],
                         include_dirs=unit.include_dirs, defines=unit.defines, link_libraries=unit.link_libraries)


def _project_build(ctx: StageContext, sandbox: Sandbox, line_map: TreeLineMap, toolchain: dict[str, object],
                   choice: ModeChoice, defines: tuple[VersionDefine, ...]) -> StageResult:
    reason = choice.reason
    inner = choice.project_dir  # source_subdir with paths kept beside it: its build runs in its folder
    report = run_project_build(ctx.workspace.work, ctx.workspace.hip_copy / inner, ctx.workspace.build, ctx.settings,
                               ctx.log, should_stop=ctx.is_cancelled, sandbox=sandbox,
                               read_tree=ctx.workspace.hip / inner, make_folders=choice.make_folders)
    ctx.check_cancelled()
    diagnostics = [diagnostic_data("", d, line_map) for d in report.diagnostics]
    build = ProjectBuildData(
        system=report.system, steps=report.steps, ok=report.ok, error=report.error, violations=report.violations,
        sandbox=report.mechanism, link_problems=[p.to_dict() for p in report.link_problems],
        duration_s=round(report.duration_s, 3), run_dir=report.run_dir, units=report.units)
    if report.system == "make":
        build["c_std"] = C_DIALECT
    payload = CompileData(
        toolchain=toolchain, mode="project", files=[], diagnostics=diagnostics, summary=summary_by_file(diagnostics),
        cache={"hits": 0, "misses": 0}, project_build=build, mode_reason=reason,
        offload_archs=list(ctx.settings.offload_archs), hip_defines=[{**d.to_dict()} for d in defines])
    if report.cmake is not None:
        payload["cmake_build"] = report.cmake.to_data()
    if report.targets is not None:
        payload["project_targets"] = report.targets.to_data(line_map)
        payload["failed_targets"] = report.targets.failed_targets()
        _log_targets(ctx, payload["project_targets"])
    if report.system == "make":
        payload["c_std"] = C_DIALECT
    store_compile_record(ctx.workspace.records, payload)
    if report.cmake is not None and report.cmake.nothing_built:
        return StageResult.failed(f"Nothing built: {report.cmake.nothing_built}", **payload)
    if not report.ok:
        on = f" (failing for {', '.join(payload['failed_targets'])})" if payload.get("failed_targets") else ""
        return StageResult.failed(f"Project build failed: {report.error}{on}", **payload)
    built = sum(len(unit.get("built", [])) for unit in report.units)  # type: ignore[arg-type,misc]
    units = f", {len(report.units)} build folders" if len(report.units) > 1 else ""
    made = f": {built} file(s) built{units}" if report.system == "make" else ""
    return StageResult.passed(f"Project build ({report.system}) succeeded{made}.", **payload)


def _log_targets(ctx: StageContext, data: ProjectTargetsData) -> None:
    failing = [u for u in data["units"] if u["status"] != "passed"]
    for unit in failing:
        ctx.log(f"[migrator] {unit['path']} per target: "
                + ", ".join(f"{t['arch']} {t['status']}" for t in unit["targets"]) + "\n")
    ctx.log(f"[migrator] per GPU target ({data['commands_from']}): {data['units_total']} device-code units, "
            f"{len(failing)} failing; {len(data['outputs'])} outputs with device code"
            + (f"; failing for {', '.join(data['failed_targets'])}" if data["failed_targets"] else "") + "\n")


def _renames(ctx: StageContext) -> dict[str, str]:
    """Translated -> original path: the hipify stage records original -> translated."""
    renames = ctx.hipify_data().get("renames", {})
    return {str(v): str(k) for k, v in renames.items()} if isinstance(renames, dict) else {}
