"""The compile stage for a PyTorch extension project, built whole: its core and its extensions.

A project with a C++/CUDA core under its own build (a top-level ``CMakeLists.txt`` or Makefile that
does not find Torch) and bindings in their own folders (``bindings/torch/setup.py``) has two parts:
the core goes the C/C++ path (the project's own build where it is understood, else file by file),
with the bindings' folders left out of it; the bindings are compiled as extensions against the
hipified PyTorch header tree (``extension_compile.py``). Each part has its own result in ``parts``;
the stage passes when every part does. A project that is only an extension has one part.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from worker.context import StageContext, StageResult
from worker.payloads import CompileData, CompilePartData
from worker.scanning.extension_units import core_and_bindings
from worker.scanning.project_kind import ProjectKind
from worker.stages.extension_compile import RUNNER_IMAGE, read_units, run_extensions, runner_commands
from worker.toolchain.detect import Toolchain
from worker.toolchain.linemap import TreeLineMap
from worker.toolchain.roots import select_root
from worker.toolchain.sandbox import SandboxUnavailable
from worker.toolchain.stage_data import store_compile_record
from worker.toolchain.work import BUILD, HIP_COPY, WorkError, make_dirs, open_work, remove, run_sandbox

CoreCompile = Callable[[StageContext, Toolchain, TreeLineMap], StageResult]


def run_extension_project(ctx: StageContext, kind: ProjectKind, toolchain: Toolchain, line_map: TreeLineMap,
                          core_compile: CoreCompile) -> StageResult:
    units = read_units(ctx, kind)
    renames = {str(k): str(v) for k, v in (ctx.hipify_data().get("renames") or {}).items()}
    parts: list[CompilePartData] = []
    core: StageResult | None = None
    folders = core_and_bindings(ctx.workspace.source, units)
    excludes = [f"{d}/**" for d in folders or []]
    if folders is not None:
        ctx.log(f"compile: the core first, with its own build ({', '.join(excludes)} left to the extension build)\n")
        settings = dataclasses.replace(ctx.settings, exclude_globs=(*ctx.settings.exclude_globs, *excludes))
        core = core_compile(dataclasses.replace(ctx, settings=settings), toolchain, line_map)
        parts.append(CompilePartData(name="core", kind="core", state=core.outcome, summary=core.summary))
    ctx.check_cancelled()
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log) as work:
        sandbox = run_sandbox(select_root(toolchain.name), ctx.workspace, work)
        try:
            if core is None:
                remove(sandbox, HIP_COPY, BUILD)  # a redelivered compile starts clean
            make_dirs(sandbox, BUILD)
        except (WorkError, SandboxUnavailable) as exc:
            return StageResult.failed(str(exc), **CompileData(toolchain=toolchain.to_dict()))
        outcome = run_extensions(ctx, toolchain, sandbox, line_map, units, renames)
    result = outcome.result
    data = CompileData(**result.data)  # type: ignore[typeddict-item]
    for extension in outcome.extensions:
        parts.append(CompilePartData(name=f"extension {extension['name']}", kind="extension",
                                     state=extension["state"], summary=extension["checked"] or
                                     f"{extension['errors']} errors in {', '.join(extension['sources'])}"))
    data["parts"] = parts
    data["would_run"] = runner_commands(units, ctx.settings.offload_archs, ctx.workspace.source)
    data["runner_image"] = RUNNER_IMAGE
    data["project_kind"] = kind.kind
    if core is not None:
        data["core"] = {k: v for k, v in core.data.items() if k not in ("toolchain",)}
    store_compile_record(ctx.workspace.records, data)
    if core is not None and core.outcome != "passed":
        return StageResult.failed(f"The core's build failed: {core.summary} Extensions: {result.summary}", **data)
    summary = result.summary if core is None else f"Core: {core.summary} Extensions: {result.summary}"
    return StageResult(result.outcome, summary, dict(data))
