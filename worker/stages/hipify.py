"""Hipify stage: translate the fetched CUDA tree into HIP.

Inputs: ``ctx.workspace.source`` (never modified) and the hipify settings
(``hipify_engine``, ``launch_style``, ``roc_libraries``, ``rename_cu_to_hip``,
``exclude_globs``, ``target_hip_version``).
Outputs: ``ctx.workspace.hip``, a full copy of the source with CUDA-bearing files
translated; ``artifacts/translation.json`` with the full account; stage data with the
run totals and compact per-file entries (at most ``MAX_LISTED`` unconverted names each), and
``wavefront_hazards``: every wave-size hazard at its original file and line, ``applied`` when fixed
(the fix rules in ``disabled_fix_rules`` are not applied).
Failure modes: no source tree; an external engine (hipify-perl/hipify-clang) that is not in the
chosen toolchain root, or fails on any file (the summary gives the count). External engines run only
in the sandbox over the toolchain root. Unconverted identifiers alone do not fail the stage:
they are reported (notebook slug ``hipify-unconverted``) for the compile stage to confirm.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from translator import TranslateOptions, TreeAccount, translate_tree
from translator.account import FileAccount
from translator.external import ENGINES, engine_command, parse_statistics
from translator.globs import is_excluded
from translator.tree import CUDA_SUFFIXES, CXX_SUFFIXES, walk
from worker.context import StageContext, StageResult
from worker.payloads import FixData, HipifyData, WavefrontHazardData
from worker.scanning.findings import fix_tree
from worker.scanning.model import AppliedFix
from worker.stages.pytorch_hipify import apply_python_port
from worker.stages.torch_engine import run_torch_engine, wants_torch_engine
from worker.toolchain.detect import Toolchain, detect_toolchain
from worker.toolchain.roots import select_root
from worker.toolchain.sandbox import Sandbox, SandboxLimits, SandboxUnavailable
from worker.wording import counted

ACCOUNT_ARTIFACT = "translation.json"
MAX_LISTED = 20


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
        return StageResult.failed(f"no source tree at {source}; did the fetch stage run?")
    ctx.workspace.ensure()
    options = options_from(ctx)
    engine_name = ctx.settings.hipify_engine
    # PyTorch extensions: PyTorch's own hipify, what ROCm PyTorch's BuildExtension runs (None: not installed)
    torch_account = run_torch_engine(ctx) if wants_torch_engine(ctx) else None
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
            return StageResult.failed(f"{engine_name} is not in the toolchain {toolchain.name or '(none)'}; "
                                      "choose another hipify engine (builtin works everywhere)")
        try:
            account = _run_external(ctx, Sandbox(select_root(toolchain.name), ctx.workspace.root), engine, options)
        except SandboxUnavailable as exc:
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
                     ctx.settings.offload_archs)
    for fix in fixes:
        ctx.log(f"fixed     {fix.file}:{fix.line} [{fix.rule_id}] {fix.before.strip()} -> {fix.after.strip()}\n")
    return fixes


def _data(ctx: StageContext, account: TreeAccount, fixes: list[FixData], generated: list[str]) -> HipifyData:
    artifact = ctx.workspace.artifacts / ACCOUNT_ARTIFACT
    artifact.write_text(json.dumps(account.to_dict(), indent=1))
    return HipifyData(
        **account.to_dict(max_findings=MAX_LISTED, only_interesting=True),
        account_artifact=artifact.relative_to(ctx.workspace.artifacts).as_posix(),
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


def _run_external(ctx: StageContext, sandbox: Sandbox, engine: str, options: TranslateOptions) -> TreeAccount:
    """Copy the tree, then let the engine rewrite each CUDA-bearing file of the copy, in the sandbox."""
    source, hip = ctx.workspace.source, ctx.workspace.hip
    if hip.exists():
        shutil.rmtree(hip)
    shutil.copytree(source, hip, symlinks=True)
    account = TreeAccount(source=str(source), destination=str(hip), engine=Path(engine).name)
    files = walk(source)
    for index, path in enumerate(files, start=1):
        ctx.check_cancelled()
        relative = path.relative_to(source).as_posix()
        if path.suffix.lower() in CUDA_SUFFIXES | CXX_SUFFIXES and not is_excluded(relative, options.exclude_globs):
            entry = _translate_one(sandbox, engine, source / relative, hip / relative, relative)
            if options.rename_cu_to_hip and path.suffix == ".cu" and (hip / relative).exists():
                renamed = (hip / relative).with_suffix(".hip")
                (hip / relative).rename(renamed)
                entry.renamed_to = renamed.relative_to(hip).as_posix()
                account.renames[relative] = entry.renamed_to
            account.files.append(entry)
            ctx.log(f"{entry.status:<10} {relative}: {entry.converted_total} converted\n")
        ctx.progress(index, len(files))
    return account


def _translate_one(sandbox: Sandbox, engine: str, source: Path, output: Path, relative: str) -> FileAccount:
    """One file through the external engine, in the sandbox; a failure is reported in the account."""
    command = engine_command(Path(engine), Path(sandbox.inside(source)), Path(sandbox.inside(output)))
    done = sandbox.run(command, limits=SandboxLimits(timeout_s=300, processes=64))
    account = parse_statistics(done.process.output, relative)
    if not done.ok or not output.exists():
        account.status = "failed"
        account.warnings.append(f"{Path(engine).name} exited with {done.process.returncode}"
                                + "".join(f"; {v}" for v in done.violations))
    return account
