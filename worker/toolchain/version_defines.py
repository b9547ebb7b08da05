"""Definitions a HIP version needs for features ported CUDA code uses, set by the compile stage.

HIP before 7.0 declares the warp-sync builtins (``__shfl_*_sync``, ``__ballot_sync``, ``__any_sync``,
``__syncwarp``, ...) only where ``HIP_ENABLE_WARP_SYNC_BUILTINS`` is defined; HIP 7.0 has them always.
Every compile in a root whose HIP is older gets the definition (per-file flags, the CMake HIP and C++
flags, Make's ``HIPFLAGS`` and hipcc's ``HIPCC_COMPILE_FLAGS_APPEND``), and the stage says so.

Pure: standard library only; the HIP version is the root's, as detected from its files.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WARP_SYNC_BUILTINS = "HIP_ENABLE_WARP_SYNC_BUILTINS"


@dataclass(frozen=True)
class VersionDefine:
    name: str  # the macro, defined without a value
    reason: str  # one line, for the log and the stage data

    @property
    def flag(self) -> str:
        return f"-D{self.name}"

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "reason": self.reason}


def hip_major_minor(version: str) -> tuple[int, int]:
    """``"6.4.43484"`` -> (6, 4); (0, 0) when the version cannot be read."""
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return 0, 0


def version_defines(hip_version: str, user_defines: Sequence[str] = ()) -> tuple[VersionDefine, ...]:
    """The definitions HIP ``hip_version`` needs that the project's own ``defines`` do not already set."""
    given = {d.removeprefix("-D").split("=", 1)[0] for d in user_defines}
    major, minor = hip_major_minor(hip_version)
    needed: list[VersionDefine] = []
    if (0, 0) < (major, minor) < (7, 0) and WARP_SYNC_BUILTINS not in given:
        needed.append(VersionDefine(WARP_SYNC_BUILTINS, f"HIP {major}.{minor} declares the warp-sync builtins "
                                    "(__shfl_*_sync, __ballot_sync, __syncwarp, ...) only with it defined; "
                                    "HIP 7.0 and later always do"))
    return tuple(needed)


def describe_defines(defines: Sequence[VersionDefine]) -> str:
    """One log line per definition, empty when there is none."""
    return "".join(f"defined {d.name} for every compile: {d.reason}\n" for d in defines)
