"""Name the cause of a failing GPU run from its output, exit status and time-out.

Runtime error texts win over the signal: a program that segfaults after hipErrorNoDevice
failed because it had no device. ``notebook_slug`` names an error-notebook entry or is None.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

# (kind, notebook slug, pattern); the first pattern found in the output decides.
_RULES: tuple[tuple[str, str | None, re.Pattern[str]], ...] = tuple(
    (kind, slug, re.compile(pattern, re.IGNORECASE))
    for kind, slug, pattern in (
        ("no-device", "no-amd-gpu-visible",
         r"hipErrorNoDevice|hipErrorInvalidDevice|no ROCm-capable device"),
        ("no-device", "nvidia-container",
         r"cudaErrorInsufficientDriver|CUDA driver version is insufficient|found no NVIDIA driver"),
        ("no-device", "cuda-visible-devices",
         r"cudaErrorNoDevice|CUDA_ERROR_NO_DEVICE|no CUDA-capable device|cudaErrorInvalidDevice|invalid device ordinal"),
        ("wrong-target", "no-binary-for-gpu",
         r"hipErrorNoBinaryForGpu|no binary for gpu|hipErrorInvalidImage"),
        ("wrong-target", None,
         r"cudaErrorNoKernelImageForDevice|no kernel image is available|cudaErrorUnsupportedPtxVersion"),
        ("launch-config", "invalid-launch-configuration",
         r"hipErrorInvalidConfiguration|cudaErrorInvalidConfiguration|invalid configuration argument"),
        ("illegal-memory-access", "illegal-memory-access",
         r"illegal memory access|hipErrorIllegalAddress|cudaErrorIllegalAddress|Memory access fault by GPU"),
    )
)


@dataclass(frozen=True)
class Classification:
    kind: str  # no-device, wrong-target, launch-config, illegal-memory-access, timeout, crashed, failed
    notebook_slug: str | None
    evidence: str  # the output line (or fact) that decided

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _line_with(match: re.Match[str], text: str) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start : end if end >= 0 else len(text)].strip()[:300]


def classify_output(text: str) -> Classification | None:
    """The first known runtime error in ``text``, or None."""
    for kind, slug, pattern in _RULES:
        match = pattern.search(text)
        if match:
            return Classification(kind, slug, _line_with(match, text))
    return None


def classify_failure(
    output: str, exit_code: int | None, signal_name: str | None, timed_out: bool
) -> Classification:
    """Why a run failed. Call it only for a run that did fail (wrong exit, signal or time-out)."""
    if timed_out:
        return Classification("timeout", None, "the run reached its time limit and was killed")
    known = classify_output(output)
    if known is not None:
        return known
    if signal_name is not None:
        return Classification("crashed", None, f"ended by {signal_name}")
    return Classification("failed", None, f"exited {exit_code}")
