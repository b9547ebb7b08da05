"""Find the GPUs of this machine: AMD through ``rocminfo``/``rocm-smi``, NVIDIA through ``nvidia-smi``.

The parsers are pure functions over the tools' text so they can be tested without a GPU.
``MIGRATOR_FAKE_GPUS`` (e.g. ``gfx90a,gfx90a`` or ``sm_90``) replaces the probe with a fake
device list, for tests and development machines; such devices carry ``fake=True``.
Standard library only: this module also runs on bare GPU machines.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Literal

Profile = Literal["rocm", "cuda"]
Vendor = Literal["amd", "nvidia"]

FAKE_GPUS_ENV = "MIGRATOR_FAKE_GPUS"
PROBE_TIMEOUT_S = 20.0
_MIB = 1024 * 1024


@dataclass(frozen=True)
class Gpu:
    """One device; ``index`` is what HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES take."""

    index: int
    vendor: Vendor
    name: str
    arch: str  # gfx90a, sm_90
    memory_bytes: int | None = None
    uuid: str = ""
    fake: bool = False

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class GpuProbe:
    """What a probe found; ``reason`` says why the list is empty (or that it is fake)."""

    profile: Profile
    gpus: list[Gpu] = field(default_factory=list)
    source: str = ""  # "rocminfo", "rocm-smi", "nvidia-smi", "fake", or "" when nothing answered
    reason: str = ""

    @property
    def fake(self) -> bool:
        return self.source == "fake"

    def to_dict(self) -> dict[str, object]:
        return {
            "profile": self.profile,
            "gpus": [gpu.to_dict() for gpu in self.gpus],
            "source": self.source,
            "fake": self.fake,
            "reason": self.reason,
        }


def vendor_for(profile: Profile) -> Vendor:
    return "amd" if profile == "rocm" else "nvidia"


# --- parsers -----------------------------------------------------------------------------------

_AGENT_SPLIT = re.compile(r"^\*{4,}\s*\n\s*Agent\s+\d+\s*\n\s*\*{4,}\s*$", re.MULTILINE)
_FIELD = re.compile(r"^[ ]{2}(?P<key>[A-Za-z][A-Za-z /()#-]*?):\s*(?P<value>.*?)\s*$", re.MULTILINE)
_POOL_SIZE = re.compile(r"Segment:\s+GLOBAL[^\n]*\n\s+Size:\s+(\d+)\s*\([^)]*\)\s*KB")


def parse_rocminfo(text: str) -> list[Gpu]:
    """GPU agents of ``rocminfo`` output, numbered in order (the HIP device order)."""
    gpus: list[Gpu] = []
    for block in _AGENT_SPLIT.split(text)[1:]:
        fields = {m["key"].strip(): m["value"] for m in _FIELD.finditer(block)}
        if fields.get("Device Type", "").upper() != "GPU":
            continue
        arch = fields.get("Name", "")
        pool = _POOL_SIZE.search(block)
        gpus.append(
            Gpu(
                index=len(gpus),
                vendor="amd",
                name=fields.get("Marketing Name") or arch,
                arch=arch,
                memory_bytes=int(pool.group(1)) * 1024 if pool else None,
                uuid=fields.get("Uuid", ""),
            )
        )
    return gpus


def _card_index(key: str) -> int | None:
    match = re.fullmatch(r"card(\d+)", key)
    return int(match.group(1)) if match else None


def parse_rocm_smi_json(text: str) -> list[Gpu]:
    """Cards of ``rocm-smi --showproductname --showmeminfo vram --json`` (ROCm 5 and 6 key names)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return []
    gpus = []
    for key, card in data.items() if isinstance(data, dict) else ():
        index = _card_index(key)
        if index is None or not isinstance(card, dict):
            continue
        lowered = {str(k).lower(): str(v) for k, v in card.items()}
        total = lowered.get("vram total memory (b)", "")
        gpus.append(
            Gpu(
                index=index,
                vendor="amd",
                name=lowered.get("card series") or lowered.get("card model", ""),
                arch=lowered.get("gfx version", ""),
                memory_bytes=int(total) if total.isdigit() else None,
                uuid=lowered.get("unique id", ""),
            )
        )
    return sorted(gpus, key=lambda gpu: gpu.index)


def parse_rocm_smi_used_bytes(text: str, index: int) -> int | None:
    """``VRAM Total Used Memory (B)`` of card ``index`` in ``rocm-smi --showmeminfo vram --json``."""
    try:
        card = json.loads(text).get(f"card{index}", {})
    except (json.JSONDecodeError, AttributeError):
        return None
    used = str(card.get("VRAM Total Used Memory (B)", ""))
    return int(used) if used.isdigit() else None


def sm_arch(compute_cap: str) -> str:
    """``9.0`` -> ``sm_90``; ``12.0`` -> ``sm_120``."""
    major, _, minor = compute_cap.strip().partition(".")
    if not major.isdigit() or not (minor or "0").isdigit():
        return ""
    return f"sm_{int(major)}{minor or '0'}"


def parse_nvidia_smi_csv(text: str) -> list[Gpu]:
    """Rows of ``nvidia-smi --query-gpu=index,name,compute_cap,memory.total,uuid --format=csv,noheader,nounits``."""
    gpus = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) < 5 or not cells[0].isdigit():
            continue
        memory_mib = cells[3]
        gpus.append(
            Gpu(
                index=int(cells[0]),
                vendor="nvidia",
                name=cells[1],
                arch=sm_arch(cells[2]),
                memory_bytes=int(memory_mib) * _MIB if memory_mib.isdigit() else None,
                uuid=cells[4],
            )
        )
    return gpus


def parse_fake_gpus(value: str, profile: Profile) -> list[Gpu]:
    """``gfx90a,gfx90a`` or ``sm_90``: the entries that belong to ``profile``."""
    prefix = "gfx" if profile == "rocm" else "sm_"
    archs = [item.strip() for item in value.split(",") if item.strip().startswith(prefix)]
    return [
        Gpu(index=i, vendor=vendor_for(profile), name=f"fake {arch}", arch=arch, fake=True)
        for i, arch in enumerate(archs)
    ]


# --- probing -----------------------------------------------------------------------------------

def run_tool(
    argv: list[str], timeout_s: float = PROBE_TIMEOUT_S, env: dict[str, str] | None = None
) -> tuple[str | None, str]:
    """(stdout, "") when the tool ran and exited 0, else (None, reason)."""
    if shutil.which(argv[0]) is None:
        return None, f"{argv[0]} not found on PATH"
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, errors="replace", timeout=timeout_s, check=False, env=env
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{argv[0]} failed: {exc}"
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        return None, f"{argv[0]} exited {done.returncode}: {last[0]}"
    return done.stdout + done.stderr, ""


ROCM_SMI_ARGV = ["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json"]
NVIDIA_SMI_ARGV = [
    "nvidia-smi",
    "--query-gpu=index,name,compute_cap,memory.total,uuid",
    "--format=csv,noheader,nounits",
]


def _probe_rocm() -> GpuProbe:
    reasons = []
    text, reason = run_tool(["rocminfo"])
    gpus = parse_rocminfo(text) if text is not None else []
    if gpus:
        return GpuProbe("rocm", gpus, "rocminfo")
    reasons.append(reason or "rocminfo found no GPU agent" + _first_error_line(text or ""))
    text, reason = run_tool(ROCM_SMI_ARGV)
    gpus = parse_rocm_smi_json(text) if text is not None else []
    if gpus:
        return GpuProbe("rocm", gpus, "rocm-smi")
    reasons.append(reason or "rocm-smi listed no card")
    return GpuProbe("rocm", [], "", "; ".join(reasons))


def _first_error_line(text: str) -> str:
    for line in text.splitlines():
        clean = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
        if "not loaded" in clean.lower() or "error" in clean.lower():
            return f" ({clean})"
    return ""


def _probe_cuda() -> GpuProbe:
    text, reason = run_tool(NVIDIA_SMI_ARGV)
    gpus = parse_nvidia_smi_csv(text) if text is not None else []
    if gpus:
        return GpuProbe("cuda", gpus, "nvidia-smi")
    return GpuProbe("cuda", [], "", reason or "nvidia-smi listed no GPU")


def probe(profile: Profile) -> GpuProbe:
    """The GPUs for ``profile``, from ``MIGRATOR_FAKE_GPUS`` when set, else from the vendor tools."""
    fake = os.environ.get(FAKE_GPUS_ENV)
    if fake is not None:
        gpus = parse_fake_gpus(fake, profile)
        note = f"fake devices from {FAKE_GPUS_ENV}={fake!r}"
        return GpuProbe(profile, gpus, "fake", note if gpus else f"{note}: none for {profile}")
    return _probe_rocm() if profile == "rocm" else _probe_cuda()


def probe_gpus(profile: Profile) -> list[Gpu]:
    """Just the device list of :func:`probe`."""
    return probe(profile).gpus
