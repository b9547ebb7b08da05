"""Single-GPU validation presets on a runner: ``train-steps`` and ``llm-serve``.

A preset is described by a JSON object (``{"preset": "train-steps", "command": ..., ...}``), checked
here; :func:`run_preset_on_gpu` leases one GPU of the probe exactly like a plain smoke command and
runs the preset in the sandbox over the toolchain root, with the lease's variables; the device's
memory sampler watches from outside. ``train-steps`` runs the training command there and judges
its output here; ``llm-serve`` runs ``preset_serve.py`` itself in the sandbox (server and client
must share its network namespace) and reads its JSON answer. The script, its spec and the reference
are written on the root side into ``inputs``, a folder no sandbox can write (a run's records), and
bound read-only at ``/tmp/migrator-preset``: nothing is ever written into the sandbox's workspace.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worker.contained import write_record
from worker.runner.execute import Execution, GpuSampler, run_command
from worker.runner.gpus import Gpu, GpuProbe
from worker.runner.job import no_device
from worker.runner.leasing import LeaseTimeout, default_lock_dir, lease_gpu
from worker.runner.preset_serve import ServeSpec, ServeSpecError
from worker.runner.preset_train import PresetError, TrainStepsSpec, measure
from worker.runner.sampling import gpu_memory_sampler
from worker.toolchain.sandbox import PATH, Sandbox, SandboxLimits, SandboxUnavailable

SERVE_SCRIPT = Path(__file__).resolve().parent / "preset_serve.py"
PRESET_MOUNT = "/tmp/migrator-preset"  # the inputs folder, read-only in the sandbox

PRESETS = ("train-steps", "llm-serve")
PresetSpec = TrainStepsSpec | ServeSpec


def preset_from_dict(raw: dict[str, Any]) -> PresetSpec:
    """The preset a JSON object describes; PresetError names a bad or unknown option."""
    if not isinstance(raw, dict) or raw.get("preset") not in PRESETS:
        raise PresetError(f"preset must be one of {', '.join(PRESETS)}")
    spec_type: type[TrainStepsSpec] | type[ServeSpec] = TrainStepsSpec if raw["preset"] == "train-steps" else ServeSpec
    options = {k: v for k, v in raw.items() if k != "preset"}
    known = {f.name for f in dataclasses.fields(spec_type)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise PresetError(f"{raw['preset']}: unknown option(s) {', '.join(unknown)}")
    if "prompts" in options:
        options["prompts"] = tuple(options["prompts"]) if isinstance(options["prompts"], list) else ()
    try:
        return spec_type(**options)
    except ServeSpecError as error:
        raise PresetError(str(error)) from error
    except TypeError as error:
        raise PresetError(f"{raw['preset']}: {error}") from error


@dataclass
class PresetRun:
    preset: str
    probe: GpuProbe
    gpu: Gpu | None = None
    env: dict[str, str] | None = None
    result: dict[str, object] | None = None  # the preset's own result (to_dict)
    passed: bool = False
    error: str = ""  # why it did not run at all
    classification: str = ""  # "no-device", "gpu-busy" when it did not run

    def to_dict(self) -> dict[str, object]:
        return {"preset": self.preset, "probe": self.probe.to_dict(), "gpu": self.gpu.to_dict() if self.gpu else None,
                "env": self.env, "result": self.result, "passed": self.passed, "error": self.error,
                "classification": self.classification}


def _limits(timeout_s: float, output_bytes: int) -> SandboxLimits:
    # No address-space limit: the GPU runtimes map far more virtual memory than they use (as job.py).
    return SandboxLimits(timeout_s=timeout_s, memory_mb=0, processes=4096, output_bytes=output_bytes)


def _run_boxed(sandbox: Sandbox, argv: list[str], cwd: Path, limits: SandboxLimits, env: dict[str, str],
               sampler: GpuSampler | None, cancel: Callable[[], bool] | None) -> Execution:
    wrapped = sandbox.command(argv, sandbox.inside(cwd), limits, env)
    try:
        return run_command(wrapped, sandbox.workspace, {"PATH": PATH}, limits.timeout_s, limits.output_bytes,
                           sampler, cancel=cancel)
    finally:
        sandbox.finish(wrapped, limits)  # removes the job's cgroup


def serve_timeout(spec: ServeSpec) -> float:
    return spec.startup_timeout_s + spec.request_timeout_s * len(spec.prompts) + spec.stop_grace_s + 30


def _serve_in_sandbox(spec: ServeSpec, sandbox: Sandbox, cwd: Path, env: dict[str, str], sampler: GpuSampler | None,
                      reference: dict[str, object] | None, cancel: Callable[[], bool] | None,
                      inputs: Path) -> tuple[dict[str, object], bool]:
    write_record(inputs / "preset_serve.py", SERVE_SCRIPT.read_bytes())
    write_record(inputs / "spec.json", json.dumps(dataclasses.asdict(spec)))
    argv = ["python3", "-I", f"{PRESET_MOUNT}/preset_serve.py", f"{PRESET_MOUNT}/spec.json", sandbox.inside(cwd)]
    if reference is not None:
        write_record(inputs / "reference.json", json.dumps(reference))
        argv.append(f"{PRESET_MOUNT}/reference.json")
    os.chmod(inputs, 0o755)  # the sandbox user reads it, whatever the worker's umask
    sandbox = sandbox.with_binds({PRESET_MOUNT: inputs})
    execution = _run_boxed(sandbox, argv, cwd, _limits(serve_timeout(spec), 4_000_000), env, sampler, cancel)
    last = execution.stdout.strip().splitlines()[-1:] if execution.stdout.strip() else []
    try:
        result = json.loads(last[0]) if last else None
    except json.JSONDecodeError:
        result = None
    if not isinstance(result, dict):
        tail = execution.stderr.strip()[-500:]
        return {"preset": "llm-serve", "passed": False, "reasons": [f"the preset did not finish "
                f"(exit {execution.exit_code}, timed out: {execution.timed_out}): {tail}"]}, False
    result["peak_gpu_mem_bytes"] = execution.peak_gpu_mem_bytes
    return result, bool(result.get("passed"))


@contextmanager
def _inputs_folder(inputs: Path | None) -> Iterator[Path]:
    """``inputs`` emptied, or a fresh temporary folder (removed afterwards): root-side, never the sandbox's."""
    if inputs is not None:
        shutil.rmtree(inputs, ignore_errors=True)
        inputs.mkdir(parents=True)
        yield inputs
        return
    folder = Path(tempfile.mkdtemp(prefix="migrator-preset-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_preset_on_gpu(spec: PresetSpec, cwd: Path, probe: GpuProbe, sandbox: Sandbox, *, wait_timeout_s: float,
                      lock_dir: Path | None = None, reference: dict[str, object] | None = None,
                      log: Callable[[str], None] = lambda text: None,
                      cancel: Callable[[], bool] | None = None, inputs: Path | None = None) -> PresetRun:
    """Lease one GPU, run the preset in ``sandbox`` (``cwd`` inside its workspace), measure and judge it.

    ``inputs``: a folder the sandbox cannot write (a run's records) for the serve script and its spec;
    default: a temporary folder."""
    name = "train-steps" if isinstance(spec, TrainStepsSpec) else "llm-serve"
    if not probe.gpus:
        missing = no_device(probe)
        return PresetRun(name, probe, error=missing.error, classification="no-device")
    try:
        lease = lease_gpu(probe.gpus, lock_dir or default_lock_dir(), wait_timeout_s)
    except LeaseTimeout as exc:
        return PresetRun(name, probe, error=str(exc), classification="gpu-busy")
    with lease:
        fake = " (fake device)" if lease.gpu.fake else ""
        log(f"leased GPU {lease.gpu.index}: {lease.gpu.name} {lease.gpu.arch}{fake}; preset {name}\n")
        sampler = gpu_memory_sampler(lease.gpu)
        try:
            if isinstance(spec, TrainStepsSpec):
                log(f"$ {spec.resolved_command()}\n")
                execution = _run_boxed(sandbox, ["/bin/sh", "-c", spec.resolved_command()], cwd,
                                       _limits(spec.timeout_s, spec.output_limit_bytes), lease.env(), sampler, cancel)
                execution.command = spec.resolved_command()
                train = measure(execution, spec, reference=reference)
                result, passed = train.to_dict(), train.passed
            else:
                log(f"$ {spec.command}\n")
                with _inputs_folder(inputs) as folder:
                    result, passed = _serve_in_sandbox(spec, sandbox, cwd, lease.env(), sampler, reference, cancel,
                                                       folder)
        except (OSError, SandboxUnavailable) as exc:
            return PresetRun(name, probe, lease.gpu, lease.env(), error=f"could not start the preset: {exc}",
                             classification="failed")
    return PresetRun(name, probe, lease.gpu, lease.env(), result, passed)
