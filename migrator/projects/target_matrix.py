"""The compile page's matrix: translation units by GPU target, from the compile stage's data.

Each file's ``targets`` (``worker/toolchain/targets.py``) gives its result per target of
``offload_archs``: the per-file compile's ``files``, or for a project's own CMake or Make build its
``project_targets`` (``worker/toolchain/project_targets.py``: the device-code units the build compiled,
with the outputs and the targets their device code holds). The matrix lists the files that failed on
some target (at most ``MAX_ROWS``) and a count of passing files per target; a failure about wave size
links to the translation's wavefront finding at the same original place where there is one (the hipify
stage's ``wavefront_hazards``, shown on its page with ids ``hipify-wavefront-hazards-<n>``).
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


class OutputCell(TypedDict):
    arch: str
    held: bool


class OutputRow(TypedDict):
    path: str
    owner: str  # the CMake target or the make build folder
    cells: list[OutputCell]


class Matrix(TypedDict):
    archs: list[str]
    rows: list[Row]  # files failing on some target
    passed: list[int]  # per target, how many files passed
    total: int
    failed_targets: list[str]
    truncated: int  # failing files not listed
    project: bool  # a project's own build (the rows are its units compiled again per target)
    commands_from: str  # project builds: whose commands compiled the failing units again
    outputs: list[OutputRow]  # project builds: each output with device code, by target


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


def _outputs(project: Item, archs: Sequence[str]) -> list[OutputRow]:
    rows = []
    for output in _items(project.get("outputs"))[:MAX_ROWS]:
        held = output.get("targets")
        found = {str(a) for a in held} if isinstance(held, list) else set()
        rows.append(OutputRow(path=str(output.get("path") or ""), owner=str(output.get("owner") or ""),
                              cells=[OutputCell(arch=arch, held=arch in found) for arch in archs]))
    return rows


def target_matrix(run_id: int, data: Item, hipify: Item) -> Matrix | None:
    """The matrix for a compile of several targets, file by file or by the project's own build; None when
    there is nothing per target."""
    listed = data.get("offload_archs")
    archs = [a for a in listed if isinstance(a, str)] if isinstance(listed, list) else []
    project = data.get("project_targets")
    project = project if isinstance(project, Mapping) else {}
    files = _items(data.get("files")) or _items(project.get("units"))
    outputs = _outputs(project, archs)
    if not archs or not (outputs or files and any(_items(f.get("targets")) for f in files)):
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
    total = project.get("units_total")
    return Matrix(archs=archs, rows=rows, passed=passed, total=total if isinstance(total, int) and project else len(files),
                  failed_targets=[str(a) for a in failed] if isinstance(failed, list) else [],
                  truncated=failing - len(rows), project=bool(project),
                  commands_from=str(project.get("commands_from") or ""), outputs=outputs)


def failed_target_names(data: Item) -> Sequence[str]:
    """The targets the compile stage failed for (empty when it did not say)."""
    failed = data.get("failed_targets")
    return [str(a) for a in failed] if isinstance(failed, list) else []
