"""CUDA-only Python packages and their ROCm counterparts (data: ``data/rocm_counterparts.json``)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packaging.utils import canonicalize_name

DATA_PATH = Path(__file__).resolve().parent / "data" / "rocm_counterparts.json"
DEFAULT_ROCM_VERSION = "6.4"


@dataclass(frozen=True)
class Counterpart:
    id: str
    why: str
    action: str  # replace | remove | build | upgrade | image | keep
    counterpart: str
    install: str  # the exact line for the ROCm version; empty when none is recorded
    pin: str  # "torch==2.8.0+rocm6.4" (or "bitsandbytes>=0.50") where a ROCm-capable wheel is recorded, else empty
    index: str  # the wheel index the pin comes from
    sources: tuple[str, ...]
    checked: str
    rocm_version: str

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "why": self.why, "action": self.action, "counterpart": self.counterpart,
                "install": self.install, "pin": self.pin, "index": self.index, "sources": list(self.sources),
                "checked": self.checked, "rocm_version": self.rocm_version}


@lru_cache(maxsize=1)
def _entries() -> list[dict[str, object]]:
    data = json.loads(DATA_PATH.read_text(encoding="utf-8"))
    entries = data["entries"]
    assert isinstance(entries, list)
    return entries


def _matches(entry: dict[str, object], name: str, extras: frozenset[str]) -> bool:
    packages = entry.get("packages", [])
    if isinstance(packages, list) and name in packages:
        return True
    pattern = entry.get("pattern")
    if isinstance(pattern, str) and re.match(pattern, name):
        return True
    wanted = entry.get("extras", {})
    return isinstance(wanted, dict) and bool(extras & set(wanted.get(name, [])))


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _version_key(rocm_version: str) -> str:
    return ".".join(rocm_version.split(".")[:2])


def is_rocm_build(version: str) -> bool:
    return "+rocm" in version


def counterpart_for(name: str, *, extras: frozenset[str] = frozenset(), version: str = "",
                    rocm_version: str = DEFAULT_ROCM_VERSION) -> Counterpart | None:
    """The ROCm counterpart of a CUDA-only or CUDA-built package, or None when it is portable."""
    name = canonicalize_name(name)
    if is_rocm_build(version):
        return None
    key = _version_key(rocm_version)
    for entry in _entries():
        if not _matches(entry, name, extras):
            continue
        install = entry.get("install", {})
        pins = entry.get("pins", {})
        index = entry.get("index", {})
        pin_table = pins.get(key, {}) if isinstance(pins, dict) else {}
        pin = f"{name}=={pin_table[name]}" if isinstance(pin_table, dict) and name in pin_table else ""
        requirement = entry.get("requirement", {})
        if not pin and isinstance(requirement, dict):
            pin = str(requirement.get(key, ""))
        return Counterpart(
            id=str(entry["id"]), why=str(entry["why"]), action=str(entry["action"]),
            counterpart=str(entry["counterpart"]),
            install=str(install.get(key, "")) if isinstance(install, dict) else "",
            pin=pin, index=str(index.get(key, "")) if isinstance(index, dict) and "+rocm" in pin else "",
            sources=tuple(str(s) for s in _as_list(entry.get("sources"))),
            checked=str(entry.get("checked", "")), rocm_version=key,
        )
    return None
