"""A project's port converging, run by run: the measures the progress chart draws."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.safestring import SafeString, mark_safe

from migrator.lib.progress_chart import Series, render_progress_svg
from migrator.projects.constants import FINAL_RUN_STATES, StageState
from migrator.projects.models import Project, Stage

MAX_RUNS = 60


def _totals(data: Mapping[str, Any]) -> Mapping[str, Any]:
    totals = data.get("totals")
    return totals if isinstance(totals, Mapping) else {}


def _passed(items: Any) -> int | None:
    if not isinstance(items, list) or not items:
        return None
    return sum(1 for item in items if isinstance(item, Mapping) and item.get("status") == "passed")


def _measures(stages: list[Stage]) -> dict[str, int | None]:
    data = {s.name: s.data if isinstance(s.data, dict) else {} for s in stages}
    hipify = _totals(data.get("hipify", {}))
    return {
        "translated": int(hipify["changed"]) if "changed" in hipify else None,
        "unconverted": int(hipify["unconverted_total"]) if "unconverted_total" in hipify else None,
        "compiling": _passed(data.get("compile", {}).get("files")),
        "linked": _passed(data.get("link", {}).get("targets")),
        "stages": sum(1 for s in stages if s.state == StageState.PASSED),
    }


def progress_chart(project: Project) -> SafeString | None:
    """The chart of the project's last finished runs (oldest first); None before two of them."""
    runs = list(project.runs.filter(state__in=FINAL_RUN_STATES).order_by("-number")[:MAX_RUNS])[::-1]
    if len(runs) < 2:
        return None
    by_run: dict[int, list[Stage]] = {r.pk: [] for r in runs}
    for stage in Stage.objects.filter(run__in=runs).only("run_id", "name", "state", "data").order_by("position"):
        by_run[stage.run_id].append(stage)
    rows = [_measures(by_run[r.pk]) for r in runs]
    series = [
        Series("Translated files", tuple(m["translated"] for m in rows), "up"),
        Series("Unconverted references", tuple(m["unconverted"] for m in rows), "down"),
        Series("Translation units compiling", tuple(m["compiling"] for m in rows), "up"),
        Series("Link targets linked", tuple(m["linked"] for m in rows), "up"),
        Series("Stages passing", tuple(m["stages"] for m in rows), "up"),
    ]
    return mark_safe(render_progress_svg([r.number for r in runs], series))  # noqa: S308 - built and escaped by us
