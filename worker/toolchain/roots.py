"""Toolchain roots: complete ROCm root filesystems that compiles, links, builds and smoke runs happen in.

``scripts/toolchain-root`` builds them with mmdebstrap into the store (``$MIGRATOR_TOOLCHAIN_DIR``,
default ``/var/cache/migrator/toolchains``) and writes ``migrator/toolchain.json``, ``manifest.tsv``
(installed packages and versions) and ``identifiers.txt`` (every HIP/ROCm identifier its headers
declare) inside each. Everything here is read from the root itself, never assumed.
"""
from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_STORE = Path("/var/cache/migrator/toolchains")
OFFICIAL_IMAGE = "rocm/dev-ubuntu-24.04"  # AMD's toolchain image; its tags are ROCm releases ("7.2")
_METADATA = Path("migrator/toolchain.json")


class ToolchainNotFound(LookupError):
    """No toolchain root of that name (or none at all) is in the store."""


@dataclass(frozen=True)
class ToolchainRoot:
    name: str
    path: Path
    hip_version: str  # full, e.g. "6.4.43484"
    llvm: str  # the LLVM folder under /usr/lib, e.g. "llvm-21"
    suite: str
    built_at: str
    hipcc_path: str = "/usr/bin/hipcc"  # inside the root
    clang_path: str = ""  # inside the root; empty: Debian's /usr/lib/llvm-N/bin/clang++
    include_dirs: tuple[str, ...] = ("/usr/include",)
    lib_dirs: tuple[str, ...] = ("/usr/lib/x86_64-linux-gnu", "/usr/lib", "/usr/lib64")
    rocm_path: str = "/usr"
    image: str = ""  # the container image the root was unpacked from, where it was one

    @property
    def container_image(self) -> str:
        """The official container image of this root's ROCm release (the one it came from, if any):
        what scan suggestions name, so they follow the chosen toolchain."""
        return self.image or f"{OFFICIAL_IMAGE}:{self.short_version}"

    @property
    def short_version(self) -> str:
        """``major.minor`` of HIP: what translation gates compare against."""
        return ".".join(self.hip_version.split(".")[:2])

    @property
    def clang(self) -> str:
        """The clang++ driver inside the root (called directly: no shell ever parses an argument)."""
        return self.clang_path or f"/usr/lib/{self.llvm}/bin/clang++"

    def host_path(self, inside: str) -> Path:
        return self.path / inside.lstrip("/")

    def manifest(self) -> dict[str, str]:
        return _manifest(self.path)

    def declared_identifiers(self) -> frozenset[str]:
        return _identifiers(self.path)

    def clang_version(self) -> str:
        version = self.manifest().get(f"clang-{self.llvm.removeprefix('llvm-')}", "") or self.llvm
        found = re.search(r"(?:\d+:)?(\d+\.\d+\.\d+)", version)
        return found.group(1) if found else version

    def offload_targets(self) -> list[str]:
        """GPU targets the root's device libraries support (one ISA bitcode file each)."""
        names = {p.name for p in self.path.glob("**/amdgcn/bitcode/oclc_isa_version_*.bc")}
        return sorted(f"gfx{n.removeprefix('oclc_isa_version_').removesuffix('.bc')}" for n in names)


def toolchain_store() -> Path:
    return Path(os.environ.get("MIGRATOR_TOOLCHAIN_DIR") or DEFAULT_STORE)


def discover_roots(store: Path | None = None) -> list[ToolchainRoot]:
    """Every complete root in the store, newest HIP first (half-built ones start with a dot)."""
    store = store or toolchain_store()
    if not store.is_dir():
        return []
    roots = [_read_root(p) for p in sorted(store.iterdir()) if not p.name.startswith(".") and (p / _METADATA).is_file()]
    found = [root for root in roots if root is not None]
    return sorted(found, key=lambda root: _version_key(root.hip_version), reverse=True)


def select_root(name: str = "", store: Path | None = None) -> ToolchainRoot:
    """The root called ``name``, or the newest when ``name`` is empty."""
    roots = discover_roots(store)
    if not roots:
        # Shown to users (stage summaries): the store's host path stays out of it.
        raise ToolchainNotFound("no ROCm toolchain root is installed on this worker: the operator runs ./dev up "
                                "(or scripts/toolchain-root ensure)")
    if not name:
        return roots[0]
    for root in roots:
        if root.name == name:
            return root
    raise ToolchainNotFound(f"toolchain {name!r} is not installed here (have: {', '.join(r.name for r in roots)})")


def default_root() -> ToolchainRoot | None:
    try:
        return select_root()
    except ToolchainNotFound:
        return None


def _read_root(path: Path) -> ToolchainRoot | None:
    try:
        meta = json.loads((path / _METADATA).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict):
        return None
    root = ToolchainRoot(
        path.name, path, str(meta.get("hip_version", "")), str(meta.get("llvm", "")), str(meta.get("suite", "")),
        str(meta.get("built_at", "")), str(meta.get("hipcc", "/usr/bin/hipcc")), str(meta.get("clang", "")),
        tuple(meta.get("include_dirs", ("/usr/include",))),
        tuple(meta.get("lib_dirs", ("/usr/lib/x86_64-linux-gnu", "/usr/lib", "/usr/lib64"))),
        str(meta.get("rocm_path", "/usr")), str(meta.get("image", "")),
    )
    return root if root.host_path(root.hipcc_path).exists() else None


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


@functools.cache
def _manifest(path: Path) -> dict[str, str]:
    try:
        lines = (path / "migrator" / "manifest.tsv").read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split("\t", 1) for line in lines if "\t" in line)


@functools.cache
def _identifiers(path: Path) -> frozenset[str]:
    try:
        return frozenset((path / "migrator" / "identifiers.txt").read_text().split())
    except OSError:
        return frozenset()
