"""The CUDA side of a delivered tree on a CUDA runner: the reference path, pointed at the delivered branch.

Run by the ``cuda`` queue's worker (a machine with nvcc and, for the smoke command, an NVIDIA GPU). The
delivered tree (exported by the delivering worker into the run's folder) is built exactly as the run's
CUDA reference builds the original (``worker.runner.reference``: every unit with ``nvcc -c`` for the
leased GPU's architecture, each ``main`` linked with the rest), in the sandbox over the host's toolkit.
Where the project has a smoke command, it runs on a leased GPU in the build folder and its output is
compared with the original's reference output (``worker.runner.checks.compare_outputs``, the timing and
device-name lines ignored as the smoke stage ignores them). The original's output is the run's recorded
CUDA reference when it ran for this smoke command; otherwise the original is built and run here first,
the same way, so both sides of the comparison come from the same machine and the same path.

Output: a ``SideResult`` for the CUDA side, ``via`` naming the runner, ``smoke`` holding both outputs
and the comparison. Failed when the delivered tree does not build, when its smoke run does not go as
expected, or when its output differs from the original's.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from worker.context import Workspace
from worker.delivery.verify import DELIVERED, SideResult, StepData
from worker.project_settings import ProjectSettings
from worker.runner.checks import compare_outputs
from worker.runner.gpus import GpuProbe, probe
from worker.runner.job import run_on_gpu
from worker.runner.reference import BuildResult, build_cuda_reference
from worker.stages.smoke import COMPARE_IGNORE, limits_for, on_fake_gpu
from worker.toolchain.sandbox import Sandbox
from worker.toolchain.work import REFERENCE_WORK, open_work, run_sandbox

Log = Callable[[str], None]
OUTPUT_CHARS = 4000


@dataclass(frozen=True)
class SmokeRun:
    ok: bool
    stdout: str
    summary: str
    fake_gpu: bool = False


def check_on_cuda_runner(delivered: Path, workspace: Workspace, settings: ProjectSettings, runner: str,
                         original_stdout: str | None, log: Log) -> SideResult:
    """Build ``delivered`` by the reference path and compare its smoke output with the original's
    (``original_stdout``: the run's recorded reference output, None to make it here)."""
    found = probe("cuda")
    arch = found.gpus[0].arch if found.gpus else ""
    via = f"cuda runner {runner}"
    with open_work(workspace, size_mb=settings.workspace_mb, log=log, area=REFERENCE_WORK) as work:
        sandbox = run_sandbox(None, workspace, work, gpu_devices=True, binds={str(DELIVERED): delivered})
        build = build_cuda_reference(delivered, work / "delivered-reference-build", settings, sandbox, arch, log=log)
        result = _build_result(build, via)
        if not build.ok or not settings.smoke_command.strip():
            return result
        ours = _smoke(build, found, settings, sandbox, log)
        source = "the run's CUDA reference"
        if original_stdout is None:
            reference = build_cuda_reference(workspace.source, work / "original-reference-build", settings, sandbox,
                                             arch, log=log)
            if not reference.ok:
                result.smoke = {"command": settings.smoke_command, "detail": f"the original did not build: "
                                                                            f"{reference.error}"}
                return result  # nothing to compare with; the delivered tree built
            theirs = _smoke(reference, found, settings, sandbox, log)
            original_stdout, source = theirs.stdout, "the original, built and run here"
    return _compared(result, ours, original_stdout, source, settings)


def _build_result(build: BuildResult, via: str) -> SideResult:
    steps = [StepData(r.command.split(), 0 if r.ok else 1, r.duration_s) for r in [*build.compiles, *build.links]]
    output = "".join(f"{r.target}: {'ok' if r.ok else 'FAILED'}\n{r.output}\n" for r in [*build.compiles, *build.links])
    if not build.ok:
        return SideResult("cuda", "failed", f"the CUDA reference build of the delivered tree failed: {build.error}",
                          steps, output[-OUTPUT_CHARS:], via)
    return SideResult("cuda", "passed", f"nvcc built the delivered tree by the reference path ({len(build.compiles)} "
                                        f"units, {len(build.executables)} programs, {build.arch})", steps,
                      output[-OUTPUT_CHARS:], via)


def _smoke(build: BuildResult, found: GpuProbe, settings: ProjectSettings, sandbox: Sandbox, log: Log) -> SmokeRun:
    job = run_on_gpu(settings.smoke_command, Path(build.build_dir), found, limits_for(settings), sandbox, log=log)
    if job.execution is None:
        return SmokeRun(False, "", f"not run: {job.error}", on_fake_gpu(job))
    expected = job.classification is None
    summary = f"exit {job.execution.exit_code}" + ("" if expected else f" ({job.classification.kind})"
                                                   if job.classification else "")
    return SmokeRun(expected, job.execution.stdout, summary, on_fake_gpu(job))


def _compared(result: SideResult, ours: SmokeRun, original: str, source: str, settings: ProjectSettings) -> SideResult:
    tolerances = [c for c in settings.smoke_checks if c.kind == "numeric"]
    rel, abs_ = (tolerances[0].rel_tol, tolerances[0].abs_tol) if tolerances else (1e-5, 1e-8)
    comparison = compare_outputs(ours.stdout, original, rel, abs_, COMPARE_IGNORE)
    result.smoke = {"command": settings.smoke_command, "delivered": ours.stdout[-OUTPUT_CHARS:],
                    "original": original[-OUTPUT_CHARS:], "original_from": source, "run": ours.summary,
                    "comparison": comparison.status, "detail": comparison.detail, "fake_gpu": ours.fake_gpu}
    label = "[fake GPU] " if ours.fake_gpu else ""
    if not ours.ok:
        result.status, result.reason = "failed", f"{label}the smoke command on the delivered build: {ours.summary}"
    elif comparison.status == "different":
        result.status = "failed"
        result.reason = f"{label}the smoke output differs from {source}: {comparison.detail}"
    else:
        result.reason += f"; {label}smoke output matches {source}"
    return result
