"""Single-GPU validation presets on a runner: ``train-steps`` and ``llm-serve``.

A preset is described by a JSON object (``{"preset": "train-steps", "command": ..., ...}``), checked
here; :func:`run_preset_on_gpu` leases one GPU of the probe exactly like a plain smoke command,
runs the preset with the lease's variables and the device's memory sampler, and returns its
measurements with the comparison against the CUDA reference's (when one is given).
Standard library only: this module also runs on bare GPU machines.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worker.runner.gpus import Gpu, GpuProbe
from worker.runner.job import no_device
from worker.runner.leasing import LeaseTimeout, default_lock_dir, lease_gpu
from worker.runner.preset_serve import ServeSpec, run_llm_serve
from worker.runner.preset_train import PresetError, TrainStepsSpec, run_train_steps
from worker.runner.sampling import gpu_memory_sampler

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


def run_preset_on_gpu(spec: PresetSpec, cwd: Path, probe: GpuProbe, *, wait_timeout_s: float,
                      lock_dir: Path | None = None, reference: dict[str, object] | None = None,
                      log: Callable[[str], None] = lambda text: None,
                      cancel: Callable[[], bool] | None = None) -> PresetRun:
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
        env = lease.apply_to(dict(os.environ))
        sampler = gpu_memory_sampler(lease.gpu)
        if isinstance(spec, TrainStepsSpec):
            log(f"$ {spec.resolved_command()}\n")
            train = run_train_steps(spec, cwd, env, sampler=sampler, reference=reference, cancel=cancel)
            result, passed = train.to_dict(), train.passed
        else:
            serve = run_llm_serve(spec, cwd, env, sampler=sampler, reference=reference, log=log, cancel=cancel)
            result, passed = serve.to_dict(), serve.passed
    return PresetRun(name, probe, lease.gpu, lease.env(), result, passed)
