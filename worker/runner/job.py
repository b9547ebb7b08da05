"""One smoke command on one leased GPU: lease, run in the sandbox, classify. Shared by the ROCm smoke
run and the CUDA reference run. Standard library only.

The command never runs on the host: it runs in the sandbox (over the toolchain root on a ROCm
runner, over the host's read-only system directories on a CUDA runner), with only the leased GPU's
device files and the lease's variables."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from worker.runner.classify import Classification, classify_failure
from worker.runner.execute import Execution, run_command
from worker.runner.gpus import Gpu, GpuProbe
from worker.runner.leasing import LeaseTimeout, default_lock_dir, lease_gpu
from worker.runner.sampling import gpu_memory_sampler
from worker.toolchain.sandbox import PATH, Sandbox, SandboxLimits, SandboxUnavailable

Log = Callable[[str], None]


@dataclass(frozen=True)
class JobLimits:
    timeout_s: float
    output_limit_bytes: int
    wait_timeout_s: float  # for a free GPU
    expected_exit: int = 0


@dataclass
class GpuRun:
    probe: GpuProbe
    gpu: Gpu | None = None
    env: dict[str, str] | None = None  # the lease's variables
    execution: Execution | None = None
    classification: Classification | None = None  # None when the run ended as expected
    error: str = ""  # why the command did not run at all

    @property
    def ran_as_expected(self) -> bool:
        return self.execution is not None and self.classification is None

    def to_dict(self) -> dict[str, object]:
        return {
            "probe": self.probe.to_dict(),
            "gpu": self.gpu.to_dict() if self.gpu else None,
            "env": self.env,
            "execution": self.execution.to_dict() if self.execution else None,
            "classification": self.classification.to_dict() if self.classification else None,
            "error": self.error,
        }


def _sandbox_limits(limits: JobLimits) -> SandboxLimits:
    # No address-space limit: the GPU runtimes map far more virtual memory than they use.
    return SandboxLimits(timeout_s=limits.timeout_s, memory_mb=0, processes=4096,
                         output_bytes=max(limits.output_limit_bytes * 4, 1_000_000))


def _classify(execution: Execution, expected_exit: int) -> Classification | None:
    if execution.exit_code == expected_exit and not execution.timed_out:
        return None
    return classify_failure(execution.output, execution.exit_code, execution.signal, execution.timed_out)


def no_device(probe: GpuProbe) -> GpuRun:
    vendor = "AMD" if probe.profile == "rocm" else "NVIDIA"
    slug = "no-amd-gpu-visible" if probe.profile == "rocm" else "cuda-visible-devices"
    message = f"no {vendor} GPU on this machine ({probe.reason or 'the probe found none'})"
    return GpuRun(probe, classification=Classification("no-device", slug, message), error=message)


def run_on_gpu(
    command: str,
    cwd: Path,
    probe: GpuProbe,
    limits: JobLimits,
    sandbox: Sandbox,
    lock_dir: Path | None = None,
    log: Log = lambda text: None,
    cancel: Callable[[], bool] | None = None,
) -> GpuRun:
    """Lease one of ``probe.gpus``, run ``command`` there, and say whether it went as expected."""
    if not probe.gpus:
        return no_device(probe)
    try:
        lease = lease_gpu(probe.gpus, lock_dir or default_lock_dir(), limits.wait_timeout_s)
    except LeaseTimeout as exc:
        return GpuRun(probe, classification=Classification("gpu-busy", None, str(exc)), error=str(exc))
    with lease:
        fake = " (fake device)" if lease.gpu.fake else ""
        log(f"leased GPU {lease.gpu.index}: {lease.gpu.name} {lease.gpu.arch}{fake}\n")
        log(f"$ {command}\n")
        boxed = _sandbox_limits(limits)
        try:
            argv = sandbox.command(["/bin/sh", "-c", command], sandbox.inside(cwd), boxed, lease.env())
            try:
                execution = run_command(
                    argv, sandbox.workspace, {"PATH": PATH}, limits.timeout_s,
                    limits.output_limit_bytes, gpu_memory_sampler(lease.gpu), cancel=cancel,
                )
            finally:
                for note in sandbox.finish(argv, boxed):  # the job's cgroup: limits it hit, then removed
                    log(f"[sandbox] {note}\n")
            execution.command = command
        except (OSError, SandboxUnavailable) as exc:
            error = f"could not start the command: {exc}"
            return GpuRun(probe, lease.gpu, lease.env(), None, Classification("failed", None, error), error)
    return GpuRun(probe, lease.gpu, lease.env(), execution, _classify(execution, limits.expected_exit))
