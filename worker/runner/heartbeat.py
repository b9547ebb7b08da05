"""What a GPU runner reports about itself; the lead stores it on a Runner row."""
from __future__ import annotations

import datetime
import os
import re
import socket
from collections.abc import Callable, Sequence
from typing import TypedDict

from worker.runner.gpus import Profile, probe, run_tool
from worker.toolchain.detect import detect_toolchain

VERSION_TIMEOUT_S = 15.0


class Heartbeat(TypedDict):
    host: str
    pid: int
    profile: Profile
    queues: list[str]
    toolchain: dict[str, str | None]
    gpus: list[dict[str, object]]
    gpu_source: str  # rocminfo, rocm-smi, nvidia-smi, fake, or "" when none found
    gpus_fake: bool
    gpu_reason: str
    time: str  # ISO 8601, UTC


def parse_nvcc_version(text: str) -> str | None:
    """``Cuda compilation tools, release 13.0, V13.0.88`` -> ``13.0.88``."""
    match = re.search(r"release [\d.]+, V([\d.]+)", text)
    return match.group(1) if match else None


def _version(argv: list[str], parse: Callable[[str], str | None]) -> str | None:
    text, _ = run_tool(argv, VERSION_TIMEOUT_S)
    return parse(text) if text is not None else None


def rocm_toolchain() -> dict[str, str | None]:
    """The toolchain root smoke commands run in (read from its files; nothing of the host's)."""
    toolchain = detect_toolchain()
    if not toolchain.available:
        return {"toolchain": None, "hip": None}
    return {"toolchain": toolchain.name, "hip": toolchain.hipcc_version, "clang": toolchain.clang_version}


def cuda_toolchain() -> dict[str, str | None]:
    driver_text, _ = run_tool(
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], VERSION_TIMEOUT_S
    )
    driver = driver_text.strip().splitlines()[0].strip() if driver_text and driver_text.strip() else None
    return {"nvcc": _version(["nvcc", "--version"], parse_nvcc_version), "driver": driver}


def build_heartbeat(profile: Profile, queues: Sequence[str]) -> Heartbeat:
    """Who and what this runner is, now. Takes a few seconds (it runs the vendor tools)."""
    found = probe(profile)
    return Heartbeat(
        host=socket.gethostname(),
        pid=os.getpid(),
        profile=profile,
        queues=list(queues),
        toolchain=rocm_toolchain() if profile == "rocm" else cuda_toolchain(),
        gpus=[gpu.to_dict() for gpu in found.gpus],
        gpu_source=found.source,
        gpus_fake=found.fake,
        gpu_reason=found.reason,
        time=datetime.datetime.now(datetime.UTC).isoformat(),
    )
