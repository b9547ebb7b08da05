"""The smoke stage with a validation preset (``train-steps`` or ``llm-serve``) instead of a plain command.

Input: the preset object (``{"preset": ..., options}``, see ``worker.runner.presets``); the
working directory is ``/workspace/build/bin`` or ``/workspace/build`` when something was built, else
``/workspace/hip``, the build's copy of the translated tree (made in the sandbox when no stage made it:
a Python application builds nothing); the CUDA reference (``records/reference.json``) when its run
used the same preset. The preset's own inputs (serve script, spec, reference) are written into
``records/preset`` (``records/preset-reference`` on the CUDA side) and seen read-only.
Output data: ``preset`` (its name), ``run`` (lease, GPU and the preset's full result), ``measurements``
(the figures a reader compares: losses or TTFT, step time, tokens/s, peak GPU memory) and
``classification`` when it failed. The full result also goes to ``records/smoke.json``.
Failure modes: a malformed preset (failed, with the option named), no AMD GPU (``no-device``),
every GPU busy (``gpu-busy``), the preset's own verdict (``preset-failed``, with its reasons).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worker.contained import is_dir_beneath, load_json_beneath, write_record
from worker.context import StageContext, StageResult
from worker.payloads import ClassificationData, SmokeData
from worker.runner.gpus import probe
from worker.runner.preset_train import PresetError
from worker.runner.presets import PresetRun, preset_from_dict, run_preset_on_gpu
from worker.toolchain.roots import ToolchainNotFound, select_root
from worker.toolchain.sandbox import Sandbox, SandboxUnavailable
from worker.toolchain.work import REFERENCE_WORK, WorkError, copy_translated, open_work, run_sandbox

SMOKE_ARTIFACT = "smoke.json"
REFERENCE_ARTIFACT = "reference.json"
RECORD_READ_LIMIT = 256 * 1024 * 1024


def working_dir(ctx: StageContext, sandbox: Sandbox) -> Path:
    """Where the preset runs (a path in the run's work/ folder, open: inside ``open_work``); the translated
    tree's build copy is made when nothing was built (the first stage that needs a writable tree makes it)."""
    work = sandbox.workspace
    if is_dir_beneath(work, "build/bin"):
        return ctx.workspace.build / "bin"
    if is_dir_beneath(work, "build"):
        return ctx.workspace.build
    copy_translated(sandbox, fresh=False)
    return ctx.workspace.hip_copy


def stored_reference(ctx: StageContext) -> dict[str, Any] | None:
    """The reference run's artifact: the only place it is stored (it is not a stage of its own)."""
    loaded = load_json_beneath(ctx.workspace.records, REFERENCE_ARTIFACT, limit=RECORD_READ_LIMIT)
    return dict(loaded) if loaded is not None else None


def preset_reference(ctx: StageContext, preset: str) -> dict[str, object] | None:
    """The CUDA reference's preset result when its run used ``preset`` (a plain command's is not comparable)."""
    loaded = stored_reference(ctx)
    result = loaded.get("result") if loaded is not None and loaded.get("preset") == preset else None
    if not isinstance(result, dict) or loaded is None or not loaded.get("passed"):
        return None
    metrics = result.get("metrics")
    return metrics if preset == "train-steps" and isinstance(metrics, dict) else result


def measurements(run: PresetRun) -> dict[str, object]:
    result = run.result or {}
    if run.preset == "train-steps":
        metrics = result.get("metrics") if isinstance(result.get("metrics"), dict) else {}
        assert isinstance(metrics, dict)
        keys = ("losses", "all_finite", "step_time_s", "step_time_estimated", "tokens_per_s", "peak_gpu_mem_bytes")
        return {key: metrics.get(key) for key in keys} | {"comparison": result.get("comparison")}
    serve_keys = ("startup_s", "ttft_s", "tokens_per_s", "peak_gpu_mem_bytes", "comparison")
    return {key: result.get(key) for key in serve_keys}


def run_preset_stage(ctx: StageContext, raw: dict[str, Any]) -> StageResult:
    try:
        spec = preset_from_dict(raw)
    except PresetError as error:
        return StageResult.failed(f"bad smoke preset: {error}")
    name = str(raw["preset"])
    found = probe("rocm")
    ctx.log(f"GPU probe: {len(found.gpus)} AMD GPU(s) via {found.source or 'nothing'} {found.reason}\n")
    try:
        root = select_root(ctx.settings.toolchain)
    except ToolchainNotFound as exc:
        return StageResult.failed(f"no ROCm toolchain root on this runner to run the preset in: {exc}")
    reference = preset_reference(ctx, name)
    ctx.log(f"preset {name}; CUDA reference: {'yes' if reference else 'none'}\n")
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log) as work:
        sandbox = run_sandbox(root, ctx.workspace, work, gpu_devices=True)
        try:
            cwd = working_dir(ctx, sandbox)
        except (WorkError, SandboxUnavailable) as exc:
            return StageResult.failed(f"could not prepare the preset's folder: {exc}")
        run = run_preset_on_gpu(spec, cwd, found, sandbox, wait_timeout_s=ctx.settings.smoke_wait_timeout_s,
                                reference=reference, log=ctx.log, cancel=ctx.is_cancelled,
                                inputs=ctx.workspace.records / "preset")
    ctx.check_cancelled()
    write_record(ctx.workspace.records / SMOKE_ARTIFACT, json.dumps(run.to_dict(), indent=1))
    data = SmokeData(preset=name, run=run.to_dict(), measurements=measurements(run), classification=None)
    if run.result is None:
        data["classification"] = ClassificationData(
            kind=run.classification, notebook_slug="no-amd-gpu-visible" if run.classification == "no-device" else None,
            evidence=run.error)
        return StageResult.failed(run.error, **data)
    reasons = run.result.get("reasons") or []
    if not run.passed:
        evidence = "; ".join(str(r) for r in reasons) if isinstance(reasons, list) else str(reasons)
        data["classification"] = ClassificationData(kind="preset-failed", notebook_slug=_slug(evidence), evidence=evidence)
        return StageResult.failed(f"{name} failed: {evidence}"[:300], **data)
    return StageResult.passed(f"{name} passed: {_figures(run.preset, data['measurements'])}", **data)


def _slug(evidence: str) -> str | None:
    if "loss is nan" in evidence or "loss is inf" in evidence:
        return "fp16-nan-use-bf16"
    return "sglang-backend" if "before it was ready" in evidence else None


def _figures(preset: str, figures: dict[str, object]) -> str:
    memory = figures.get("peak_gpu_mem_bytes")
    peak = f", peak GPU memory {int(memory) / 2**30:.2f} GiB" if isinstance(memory, int) else ""
    if preset == "train-steps":
        losses = figures.get("losses") or []
        last = losses[-1] if isinstance(losses, list) and losses else None
        step = figures.get("step_time_s")
        return f"{len(losses) if isinstance(losses, list) else 0} finite losses (last {last}), " \
               f"{step} s/step{peak}"
    return f"TTFT {figures.get('ttft_s')} s, {figures.get('tokens_per_s')} tokens/s{peak}"


def run_preset_reference(ctx: StageContext, raw: dict[str, Any]) -> dict[str, Any]:
    """The CUDA side: the same preset on a leased NVIDIA GPU, over the original sources.

    Written to ``records/reference.json`` as the preset run (``preset``, ``passed``, ``result``), which
    :func:`preset_reference` reads back on the ROCm side; ``ok``/``summary`` as for a plain command.
    """
    try:
        spec = preset_from_dict(raw)
    except PresetError as error:
        return {"ok": False, "summary": f"bad smoke preset: {error}"}
    found = probe("cuda")
    ctx.log(f"GPU probe: {len(found.gpus)} NVIDIA GPU(s) via {found.source or 'nothing'} {found.reason}\n")
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log, area=REFERENCE_WORK) as work:
        sandbox = run_sandbox(None, ctx.workspace, work, gpu_devices=True)  # the host's CUDA stack, read-only
        run = run_preset_on_gpu(spec, ctx.workspace.source, found, sandbox,
                                wait_timeout_s=ctx.settings.smoke_wait_timeout_s, log=ctx.log, cancel=ctx.is_cancelled,
                                inputs=ctx.workspace.records / "preset-reference")
    ctx.check_cancelled()
    payload = run.to_dict()
    figures = measurements(run) if run.result is not None else {}
    payload.update(ok=run.passed, summary=f"CUDA reference {run.preset} " + (
        f"passed: {_figures(run.preset, figures)}" if run.passed else f"failed: {run.error or run.result}")[:300])
    write_record(ctx.workspace.records / REFERENCE_ARTIFACT, json.dumps(payload, indent=1))
    return payload
