"""Smoke stage: run the project's smoke command on one leased AMD GPU and check its output.

Input: ``ctx.settings.smoke_*`` (command, timeout, expected exit, checks, output limit,
wait timeout, compare_reference); the built program in ``/workspace/build`` (the command's
working directory, in the run's ``work/``); optionally the CUDA reference from
``records/reference.json`` (written by :func:`run_reference` on a ``cuda`` runner). The reference run
is a tracked row of its own; the pipeline hands this stage out only once that row is final, so the
stage never waits for it (and never holds a GPU runner while the CUDA side works).
Output data: ``execution`` (exit, signal, time-out, duration, peaks, output tails), ``checks``,
``classification`` (None when passed), ``gpu``, ``probe``, ``reference`` (comparison with the
CUDA run; a parent run's reference only when made for the same smoke command and build),
``fake_gpu`` (the device was faked with MIGRATOR_FAKE_GPUS: the summary starts "[fake GPU]"). Full outputs go
to ``records/smoke.json``.
Failure modes (failed results): no AMD GPU here (classification ``no-device``), every GPU busy
past the wait timeout (``gpu-busy``), a wrong exit code / signal / time-out (classified from the
output: ``no-device``, ``wrong-target``, ``launch-config``, ``illegal-memory-access``, ``timeout``,
``crashed``, ``failed``), a failed check (``checks-failed``), output unlike the CUDA reference
(``output-differs``). No smoke command configured: skipped. A PyTorch extension project runs only on a runner with a ROCm
PyTorch whose link stage built it (in that root, from ``/workspace/hip`` with ``/workspace/site`` on the
Python path); elsewhere skipped, "needs a ROCm PyTorch runner".
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worker.contained import is_dir_beneath, write_record
from worker.context import StageContext, StageResult
from worker.payloads import CheckData, ClassificationData, ReferenceData, SmokeData
from worker.project_settings import ProjectSettings
from worker.runner.checks import CheckResult, Comparison, compare_outputs, run_checks
from worker.runner.classify import Classification
from worker.runner.gpus import probe
from worker.runner.job import GpuRun, JobLimits, run_on_gpu
from worker.runner.reference import build_cuda_reference
from worker.runner.reference_reuse import build_key, decide_reuse, reference_key
from worker.runner.torch_probe import probe_torch
from worker.stages.extension_link import FAKE_LABEL as TORCH_FAKE_LABEL
from worker.stages.extension_link import SITE
from worker.stages.smoke_presets import REFERENCE_ARTIFACT, run_preset_reference, run_preset_stage, stored_reference
from worker.toolchain.roots import ToolchainNotFound, select_root
from worker.toolchain.work import HIP_COPY, REFERENCE_WORK, open_work, run_sandbox

SMOKE_ARTIFACT = "smoke.json"
REFERENCE_BUILD_DIR = "reference-build"  # in the run's work/ folder, beside build/
TAIL_CHARS = 8000
FAKE_LABEL = "[fake GPU] "  # opens every summary of a result obtained on a MIGRATOR_FAKE_GPUS device
# Lines that legitimately differ between the CUDA and the ROCm run: timings and device names.
COMPARE_IGNORE = (
    r"(?i)\b(time|elapsed|took|ms|msec|usec|seconds?|GB/s|GFLOP/?s|TFLOP/?s|bandwidth|throughput)\b",
    r"(?i)\b(NVIDIA|GeForce|Tesla|AMD|Radeon|Instinct|compute capability)\b|\bgfx\d|\bsm_\d",
)


def limits_for(settings: ProjectSettings) -> JobLimits:
    return JobLimits(
        timeout_s=settings.smoke_timeout_s,
        output_limit_bytes=settings.smoke_output_limit_bytes,
        wait_timeout_s=settings.smoke_wait_timeout_s,
        expected_exit=settings.smoke_expected_exit,
    )


def _tail(text: str) -> str:
    return text if len(text) <= TAIL_CHARS else f"[... {len(text) - TAIL_CHARS} characters before ...]\n" + text[-TAIL_CHARS:]


def trimmed(job_dict: dict[str, Any]) -> dict[str, Any]:
    """The job's dict with the outputs cut to their tails, for the Stage row."""
    execution = job_dict.get("execution")
    if isinstance(execution, dict):
        execution = {**execution, "stdout": _tail(execution["stdout"]), "stderr": _tail(execution["stderr"])}
    return {**job_dict, "execution": execution}


def classification_data(found: Classification | None) -> ClassificationData | None:
    return ClassificationData(kind=found.kind, notebook_slug=found.notebook_slug, evidence=found.evidence) \
        if found else None


def _check_data(check: CheckResult) -> CheckData:
    return CheckData(name=check.name, passed=check.passed, detail=check.detail, skipped=check.skipped)


def job_data(job: GpuRun) -> SmokeData:
    """What the Stage row keeps of a job: ``GpuRun.to_dict()`` with the outputs cut to their tails."""
    execution: dict[str, object] | None = None
    if job.execution is not None:
        execution = {**job.execution.to_dict(), "stdout": _tail(job.execution.stdout),
                     "stderr": _tail(job.execution.stderr)}
    return SmokeData(probe=job.probe.to_dict(), gpu=job.gpu.to_dict() if job.gpu else None, env=job.env,
                     execution=execution, classification=classification_data(job.classification), error=job.error)


def _write_artifact(ctx: StageContext, name: str, payload: dict[str, Any]) -> None:
    write_record(ctx.workspace.records / name, json.dumps(payload, indent=1))


def load_reference(ctx: StageContext) -> dict[str, Any] | None:
    """The reference result usable for this run (its artifact, full output); a parent run's reference only
    when made for the same smoke command and build."""
    found = stored_reference(ctx)
    decision = decide_reuse(found, reference_key(ctx.settings, source_pin(ctx)), ctx.run_id)
    if decision.note:
        ctx.log(f"{decision.note}\n")
    if not decision.usable:
        return {"ok": False, "summary": decision.note, "not_reused": True} if decision.note else None
    return {**found, "reuse_note": decision.note} if found and decision.note else found


def source_pin(ctx: StageContext) -> str:
    return str(ctx.source_spec.get("sha256") or ctx.source_spec.get("ref") or "")


def on_fake_gpu(job: GpuRun) -> bool:
    """True when the job leased a device faked with MIGRATOR_FAKE_GPUS."""
    return job.gpu is not None and job.gpu.fake


def reference_stdout(reference: dict[str, Any] | None) -> str | None:
    """The reference run's stdout when it ran as expected, else None."""
    if not reference or not reference.get("ok"):
        return None
    execution = reference.get("execution")
    return str(execution["stdout"]) if isinstance(execution, dict) else None


def _check_summaries(checks: list[CheckResult]) -> str:
    failed = [c for c in checks if not c.passed and not c.skipped]
    return f"{len(checks) - len(failed)}/{len(checks)} checks passed" + (
        f"; failed: {failed[0].name} ({failed[0].detail})" if failed else ""
    )


def _compare(settings: ProjectSettings, stdout: str, reference: dict[str, Any] | None) -> ReferenceData:
    ref_out = reference_stdout(reference)
    info = ReferenceData(available=ref_out is not None, comparison=None)
    if reference:
        info.update(ReferenceData(
            ok=reference.get("ok"), summary=reference.get("summary"), gpu=reference.get("gpu"),
            fake_gpu=bool(reference.get("fake_gpu")), reuse_note=reference.get("reuse_note", ""),
            not_reused=bool(reference.get("not_reused"))))
    if ref_out is not None and settings.smoke_compare_reference:
        tolerances = [c for c in settings.smoke_checks if c.kind == "numeric"]
        rel, abs_ = (tolerances[0].rel_tol, tolerances[0].abs_tol) if tolerances else (1e-5, 1e-8)
        comparison: Comparison = compare_outputs(stdout, ref_out, rel, abs_, COMPARE_IGNORE)
        info["comparison"] = comparison.to_dict()
    return info


def smoke_run_dir(ctx: StageContext) -> Path:
    """Where the smoke command runs: where the build put its programs (a path in the run's work/ folder).

    The project's own build leaves them where its build files say (CMake's build folder, or the
    translated tree for make and commands); the per-file link puts executables into build/bin, named after
    the file defining main (as the CUDA reference build names them), so "./app --args" works on both sides."""
    project = ctx.compile_data().get("project_build")
    if isinstance(project, dict) and project.get("run_dir") in ("build", "hip"):
        run_dir = str(project["run_dir"])
        # source_subdir with paths kept beside it: make ran in the subdirectory, so its programs are there
        inner = str(ctx.fetch_data().get("project_dir") or "")
        if run_dir == "hip" and inner and is_dir_beneath(ctx.workspace.work, f"hip/{inner}"):
            return ctx.workspace.work / "hip" / inner
        return ctx.workspace.work / run_dir
    build = ctx.workspace.build
    return build / "bin" if is_dir_beneath(ctx.workspace.work, "build/bin") else build


def run(ctx: StageContext) -> StageResult:
    settings = ctx.settings
    preset = settings.smoke_preset  # a validation preset instead of a command
    if preset:
        return run_preset_stage(ctx, preset)
    if not settings.smoke_command.strip():
        return StageResult.skipped("no smoke command configured in project settings",
                                   **SmokeData(no_smoke_command=True))
    extension = ctx.compile_data().get("mode") == "extension"
    torch = probe_torch() if extension else None
    if torch is not None and (not torch.available or not ctx.previous.get("link", {}).get("runner_build")):
        return StageResult.skipped("not run: running a PyTorch extension needs a ROCm PyTorch runner that built it "
                                   "(see the link stage)", **SmokeData(no_pytorch_runner=True))
    try:
        root = select_root(torch.root if torch is not None else settings.toolchain)
    except ToolchainNotFound as exc:
        return StageResult.failed(f"no ROCm toolchain root on this runner to run the smoke command in: {exc}")
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log) as work:
        if not is_dir_beneath(work, "build"):
            return StageResult.failed("nothing was built: the build directory is missing",
                                      **SmokeData(classification=None))
        found = probe("rocm")
        ctx.log(f"GPU probe: {len(found.gpus)} AMD GPU(s) via {found.source or 'nothing'} {found.reason}\n")
        ctx.check_cancelled()
        # An extension runs from its built tree, its pip-installed packages first on the path.
        run_dir = work / "hip" if extension else smoke_run_dir(ctx)
        environment = {"PYTHONPATH": f"{SITE}:{HIP_COPY}"} if extension else None
        job = run_on_gpu(settings.smoke_command, run_dir, found, limits_for(settings),
                         run_sandbox(root, ctx.workspace, work, gpu_devices=True, environment=environment),
                         log=ctx.log, cancel=ctx.is_cancelled)
    ctx.check_cancelled()  # a cancelled run's process group is already stopped
    _write_artifact(ctx, SMOKE_ARTIFACT, job.to_dict())
    result = _not_run(ctx, job) if job.execution is None else _judge(ctx, job)
    if torch is not None and torch.fake:  # a result with a fake ROCm PyTorch says so wherever it is shown
        return StageResult(result.outcome, TORCH_FAKE_LABEL + result.summary, {**result.data, "fake_torch": True})
    return result


def _not_run(ctx: StageContext, job: GpuRun) -> StageResult:
    ctx.log(f"not run: {job.error}\n")
    fake = on_fake_gpu(job)
    return StageResult.failed((FAKE_LABEL if fake else "") + job.error, **SmokeData(
        execution=None, checks=[], classification=classification_data(job.classification), gpu=None,
        probe=job.probe.to_dict(), reference=None, fake_gpu=fake))


LOGGED_OUTPUT_CHARS = 64_000


def _log_output(ctx: StageContext, label: str, text: str) -> None:
    if text:
        shown = text if len(text) <= LOGGED_OUTPUT_CHARS else "[...]\n" + text[-LOGGED_OUTPUT_CHARS:]
        ctx.log(f"--- {label} ---\n{shown}{'' if shown.endswith(chr(10)) else chr(10)}")


def _judge(ctx: StageContext, job: GpuRun) -> StageResult:
    settings, execution = ctx.settings, job.execution
    assert execution is not None
    _log_output(ctx, "stdout", execution.stdout)
    _log_output(ctx, "stderr", execution.stderr)
    reference = load_reference(ctx)
    checks = run_checks(
        execution.stdout, execution.exit_code, execution.signal,
        settings.smoke_expected_exit, settings.smoke_checks, reference_stdout(reference),
    )
    compared = _compare(settings, execution.stdout, reference)
    kind = classification_data(job.classification)
    if kind is None and any(not c.passed and not c.skipped for c in checks):
        kind = ClassificationData(kind="checks-failed", notebook_slug=None, evidence=_check_summaries(checks))
    comparison = compared.get("comparison")
    if kind is None and comparison and comparison["status"] == "different":
        kind = ClassificationData(kind="output-differs", notebook_slug=None, evidence=str(comparison["detail"]))
    for check in checks:
        ctx.log(f"check {check.name}: {'skipped' if check.skipped else 'ok' if check.passed else 'FAILED'} - {check.detail}\n")
    data = job_data(job)
    data.update(SmokeData(checks=[_check_data(c) for c in checks], classification=kind, reference=compared))
    summary = f"exit {execution.exit_code if execution.signal is None else execution.signal} in {execution.duration_s:.1f} s, {_check_summaries(checks)}"
    # A result from a fake device (or compared with a fake-device reference) says so wherever it is shown.
    fake = on_fake_gpu(job) or bool(compared.get("fake_gpu"))
    data["fake_gpu"] = fake
    label = FAKE_LABEL if fake else ""
    if kind is not None:
        return StageResult.failed(f"{label}{kind['kind']}: {kind['evidence']}"[:300], **data)
    return StageResult.passed(label + summary, **data)


def run_reference(ctx: StageContext) -> dict[str, Any]:
    """Build the original sources with nvcc and run the smoke command on a leased NVIDIA GPU.

    Writes ``records/reference.json`` (full output) and returns the same dict with output
    tails. ``ok`` is true when the reference ran as expected and passed its text/regex checks.
    """
    settings = ctx.settings
    preset = settings.smoke_preset  # a validation preset: run it on the CUDA side too
    if preset:
        return run_preset_reference(ctx, preset)
    if not settings.smoke_command.strip():
        return {"ok": False, "summary": "no smoke command configured in project settings"}
    found = probe("cuda")
    arch = found.gpus[0].arch if found.gpus else ""
    ctx.log(f"GPU probe: {len(found.gpus)} NVIDIA GPU(s) via {found.source or 'nothing'} {found.reason}\n")
    result: dict[str, Any] = {"run_id": ctx.run_id, "key": reference_key(settings, source_pin(ctx)),
                              "build_key": build_key(settings, source_pin(ctx))}
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log, area=REFERENCE_WORK) as work:
        sandbox = run_sandbox(None, ctx.workspace, work, gpu_devices=True)  # the host's CUDA toolkit, read-only
        build = build_cuda_reference(ctx.workspace.source, work / REFERENCE_BUILD_DIR, settings, sandbox, arch,
                                     log=ctx.log)
        result["build"] = build.to_dict()
        if not build.ok:
            result.update(ok=False, summary=f"CUDA reference build failed: {build.error}")
        else:
            job = run_on_gpu(
                settings.smoke_command, Path(build.build_dir), found, limits_for(settings), sandbox,
                log=ctx.log, cancel=ctx.is_cancelled,
            )
            ctx.check_cancelled()
            result.update(_reference_outcome(settings, job))
            if on_fake_gpu(job):
                result.update(fake_gpu=True, summary=FAKE_LABEL + str(result.get("summary", "")))
    _write_artifact(ctx, REFERENCE_ARTIFACT, result)
    return trimmed(result)


def run_reference_compiles(ctx: StageContext) -> dict[str, Any]:
    """Only the build half of the CUDA reference, for a run whose compile failed: every original unit compiled
    (and linked) with nvcc, whose results are evidence on the failing files (``reference_evidence``). Nothing
    runs, so no GPU is needed and no smoke comparison is recorded (no ``key``: smoke never reuses it)."""
    result: dict[str, Any] = {"run_id": ctx.run_id, "build_only": True, "build_key": build_key(ctx.settings, source_pin(ctx))}
    with open_work(ctx.workspace, size_mb=ctx.settings.workspace_mb, log=ctx.log, area=REFERENCE_WORK) as work:
        sandbox = run_sandbox(None, ctx.workspace, work)  # the host's CUDA toolkit, read-only
        build = build_cuda_reference(ctx.workspace.source, work / REFERENCE_BUILD_DIR, ctx.settings, sandbox,
                                     log=ctx.log)
    failed = sum(1 for record in build.compiles if not record.ok)
    summary = (f"CUDA reference build passed ({len(build.compiles)} unit(s) compiled with nvcc)" if build.ok
               else f"CUDA reference build failed: {build.error}")
    return result | {"build": build.to_dict(), "ok": build.ok, "summary": summary, "failed_units": failed}


def _reference_outcome(settings: ProjectSettings, job: GpuRun) -> dict[str, Any]:
    outcome: dict[str, Any] = job.to_dict()
    execution = job.execution
    if execution is None:
        return {**outcome, "ok": False, "summary": f"CUDA reference not run: {job.error}", "checks": []}
    checks = run_checks(
        execution.stdout, execution.exit_code, execution.signal, settings.smoke_expected_exit,
        [c for c in settings.smoke_checks if c.kind != "numeric" or c.expected],
    )
    failed = [c for c in checks if not c.passed and not c.skipped]
    ok = job.classification is None and not failed
    reason = job.classification.kind if job.classification else _check_summaries(checks)
    summary = f"CUDA reference {'ran' if ok else 'failed'} ({reason}) in {execution.duration_s:.1f} s"
    return {**outcome, "ok": ok, "summary": summary, "checks": [c.to_dict() for c in checks]}
