"""The compile page's matrix: translation units by GPU target, from the compile stage's data.

Each file's ``targets`` (``worker/toolchain/targets.py``) gives its result per target of
``offload_archs``. The matrix lists the files that failed on some target (at most ``MAX_ROWS``) and a
count of passing files per target; a failure about wave size links to the translation's wavefront
finding at the same original place where there is one (the hipify stage's ``wavefront_hazards``, shown
on its page with ids ``hipify-wavefront-hazards-<n>``).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

from django.urls import reverse

MAX_ROWS = 200
HAZARD_ANCHOR = "hipify-wavefront-hazards"

Item = Mapping[str, object]


class Cell(TypedDict):
    arch: str
    status: str
    message: str
    wave_size: bool
    finding_url: str  # the wavefront finding this failure is about; "" when none
    finding_kind: str


class Row(TypedDict):
    file: str
    cells: list[Cell]


class Matrix(TypedDict):
    archs: list[str]
    rows: list[Row]  # files failing on some target
    passed: list[int]  # per target, how many files passed
    total: int
    failed_targets: list[str]
    truncated: int  # failing files not listed


def _items(value: object) -> list[Item]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _hazard_index(hipify: Item) -> dict[tuple[str, int], tuple[int, str]]:
    """(original file, line) -> (1-based position in the hipify page's table, kind)."""
    index: dict[tuple[str, int], tuple[int, str]] = {}
    for position, hazard in enumerate(_items(hipify.get("wavefront_hazards")), start=1):
        line = hazard.get("line")
        key = (str(hazard.get("file") or ""), line if isinstance(line, int) else 0)
        index.setdefault(key, (position, str(hazard.get("kind") or "")))
    return index


def _cell(target: Item, hazards: Mapping[tuple[str, int], tuple[int, str]], hipify_url: str) -> Cell:
    wave = bool(target.get("wave_size"))
    line = target.get("original_line")
    found = hazards.get((str(target.get("original_file") or ""), line if isinstance(line, int) else 0)) if wave else None
    url = f"{hipify_url}#{HAZARD_ANCHOR}-{found[0]}" if found and hipify_url else ""
    return Cell(arch=str(target.get("arch") or ""), status=str(target.get("status") or ""),
                message=str(target.get("message") or ""), wave_size=wave, finding_url=url,
                finding_kind=found[1] if found else "")


def target_matrix(run_id: int, data: Item, hipify: Item) -> Matrix | None:
    """The matrix for a per-file compile of several targets; None when there is nothing per target."""
    listed = data.get("offload_archs")
    archs = [a for a in listed if isinstance(a, str)] if isinstance(listed, list) else []
    files = _items(data.get("files"))
    if not archs or not files or not any(_items(f.get("targets")) for f in files):
        return None
    hazards = _hazard_index(hipify)
    hipify_url = f"{reverse('projects:run', args=[run_id])}?stage=hipify" if hazards else ""
    passed = [0] * len(archs)
    rows: list[Row] = []
    failing = 0
    for entry in files:
        by_arch = {str(t.get("arch")): t for t in _items(entry.get("targets"))}
        for position, arch in enumerate(archs):
            passed[position] += by_arch.get(arch, {}).get("status") == "passed"
        if all(by_arch.get(arch, {}).get("status") == "passed" for arch in archs):
            continue
        failing += 1
        if len(rows) < MAX_ROWS:
            cells = [_cell(by_arch.get(arch, {"arch": arch, "status": "unchecked"}), hazards, hipify_url) for arch in archs]
            rows.append(Row(file=str(entry.get("original_path") or entry.get("path") or ""), cells=cells))
    failed = data.get("failed_targets")
    return Matrix(archs=archs, rows=rows, passed=passed, total=len(files),
                  failed_targets=[str(a) for a in failed] if isinstance(failed, list) else [],
                  truncated=failing - len(rows))


def failed_target_names(data: Item) -> Sequence[str]:
    """The targets the compile stage failed for (empty when it did not say)."""
    failed = data.get("failed_targets")
    return [str(a) for a in failed] if isinstance(failed, list) else []
