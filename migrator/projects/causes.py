"""A run's compile and link failures grouped by cause (see worker/toolchain/causes.py), read from
the stored stage data; shown at the top of the run page, the report and the PR comment."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migrator.projects.models import Run, Stage
from worker.project_settings import ProjectSettings, SettingsError
from worker.toolchain.causes import CauseGroup, compile_causes, group_causes, link_causes, summary_line


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
                     built: Mapping[str, Any] | None = None) -> RunCauses:
    """``built``: the compile stage's data when it passed (what link problems are explained from)."""
    context = built if built is not None else compile_data
    toolchain = context.get("toolchain")
    found = compile_causes(compile_data, include_dirs) + link_causes(
        link_data, toolchain if isinstance(toolchain, Mapping) else None, context)
    groups = tuple(group_causes(found))
    return RunCauses(groups, summary_line(groups))


def run_causes(run: Run, stages: Sequence[Stage] | None = None) -> RunCauses:
    rows = stages if stages is not None else list(run.stages.filter(name__in=("compile", "link")).only("name", "state", "data"))
    data = {s.name: s.data for s in rows if s.state == "failed" and isinstance(s.data, dict)}
    if not data:
        return RunCauses((), "")
    built = next((s.data for s in rows if s.name == "compile" and isinstance(s.data, dict)), None)
    return causes_from_data(data.get("compile", {}), data.get("link", {}), user_include_dirs(run), built)
