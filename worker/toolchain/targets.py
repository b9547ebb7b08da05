"""Per-target results of a translation unit compiled for several GPU targets in one invocation.

A unit is compiled once for every target of ``offload_archs`` (one invocation, one ``--offload-arch=``
each; clang runs the host side once and the device side per target). When that compile passes, it passed for every target at no extra cost;
when it fails, clang stops at the first target that fails, so the unit is compiled again for each
target alone (``-o /dev/null``) to learn which targets fail and with what first error. Only failing
units pay for this, and at most ``MAX_PROBED_UNITS`` of them per stage.

A failure whose first error is about wave size (a 32-bit lane mask, a builtin that needs
``wavefrontsize32``/``wavefrontsize64``, ``warpSize``) is marked ``wave_size``: the pages link it
to the translation's wavefront finding at that place where there is one.
"""
from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

TargetStatus = Literal["passed", "failed", "timeout", "crashed", "cancelled", "unchecked"]
MAX_PROBED_UNITS = 50  # failing units probed per target in one stage; the rest are "unchecked"
_OFFLOAD_ARCH = "--offload-arch="
_WAVE_SIZE = re.compile(r"mask must be a 64-bit integer|wavefrontsize(?:32|64)|\bwarpSize\b|wavefront size",
                        re.IGNORECASE)
_NOTE_PLACE = re.compile(r"^(?P<file>[^/\s:][^:]*):(?P<line>\d+):")


@dataclass(frozen=True)
class TargetResult:
    arch: str
    status: TargetStatus
    message: str = ""  # the first error when it failed
    file: str = ""  # where that error is (tree-relative, or as the compiler printed it)
    line: int = 0
    duration_s: float = 0.0

    @property
    def wave_size(self) -> bool:
        return self.status == "failed" and bool(_WAVE_SIZE.search(self.message))

    def to_dict(self) -> dict[str, object]:
        return {"arch": self.arch, "status": self.status, "message": self.message, "file": self.file,
                "line": self.line, "duration_s": round(self.duration_s, 3), "wave_size": self.wave_size}


@dataclass(frozen=True)
class ProbeOutcome:
    """One single-target compile: its status and first error (file, line, message)."""

    status: TargetStatus
    message: str = ""
    file: str = ""
    line: int = 0
    duration_s: float = 0.0


class ProbeBudget:
    """How many more failing units may be compiled again per target (shared by the compile threads)."""

    def __init__(self, left: int) -> None:
        self._left = left
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self._left <= 0:
                return False
            self._left -= 1
            return True


def project_place(file: str, line: int, notes: Sequence[str]) -> tuple[str, int]:
    """Where in the project an error is: its own place, or (an error inside a ROCm header, such as a
    ``static_assert`` of the warp-sync builtins) the first note in the tree ("in instantiation ... here")."""
    if file and not file.startswith("/"):
        return file, line
    for note in notes:
        if found := _NOTE_PLACE.match(note):
            return found["file"], int(found["line"])
    return file, line


def target_archs(flags: Sequence[str]) -> list[str]:
    """The targets named by ``--offload-arch=`` flags, in order."""
    return [flag.removeprefix(_OFFLOAD_ARCH) for flag in flags if flag.startswith(_OFFLOAD_ARCH)]


def single_target(flags: Sequence[str], arch: str) -> list[str]:
    """``flags`` compiling for ``arch`` alone (its place among the flags kept)."""
    kept: list[str] = []
    for flag in flags:
        if flag.startswith(_OFFLOAD_ARCH):
            if f"{_OFFLOAD_ARCH}{arch}" not in kept:
                kept.append(f"{_OFFLOAD_ARCH}{arch}")
            continue
        kept.append(flag)
    return kept


def uniform(archs: Sequence[str], status: TargetStatus) -> tuple[TargetResult, ...]:
    """Every target with the same status (the unit passed, or was not probed)."""
    return tuple(TargetResult(arch, status) for arch in archs)


def probe_targets(archs: Sequence[str], compile_for: Callable[[str], ProbeOutcome]) -> tuple[TargetResult, ...]:
    """Each target compiled alone by ``compile_for(arch)``."""
    results = []
    for arch in archs:
        outcome = compile_for(arch)
        results.append(TargetResult(arch, outcome.status, outcome.message, outcome.file, outcome.line,
                                    outcome.duration_s))
    return tuple(results)


def failed_targets(per_file: Sequence[Sequence[Mapping[str, object]]], archs: Sequence[str]) -> list[str]:
    """The targets (in ``archs`` order) that at least one file failed for, from stored per-file results."""
    failing = {str(t.get("arch")) for targets in per_file for t in targets if t.get("status") not in ("passed", "unchecked")}
    return [arch for arch in archs if arch in failing]
