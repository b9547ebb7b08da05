"""CUDA-only Python packages and their ROCm counterparts, and the torch builds on PyTorch's ROCm
index (data: ``data/rocm_counterparts.json``, each entry with its sources and the date checked)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

DATA_PATH = Path(__file__).resolve().parent / "data" / "rocm_counterparts.json"
DEFAULT_ROCM_VERSION = "7.2"  # the default toolchain root's ROCm
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


@dataclass(frozen=True)
class Counterpart:
    id: str
    why: str
    action: str  # replace | remove | build | upgrade | image | keep
    counterpart: str
    install: str  # the exact line for the ROCm version; empty when none is recorded
    requirement: str  # a ROCm-capable requirement to use instead ("bitsandbytes>=0.50"), else empty
    sources: tuple[str, ...]
    checked: str
    rocm_version: str

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "why": self.why, "action": self.action, "counterpart": self.counterpart,
                "install": self.install, "requirement": self.requirement, "sources": list(self.sources),
                "checked": self.checked, "rocm_version": self.rocm_version}


@dataclass(frozen=True)
class TorchBuilds:
    """Which torch versions have a +rocm build for one ROCm version, with the domain libraries paired."""

    rocm_version: str
    index: str
    builds: dict[str, dict[str, str]]  # "2.14.1" -> {"torchvision": "0.29.1"}
    sources: tuple[str, ...]
    checked: str

    def versions(self) -> list[Version]:
        return sorted(Version(v) for v in self.builds)


@lru_cache(maxsize=1)
def _data() -> dict[str, object]:
    data = json.loads(DATA_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and isinstance(data.get("entries"), list)
    return data


def _entries() -> list[dict[str, object]]:
    entries = _data()["entries"]
    assert isinstance(entries, list)
    return entries


def data_version() -> str:
    """Changes whenever the data does: part of every cache key built from it."""
    dates = [str(e.get("checked", "")) for e in _entries()]
    builds = _data().get("torch_builds", {})
    return max(dates + [str(builds.get("checked", "")) if isinstance(builds, dict) else ""]) + \
        f"/{len(dates)}/{len(json.dumps(builds, sort_keys=True))}"


def rocm_key(rocm_version: str) -> str:
    """The ROCm index name for a toolchain version: "7.2.4" -> "7.2" (PyTorch names indexes by minor)."""
    parts = rocm_version.strip().split(".")
    return ".".join(parts[:2])


def torch_builds(rocm_version: str) -> TorchBuilds | None:
    table = _data().get("torch_builds", {})
    if not isinstance(table, dict):
        return None
    per_rocm = table.get("rocm", {})
    key = rocm_key(rocm_version)
    builds = per_rocm.get(key) if isinstance(per_rocm, dict) else None
    if not isinstance(builds, dict):
        return None
    return TorchBuilds(key, str(table.get("index", "")).format(rocm=key),
                       {str(v): {str(k): str(x) for k, x in pair.items()} for v, pair in builds.items()},
                       tuple(str(s) for s in table.get("sources", [])), str(table.get("checked", "")))


def rocm_versions_with(torch_version: str) -> list[str]:
    """The ROCm versions whose index has a build of ``torch_version``."""
    table = _data().get("torch_builds", {})
    per_rocm = table.get("rocm", {}) if isinstance(table, dict) else {}
    return [rocm for rocm, builds in (per_rocm.items() if isinstance(per_rocm, dict) else [])
            if isinstance(builds, dict) and torch_version in builds]


def paired_versions(torch_version: str) -> dict[str, str]:
    """The torchvision/torchaudio versions built with ``torch_version`` (any ROCm version's table)."""
    table = _data().get("torch_builds", {})
    per_rocm = table.get("rocm", {}) if isinstance(table, dict) else {}
    for builds in per_rocm.values() if isinstance(per_rocm, dict) else []:
        if isinstance(builds, dict) and isinstance(builds.get(torch_version), dict):
            return {str(k): str(v) for k, v in builds[torch_version].items()}
    return {}


def triton_packages() -> tuple[str, ...]:
    table = _data().get("torch_builds", {})
    names = table.get("triton_packages", []) if isinstance(table, dict) else []
    return tuple(str(n) for n in names) if isinstance(names, list) else ()


def _matches(entry: dict[str, object], name: str, extras: frozenset[str]) -> bool:
    packages = entry.get("packages", [])
    if isinstance(packages, list) and name in packages and not entry.get("extras"):
        return True
    pattern = entry.get("pattern")
    if isinstance(pattern, str) and re.match(pattern, name):
        return True
    wanted = entry.get("extras", {})
    if isinstance(wanted, dict) and name in wanted:
        return bool(extras & set(wanted.get(name, [])))
    return isinstance(packages, list) and name in packages


def _for_version(table: object, key: str) -> str:
    if not isinstance(table, dict):
        return ""
    return str(table.get(key, table.get("*", "")))


def is_rocm_build(version: str) -> bool:
    return "+rocm" in version


def local_version(version: str) -> str:
    try:
        return Version(version).local or ""
    except InvalidVersion:
        return ""


def counterpart_for(name: str, *, extras: frozenset[str] = frozenset(), version: str = "",
                    rocm_version: str = DEFAULT_ROCM_VERSION) -> Counterpart | None:
    """The ROCm counterpart of a CUDA-only or CUDA-built package, or None when it is portable."""
    name = canonicalize_name(name)
    if is_rocm_build(version):
        return None
    key = rocm_key(rocm_version)
    for entry in _entries():
        if not _matches(entry, name, extras):
            continue
        sources = entry.get("sources")
        return Counterpart(
            id=str(entry["id"]), why=str(entry["why"]), action=str(entry["action"]),
            counterpart=str(entry["counterpart"]), install=_for_version(entry.get("install"), key),
            requirement=_for_version(entry.get("requirement"), key),
            sources=tuple(str(s) for s in sources) if isinstance(sources, list) else (),
            checked=str(entry.get("checked", "")), rocm_version=key,
        )
    return None
