"""Hipify stage: translate the fetched CUDA tree into HIP.

Inputs: ``ctx.workspace.source`` (never modified) and the hipify settings
(``hipify_engine``, ``launch_style``, ``roc_libraries``, ``rename_cu_to_hip``,
``exclude_globs``, ``target_hip_version``).
Outputs: ``ctx.workspace.hip``, a full copy of the source with CUDA-bearing files
translated (written on the root side: no sandbox ever writes it); ``records/translation.json`` with
the full account; stage data with the run totals and compact per-file entries (at most
``MAX_LISTED`` unconverted names each), and ``wavefront_hazards``: every wave-size hazard at its original
file and line, ``applied`` when fixed (the fix rules in ``disabled_fix_rules`` are not applied).
Failure modes: no source tree; an external engine (hipify-perl/hipify-clang) that is not in the
chosen toolchain root (Debian's roots have hipify-perl, not hipify-clang; a host copy is never used), or
fails on any file (the summary gives the count); PyTorch's hipify failing or no sandbox. Every engine
other than the builtin one reads user files, so it runs only in the sandbox over the toolchain root,
reading the source read-only and writing its own folder (``worker/stages/engine_tree.py``), from which
its output is copied into ``hip`` on the root side. Unconverted identifiers alone do not fail the stage:
they are reported (notebook slug ``hipify-unconverted``) for the compile stage to confirm.
"""
from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath

from translator import TranslateOptions, TreeAccount, translate_tree
from translator.account import FileAccount
from translator.external import ENGINES, engine_command, parse_statistics
from translator.globs import is_excluded
from translator.torch_hipify import TorchHipifyError
from translator.tree import CUDA_SUFFIXES, CXX_SUFFIXES, walk
from worker.contained import write_record
from worker.context import StageContext, StageResult
from worker.payloads import FixData, HipifyData, WavefrontHazardData
from worker.scanning.findings import fix_tree
from worker.scanning.model import AppliedFix
from worker.stages.engine_tree import copy_into, copy_source, engine_sandbox
from worker.stages.pytorch_hipify import apply_python_port
from worker.stages.rocm_release import chosen_release
from worker.stages.torch_engine import bindings_dirs, run_torch_engine, wants_torch_engine
from worker.toolchain.detect import Toolchain, detect_toolchain
from worker.toolchain.roots import ToolchainRoot, select_root
from worker.toolchain.sandbox import MOUNT, Sandbox, SandboxLimits, SandboxUnavailable
from worker.toolchain.work import WorkError
from worker.wording import counted

ACCOUNT_ARTIFACT = "translation.json"
MAX_LISTED = 20
MISSING_WHY = {"hipify-clang": " (Debian's ROCm packages do not ship hipify-clang)"}


def options_from(ctx: StageContext) -> TranslateOptions:
    """The translation follows the chosen toolchain: its HIP version and the identifiers its own headers
    declare decide which names are emitted (a name the root does not declare is reported, not written)."""
    settings = ctx.settings
    toolchain = detect_toolchain(settings.toolchain)
    declared = _declared_names(toolchain) if not settings.target_hip_version else None
    return TranslateOptions(
        launch_style=settings.launch_style,
        roc_libraries=settings.roc_libraries,
        rename_cu_to_hip=settings.rename_cu_to_hip,
        exclude_globs=tuple(settings.exclude_globs),
        target_hip_version=settings.target_hip_version or toolchain.hip_version,
        declared_names=declared,
        disabled_rules=frozenset(settings.disabled_fix_rules),  # wavefront.* fix rules opted out
    )


def _declared_names(toolchain: Toolchain) -> frozenset[str] | None:
    if not toolchain.available:
        return None
    return select_root(toolchain.name).declared_identifiers() or None


def run(ctx: StageContext) -> StageResult:
    source = ctx.workspace.source
    if not source.is_dir():
        return StageResult.failed("no source tree; did the fetch stage run?")
    ctx.workspace.ensure()
    options = options_from(ctx)
    engine_name = ctx.settings.hipify_engine
    # PyTorch extensions: PyTorch's own hipify, what ROCm PyTorch's BuildExtension runs (None: not installed)
    bindings = bindings_dirs(ctx) if wants_torch_engine(ctx) else None
    torch_account: TreeAccount | None
    try:
        if bindings is not None:  # a core under its own build and PyTorch bindings beside it (issue 26 §2)
            ctx.log(f"hipify: the core by the builtin engine, {', '.join(bindings)} by PyTorch's hipify\n")
            core = translate_tree(source, ctx.workspace.hip, options, log=ctx.log, is_cancelled=ctx.is_cancelled)
            torch_account = run_torch_engine(ctx, bindings, over=core) or core
        else:
            torch_account = run_torch_engine(ctx) if wants_torch_engine(ctx) else None
    except (TorchHipifyError, SandboxUnavailable, WorkError) as exc:
        return StageResult.failed(str(exc))
    if torch_account is not None:
        account = torch_account
    elif engine_name == "builtin":
        ctx.log(f"hipify: builtin engine, target HIP {'.'.join(map(str, options.resolved_hip_version()))}\n")
        account = translate_tree(source, ctx.workspace.hip, options, progress=ctx.progress, log=ctx.log,
                                 is_cancelled=ctx.is_cancelled)
        ctx.check_cancelled()
    else:
        toolchain = detect_toolchain(ctx.settings.toolchain)
        engine = external_engine(toolchain, engine_name)
        if engine is None:
            return StageResult.failed(f"{engine_name} is not in the toolchain {toolchain.name or '(none)'}"
                                      f"{MISSING_WHY.get(engine_name, '')}; it runs only from the toolchain root, "
                                      "in the sandbox; choose another hipify engine (builtin works everywhere)")
        try:
            account = _run_external(ctx, select_root(toolchain.name), engine, options)
        except (SandboxUnavailable, WorkError) as exc:
            return StageResult.failed(str(exc))
        failed = [f for f in account.files if f.status == "failed"]
        if failed:
            tried = sum(1 for f in account.files if f.status not in ("copied", "skipped"))
            return StageResult.failed(f"{engine_name} failed on {len(failed)} of {tried} files "
                                      f"(first: {failed[0].path})", **_data(ctx, account, [], []))
    fixes = apply_build_fixes(ctx)
    python_port = apply_python_port(ctx)  # PyTorch projects: Python/config fixes, requirements-rocm.txt
    fixes += python_port.fixes
    data = _data(ctx, account, [fix.to_dict() for fix in fixes], python_port.generated)
    totals = account.totals()
    files, converted = totals["files"], totals["converted_total"]
    summary = (f"{totals['changed']} of {counted(files, 'file')} translated, "
               f"{counted(converted, 'reference')} converted, {totals['unconverted_total']} left unconverted, "
               f"{counted(len(fixes), 'build-file fix', 'build-file fixes')} applied")
    return StageResult.passed(summary, **data)


def apply_build_fixes(ctx: StageContext) -> list[AppliedFix]:
    """Apply the scan rules' safe fixes to the translated copy (per-rule opt-out in settings)."""
    fixes = fix_tree(ctx.workspace.hip, ctx.settings.exclude_globs, set(ctx.settings.disabled_fix_rules),
                     ctx.settings.offload_archs, chosen_release(ctx.settings.toolchain))
    for fix in fixes:
        ctx.log(f"fixed     {fix.file}:{fix.line} [{fix.rule_id}] {fix.before.strip()} -> {fix.after.strip()}\n")
    return fixes


def _data(ctx: StageContext, account: TreeAccount, fixes: list[FixData], generated: list[str]) -> HipifyData:
    artifact = ctx.workspace.records / ACCOUNT_ARTIFACT
    write_record(artifact, json.dumps(account.to_dict(), indent=1))
    return HipifyData(
        **account.to_dict(max_findings=MAX_LISTED, only_interesting=True),
        account_artifact=artifact.relative_to(ctx.workspace.records).as_posix(),
        notebook_slugs=["hipify-unconverted"] if account.totals()["unconverted_total"] else [],
        build_fixes=fixes, generated_files=generated, wavefront_hazards=wavefront_rows(account),
    )


def wavefront_rows(account: TreeAccount) -> list[WavefrontHazardData]:
    """Every wave-size hazard of the translation, with its original file and line, ``applied`` when fixed."""
    return [WavefrontHazardData(file=entry.path, **hazard) for entry in account.files for hazard in entry.wavefront]


def external_engine(toolchain: Toolchain, name: str) -> str | None:
    """The engine's path inside the toolchain root (external engines run only in the sandbox)."""
    if not toolchain.available or name not in ENGINES:
        return None
    inside = f"/usr/bin/{name}"
    return inside if (Path(toolchain.root) / inside.lstrip("/")).is_file() else None


def _run_external(ctx: StageContext, root: ToolchainRoot, engine: str, options: TranslateOptions) -> TreeAccount:
    """Each CUDA-bearing file of the source through the engine, one sandboxed run per file.

    The engine reads ``/workspace/source`` (read-only) and writes the same path under its own folder; the
    translated tree is the source's copy with each output taken in (renamed to ``.hip`` when asked)."""
    source, hip = ctx.workspace.source, ctx.workspace.hip
    files = walk(source)
    wanted = {path.relative_to(source).as_posix() for path in files if not path.is_symlink()
              and path.suffix.lower() in CUDA_SUFFIXES | CXX_SUFFIXES}
    wanted = {name for name in wanted if not is_excluded(name, options.exclude_globs)}
    copy_source(source, hip)
    account = TreeAccount(source=str(source), destination=str(hip), engine=Path(engine).name)
    with engine_sandbox(ctx, root, folders=sorted({str(PurePosixPath(name).parent) for name in wanted})) as (sandbox, output):
        for index, path in enumerate(files, start=1):
            ctx.check_cancelled()
            relative = path.relative_to(source).as_posix()
            if relative in wanted:
                account.files.append(_translate_one(ctx, sandbox, engine, output, relative, options))
            elif path.is_symlink() and path.suffix.lower() in CUDA_SUFFIXES | CXX_SUFFIXES:
                account.files.append(FileAccount(path=relative, status="copied"))  # as the builtin engine does
            ctx.progress(index, len(files))
    account.renames.update({f.path: f.renamed_to for f in account.files if f.renamed_to})
    return account


def _translate_one(ctx: StageContext, sandbox: Sandbox, engine: str, output: Path, relative: str,
                   options: TranslateOptions) -> FileAccount:
    """One file through the external engine, in the sandbox; a failure is reported in the account."""
    inside_output = f"{sandbox.inside(output)}/{relative}"
    command = engine_command(Path(engine), Path(f"{MOUNT}/source/{relative}"), Path(inside_output))
    done = sandbox.run(command, limits=SandboxLimits(timeout_s=300, processes=64), should_stop=ctx.is_cancelled)
    ctx.check_cancelled()
    account = parse_statistics(done.process.output, relative)
    if not done.process.ok:  # judged by exit status and limits, not by words in the output
        account.status = "failed"
        account.warnings.append(f"{Path(engine).name} exited with {done.process.returncode}"
                                + "".join(f"; {v}" for v in done.violations))
        return account
    target = relative
    if options.rename_cu_to_hip and relative.endswith(".cu"):
        target = relative[: -len(".cu")] + ".hip"
    problem = copy_into(output, relative, ctx.workspace.hip, target,
                        executable=os.access(ctx.workspace.source / relative, os.X_OK))
    if problem:
        account.status = "failed"
        account.warnings.append(f"{Path(engine).name} left no usable output: {problem}")
    elif target != relative:
        (ctx.workspace.hip / relative).unlink()  # the source's copy, made above on the root side
        account.renamed_to = target
    ctx.log(f"{account.status:<10} {relative}: {account.converted_total} converted\n")
    return account
