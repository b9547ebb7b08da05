"""Link stage: link the compile stage's objects into executables or a shared library.

Inputs: ``ctx.compile_data()`` (per-file results with object paths, or the
project build's link problems in project mode), ``ctx.workspace.hip`` (to find
``main`` and the ROCm headers included), ``ctx.settings`` (link_target,
link_libraries, offload_archs). Outputs: binaries under ``ctx.workspace.build/bin``
or ``/lib``; data with targets, libraries used and link problems (undefined
symbols demangled with the object needing them, missing ``-l`` libraries mapped
to the ROCm library and package); the full payload in ``records/link.json``. Linking runs in the
run's sandbox over the objects in ``/workspace/build``.
Fails when compile data is missing or failed, or any target fails to link;
skipped when link_target is "none". PyTorch extensions are built by their own build on a runner with a
ROCm PyTorch (``extension_link.py``), else skipped: "needs a ROCm PyTorch runner".
"""
from __future__ import annotations

import json

from worker.contained import write_record
from worker.context import StageContext, StageResult
from worker.payloads import CompileData, LinkData
from worker.stages.extension_link import run_extension_link
from worker.stages.kind_gate import kind_gate
from worker.toolchain.compile import object_path
from worker.toolchain.detect import detect_toolchain
from worker.toolchain.link import link_objects
from worker.toolchain.roots import select_root
from worker.toolchain.sources import build_units
from worker.toolchain.stage_data import link_payload
from worker.toolchain.work import open_work, run_sandbox


def run(ctx: StageContext) -> StageResult:
    compiled = ctx.compile_data()
    if compiled.get("mode") == "extension":  # the extension's own build, where this runner has a ROCm PyTorch
        return run_extension_link(ctx, compiled)
    if (gated := kind_gate(ctx, "link")) is not None:  # project kinds (issue 16): not applicable
        return gated
    if not compiled:
        return StageResult("failed", "No compile results to link: the compile stage has not run.")
    if ctx.settings.link_target == "none":
        return StageResult.skipped("Linking disabled (link_target is 'none').")
    if compiled.get("mode") == "project":
        return _project_link(compiled)
    files = compiled.get("files", [])
    if any(f.get("status") != "passed" for f in files):
        return StageResult.failed("Not linking: some translation units failed to compile.")
    # Where the compile stage put each object in this run's build folder (a re-run's were copied from its
    # parent's, whose recorded paths name the parent's folder).
    objects = {f["path"]: object_path(ctx.workspace.build, f["path"]) for f in files if f.get("object_path")}
    toolchain = detect_toolchain(ctx.settings.toolchain)
    ctx.log(f"linking {len(objects)} objects ({ctx.settings.link_target})\n")
    units = build_units(ctx.workspace.hip, ctx.settings.exclude_globs) if compiled.get("build_units") else []
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log) as work:
        sandbox = run_sandbox(select_root(toolchain.name), ctx.workspace, work) if toolchain.available else None
        report = link_objects(objects, ctx.workspace.hip, ctx.workspace.build, ctx.settings, toolchain, units=units,
                              sandbox=sandbox)
    for target in report.targets:
        ctx.log(f"{target.name}: {target.status}\n")
        ctx.log(" ".join(target.command) + "\n")
        if target.output.strip():
            ctx.log(target.output if target.output.endswith("\n") else target.output + "\n")
    payload = LinkData(**link_payload(report), toolchain=toolchain.to_dict())
    write_record(ctx.workspace.records / "link.json", json.dumps(payload, indent=1))
    if report.error:
        return StageResult.failed(f"Link failed: {report.error}.", **payload)
    problems = report.problems
    if not report.ok:
        summary = f"Link failed: {len(problems)} problem(s) in {len(report.targets)} target(s)."
        return StageResult.failed(summary, **payload)
    return StageResult.passed(f"Linked {', '.join(t.name for t in report.targets)}.", **payload)


def _project_link(compiled: CompileData) -> StageResult:
    """In project-build mode the project's own build linked; report what its output said."""
    build = compiled.get("project_build")
    if not isinstance(build, dict):
        return StageResult.failed("Project build results are missing.")
    problems = build.get("link_problems", [])
    payload = LinkData(mode="project", targets=[], problems=problems, libraries=[], inferred_libraries=[])
    nothing = compiled.get("cmake_build", {}).get("nothing_built")
    if nothing:
        return StageResult.failed(f"Nothing linked: the project's build built nothing ({nothing}).", **payload)
    if problems or not build.get("ok"):
        return StageResult.failed(f"Project build did not link: {len(problems)} link problem(s).", **payload)
    return StageResult.passed("Linked by the project's own build.", **payload)
