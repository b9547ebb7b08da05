"""A run's compile and link failures grouped by cause (see worker/toolchain/causes.py), read from
the stored stage data and the CUDA reference build of the same source (the run's own, else its
nearest parent's made from the same source and build settings); shown at the top of the run page,
the report and the PR comment."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migrator.projects.constants import SourceKind
from migrator.projects.models import ReferenceRun, Run, Stage
from worker.project_settings import ProjectSettings, SettingsError
from worker.runner.reference_reuse import build_key
from worker.toolchain.causes import CauseGroup, compile_causes, group_causes, link_causes, summary_line
from worker.toolchain.reference_evidence import ReferenceBuild, reference_build

MAX_PARENTS = 8  # how far up a chain of re-runs a reference is looked for


@dataclass(frozen=True)
class RunCauses:
    groups: tuple[CauseGroup, ...]
    summary: str  # one line; empty when nothing failed to compile or link

    def to_dict(self) -> dict[str, object]:
        return {"summary": self.summary, "groups": [g.to_dict() for g in self.groups]}


def user_include_dirs(run: Run) -> tuple[str, ...]:
    try:
        return ProjectSettings.from_dict(run.settings_used).include_dirs
    except SettingsError:
        return ()


def causes_from_data(compile_data: Mapping[str, Any], link_data: Mapping[str, Any], include_dirs: Sequence[str] = (),
                     built: Mapping[str, Any] | None = None, reference: ReferenceBuild | None = None) -> RunCauses:
    """``built``: the compile stage's data when it passed (what link problems are explained from);
    ``reference``: the CUDA reference build to weigh "project code" against."""
    context = built if built is not None else compile_data
    toolchain = context.get("toolchain")
    found = compile_causes(compile_data, include_dirs, reference) + link_causes(
        link_data, toolchain if isinstance(toolchain, Mapping) else None, context)
    groups = tuple(group_causes(found))
    return RunCauses(groups, summary_line(groups))


def run_causes(run: Run, stages: Sequence[Stage] | None = None) -> RunCauses:
    rows = stages if stages is not None else list(run.stages.filter(name__in=("compile", "link")).only("name", "state", "data"))
    data = {s.name: s.data for s in rows if s.state == "failed" and isinstance(s.data, dict)}
    if not data:
        return RunCauses((), "")
    built = next((s.data for s in rows if s.name == "compile" and isinstance(s.data, dict)), None)
    return causes_from_data(data.get("compile", {}), data.get("link", {}), user_include_dirs(run), built,
                            run_reference_build(run))


def source_pin(run: Run) -> str:
    """What the run's source is pinned to, as its stages see it (the orchestrator's source spec)."""
    if run.source_kind == SourceKind.ARCHIVE:
        return run.archive.sha256 if run.archive is not None else ""
    return run.commit_sha or run.ref


def run_reference_build(run: Run) -> ReferenceBuild | None:
    """The CUDA reference build that is evidence on this run's failing files: the run's own, else the
    nearest parent's whose compiles were made from the same source with the same build settings."""
    hipify = run.stages.filter(name="hipify").values_list("data", flat=True).first()
    translated = hipify if isinstance(hipify, dict) else {}
    own = ReferenceRun.objects.filter(run=run).only("data").first()
    if own is not None and isinstance(own.data, dict) and (found := reference_build(own.data, translated)) is not None:
        return found
    try:
        key = build_key(ProjectSettings.from_dict(run.settings_used), source_pin(run))
    except SettingsError:
        return None
    parent = run.parent
    for _ in range(MAX_PARENTS):
        if parent is None:
            return None
        row = ReferenceRun.objects.filter(run=parent).only("data").first()
        if row is not None and isinstance(row.data, dict) and row.data.get("build_key") == key:
            return reference_build(row.data, translated, f"run #{parent.number}")
        parent = parent.parent
    return None
