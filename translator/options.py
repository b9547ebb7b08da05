"""Options of a translation run and the installed HIP version."""
from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Literal

DEFAULT_EXCLUDES = ("third_party/**", "thirdparty/**", "external/**", "vendor/**", "**/.git/**")
FALLBACK_HIP_VERSION = "5.2"


@dataclass(frozen=True)
class TranslateOptions:
    """How to translate.

    launch_style: ``chevron`` keeps ``k<<<g, b>>>(...)``; ``ggl`` emits ``hipLaunchKernelGGL``.
    roc_libraries: use rocBLAS/rocRAND/... names and headers where HIPIFY gives them.
    target_hip_version: APIs added to HIP after it are reported, not emitted ("" = installed HIP).
    assumed_cuda_version: the CUDA version that ``#if CUDART_VERSION >= ...`` tests are evaluated against.
    keep_names: CUDA names the project defines itself; they are left alone everywhere.
    """

    launch_style: Literal["chevron", "ggl"] = "chevron"
    roc_libraries: bool = False
    rename_cu_to_hip: bool = False
    exclude_globs: tuple[str, ...] = DEFAULT_EXCLUDES
    target_hip_version: str = ""
    assumed_cuda_version: str = "12.0"
    keep_names: frozenset[str] = field(default_factory=frozenset)
    detect_local_definitions: bool = True  # translate_tree turns it off after its tree-wide pre-pass
    max_unconverted_listed: int = 1000

    def resolved_hip_version(self) -> tuple[int, ...]:
        return parse_version(self.target_hip_version or installed_hip_version())


@functools.lru_cache(maxsize=64)
def _cached_parse(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("-")[0])[:3])


def parse_version(text: str) -> tuple[int, ...]:
    """'5.2.21153-0amd' -> (5, 2, 21153); '' -> ()."""
    return _cached_parse(text)


@functools.cache
def installed_hip_version() -> str:
    hipconfig = shutil.which("hipconfig")
    if hipconfig is None:
        return FALLBACK_HIP_VERSION
    try:
        out = subprocess.run([hipconfig, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return FALLBACK_HIP_VERSION
    match = re.match(r"\s*(\d+\.\d+(?:\.\d+)?)", out)
    return match.group(1) if match else FALLBACK_HIP_VERSION
