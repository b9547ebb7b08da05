"""What the CUDA reference build says about a file that fails to compile for ROCm.

The CUDA reference (``worker/runner/reference.py``) compiles every translation unit of the
ORIGINAL tree with nvcc. For a failure that would otherwise be called "project code" (the last
resort of ``worker/toolchain/causes.py``), that build is evidence either way:

- nvcc reports an error in the same file at the same line: the original fails the same way without
  migration, so the project's code is the cause ("also fails in the CUDA reference build");
- nvcc compiled the unit (and so every header it includes) without error: the project's code
  builds for CUDA, so the cause is the port: hipcc/clang rejects what nvcc accepts, or translation
  changed the code that fails ("the CUDA build passes").

Anything else (nvcc failed elsewhere, the unit was not in the reference build) is no evidence.
Input: the reference's stored data (``build.compiles``: target, ok, output) and the hipify stage's
data (``files`` with ``changed``/``renamed_to``, ``build_fixes``, ``renames``). Pure: standard library only.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from worker.toolchain.log_families import parse_log

SANDBOX_SOURCE = "/workspace/source/"  # where the reference build sees the original tree


class NvccError(NamedTuple):
    file: str  # tree-relative
    line: int
    message: str


class Evidence(NamedTuple):
    kind: str  # a CauseKind
    key: str
    reason: str


@dataclass(frozen=True)
class ReferenceBuild:
    """The reference build's compile results by original unit, and what translation changed."""

    compiled: Mapping[str, bool]  # original tree-relative unit -> nvcc compiled it
    errors: tuple[NvccError, ...]  # every error nvcc reported, at tree-relative paths
    changed: frozenset[str]  # original paths of files translation (or a build fix) changed
    origin: str = "this run"  # whose reference: "this run", "run #3"

    def error_at(self, file: str, line: int) -> NvccError | None:
        return next((e for e in self.errors if e.file == file and (e.line == line or not line)), None)

    def compiles(self, unit: str, file: str) -> bool:
        """nvcc compiled ``unit`` (or, when the failing build names no unit, every unit) and reported
        nothing in ``file``."""
        if any(e.file == file for e in self.errors):
            return False
        if unit in self.compiled:
            return self.compiled[unit]
        if file in self.compiled:
            return self.compiled[file]
        return bool(self.compiled) and all(self.compiled.values())


def reference_build(reference: Mapping[str, Any], hipify: Mapping[str, Any], origin: str = "this run") -> ReferenceBuild | None:
    """The evidence of a stored reference result, or None when it built nothing (no smoke command, not run)."""
    build = reference.get("build")
    records = [r for r in (build.get("compiles") or ()) if isinstance(r, Mapping)] if isinstance(build, Mapping) else []
    if not records:
        return None
    compiled = {str(r.get("target") or ""): bool(r.get("ok")) for r in records}
    prefixes = _source_prefixes(records)
    errors = tuple(NvccError(_relative(p.file, prefixes), p.line, p.message)
                   for r in records for p in parse_log(str(r.get("output") or ""))
                   if p.kind == "compile_error" and p.file)
    return ReferenceBuild(compiled, errors, changed_files(hipify), origin)


def changed_files(hipify: Mapping[str, Any]) -> frozenset[str]:
    """Original paths whose translated copy differs: changed or renamed by translation, or fixed after it."""
    changed = {str(f.get("path")) for f in hipify.get("files") or ()
               if isinstance(f, Mapping) and (f.get("changed") or f.get("renamed_to"))}
    renames = hipify.get("renames") if isinstance(hipify.get("renames"), Mapping) else {}
    assert isinstance(renames, Mapping)
    original = {str(hip): str(source) for source, hip in renames.items()}
    changed |= {original.get(str(fix.get("file")), str(fix.get("file"))) for fix in hipify.get("build_fixes") or ()
                if isinstance(fix, Mapping)}
    return frozenset(changed)


def _source_prefixes(records: list[Mapping[str, Any]]) -> tuple[str, ...]:
    """The folder the reference saw the tree in, learnt from each unit's own messages (its path ends with the unit)."""
    prefixes: dict[str, None] = {}
    for record in records:
        target = str(record.get("target") or "")
        for problem in parse_log(str(record.get("output") or "")):
            if target and problem.file.endswith("/" + target):
                prefixes[problem.file[: -len(target)]] = None
    prefixes[SANDBOX_SOURCE] = None
    return tuple(prefixes)


def _relative(path: str, prefixes: tuple[str, ...]) -> str:
    for prefix in prefixes:
        if path.startswith(prefix):
            return path[len(prefix):]
    return path.removeprefix("./")


def weigh(build: ReferenceBuild, unit: str, file: str, line: int) -> Evidence | None:
    """The reference's evidence on a "project code" failure of ``file:line`` (compiled as ``unit``)."""
    if build.error_at(file, line) is not None:
        return Evidence("project_code", "also-fails-cuda", "C++ errors in the project's code: nvcc reports the same "
                        f"line, so they also fail in the CUDA reference build ({build.origin})")
    if not build.compiles(unit, file):
        return None
    if file in build.changed or unit in build.changed:
        return Evidence("translation", "cuda-build-passes:translated", f"the CUDA build passes ({build.origin}): "
                        "the error is in code translation changed, so the translated code is wrong")
    return Evidence("translation", "cuda-build-passes", f"the CUDA build passes ({build.origin}) with these files "
                    "unchanged by translation: hipcc (clang) rejects code nvcc accepts; adapt it for clang")
