"""A run's report as one JSON-ready dict; ``render_markdown`` turns it into a PR-sized comment.

``build_report(run)`` reads the run, its stages' stored data, the notebook matches and the
previous run of the same project (for the comparison). It never fails on odd stage data.
"""
from __future__ import annotations

from django.urls import reverse

from migrator.projects.causes import run_causes
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Run
from migrator.projects.nextsteps import run_next_steps
from migrator.projects.verdict import run_reference, run_verdict, shown_state
from migrator.reports.compare import compare_reports, finding_keys, settings_changes
from migrator.reports.jsondata import JsonDict, as_dict, as_dicts
from migrator.reports.links import absolute_url
from migrator.reports.markdown import render_markdown
from migrator.reports.notebook_matches import notebook_matches
from migrator.reports.prlinks import parse_pr_url
from migrator.reports.python_sections import dependencies_section, python_section
from migrator.reports.sections import (
    build_fixes_section,
    compile_section,
    findings_section,
    link_section,
    smoke_section,
    translation_section,
    wavefront_section,
)

__all__ = ["build_report", "previous_run", "render_markdown"]
REPORT_SCHEMA = 1


COMPLETED = (RunState.PASSED, RunState.PARTIAL, RunState.FAILED)


def previous_run(run: Run) -> Run | None:
    """The project's last completed run before ``run`` (a cancelled or unfinished one says little)."""
    return run.project.runs.filter(number__lt=run.number, state__in=COMPLETED).order_by("-number").first()


def all_finding_keys(run: Run) -> set[str]:
    """Every build-file finding of the run's scan (not just the rows the report shows)."""
    data = run.stages.filter(name="scan").values_list("data", flat=True).first()
    return finding_keys(as_dicts(data.get("findings")) if isinstance(data, dict) else [])


def compare_runs(before: Run, after: Run, after_report: JsonDict) -> JsonDict:
    changed = settings_changes(as_dict(before.settings_used), as_dict(after.settings_used))
    return compare_reports(_core(before), after_report, all_finding_keys(before), all_finding_keys(after), changed)


def _iso(value: object) -> str | None:
    isoformat = getattr(value, "isoformat", None)
    return str(isoformat(timespec="seconds")) if callable(isoformat) else None


def _source(run: Run) -> JsonDict:
    archive = run.archive
    return {
        "kind": run.source_kind, "git_url": run.git_url, "ref": run.ref, "commit": run.commit_sha,
        "archive_name": archive.original_name if archive else None,
        "archive_sha256": archive.sha256 if archive else None,
        "pinned": run.pinned_source,
    }


def _run_facts(run: Run) -> JsonDict:
    return {
        "id": run.pk, "number": run.number, "state": run.state, "trigger": run.trigger,
        "created_at": _iso(run.created_at), "started_at": _iso(run.started_at), "finished_at": _iso(run.finished_at),
        "duration_s": run.duration_s, "pr_url": run.pr_url,
        "url": absolute_url(reverse("reports:run", args=[run.pk])),
        "run_page": absolute_url(reverse("projects:run", args=[run.pk])),
    }


def _core(run: Run) -> JsonDict:
    stages = list(run.stages.all())
    # A stage that did not run here ("not available") has nothing to report.
    data = {s.name: s.data if isinstance(s.data, dict) and not s.data.get("not_available") else {} for s in stages}
    pr = parse_pr_url(run.pr_url) if run.pr_url else None
    return {
        "schema": REPORT_SCHEMA,
        "project": {"id": run.project_id, "name": run.project.name, "team": run.project.team.name},
        "run": _run_facts(run),
        "state": run.state,
        "verdict": run_verdict(run).to_dict(),
        "pull_request": pr.to_dict() if pr else ({"url": run.pr_url} if run.pr_url else None),
        "source": _source(run),
        "stages": [
            {"name": s.name, "state": s.state, "shown_state": shown_state(s, s.state).lower(), "summary": s.summary,
             "duration_s": None if s.state in (StageState.SKIPPED, StageState.NOT_APPLICABLE) else s.duration_s,
             "not_available": isinstance(s.data, dict) and bool(s.data.get("not_available"))}
            for s in stages
        ],
        "translation": translation_section(data.get("hipify", {})),
        "findings": findings_section(data.get("scan", {})),
        "wavefront": wavefront_section(data.get("hipify", {}), data.get("scan", {})),
        "python": python_section(data.get("scan", {})),
        "dependencies": dependencies_section(data.get("scan", {})),
        "build_fixes": build_fixes_section(data.get("hipify", {})),
        "compile": compile_section(data.get("compile", {})),
        "link": link_section(data.get("link", {})),
        "smoke": smoke_section(data.get("smoke", {}), next((s.summary for s in stages if s.name == "smoke"), "")),
        "reference": _reference(run),
    }


def _reference(run: Run) -> JsonDict | None:
    """The CUDA reference run's row: a state like a stage's (None when no comparison was asked for)."""
    reference = run_reference(run)
    if reference is None:
        return None
    return {"state": reference.state, "shown_state": shown_state(reference, reference.state).lower(), "summary": reference.summary, "duration_s": reference.duration_s,
            "worker": reference.worker, "queued_at": _iso(reference.queued_at), "finished_at": _iso(reference.finished_at)}


def build_report(run: Run) -> JsonDict:
    """The full report of ``run``, with notebook matches and the comparison with the previous run."""
    run = Run.objects.select_related("project", "project__team", "archive").get(pk=run.pk)
    report = _core(run)
    causes = run_causes(run)
    report["causes"] = causes.to_dict()
    steps = run_next_steps(run, list(run.stages.all()), causes.groups, run_verdict(run)) if run.is_final else []
    report["next_steps"] = [step.to_dict() | {"href": absolute_url(step.href) if step.href else ""} for step in steps]
    report["notebook_matches"] = notebook_matches(run)
    before = previous_run(run)
    report["comparison"] = compare_runs(before, run, report) if before else None
    return report
