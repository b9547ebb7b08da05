"""Device memory samplers for :func:`worker.runner.execute.run_command`.

A sampler returns the bytes in use on one device (all processes on it), or None when
the tool gives no answer. Fake devices and machines without the tool get no sampler.
"""
from __future__ import annotations

import shutil
import subprocess

from worker.runner.execute import GpuSampler
from worker.runner.gpus import Gpu, parse_rocm_smi_used_bytes

SAMPLE_TIMEOUT_S = 5.0
_MIB = 1024 * 1024


def _tool_output(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=SAMPLE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def parse_nvidia_used_mib(text: str) -> int | None:
    """``nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i N`` -> bytes."""
    first = text.strip().splitlines()[:1]
    return int(first[0].strip()) * _MIB if first and first[0].strip().isdigit() else None


def nvidia_sampler(index: int) -> GpuSampler:
    argv = ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", str(index)]

    def sample() -> int | None:
        text = _tool_output(argv)
        return parse_nvidia_used_mib(text) if text is not None else None

    return sample


def rocm_sampler(index: int) -> GpuSampler:
    argv = ["rocm-smi", "--showmeminfo", "vram", "--json", "-d", str(index)]

    def sample() -> int | None:
        text = _tool_output(argv)
        return parse_rocm_smi_used_bytes(text, index) if text is not None else None

    return sample


def gpu_memory_sampler(gpu: Gpu) -> GpuSampler | None:
    """A sampler for ``gpu`` when its vendor tool is here, else None."""
    if gpu.fake:
        return None
    if gpu.vendor == "nvidia":
        return nvidia_sampler(gpu.index) if shutil.which("nvidia-smi") else None
    return rocm_sampler(gpu.index) if shutil.which("rocm-smi") else None
