"""What got better or worse between a run and the previous run of the same project."""
from __future__ import annotations

from migrator.reports.jsondata import JsonDict, as_dict, as_dicts, as_int

_STAGE_RANK = {"passed": 3, "skipped": 2, "running": 1, "queued": 1, "cancelled": 1, "failed": 0}
# (label, section, key): counts where fewer is better.
_COUNTS = (
    ("compile errors", "compile", "errors"),
    ("compile warnings", "compile", "warnings"),
    ("link problems", "link", "problems_total"),
    ("unconverted references", "translation", "unconverted_total"),
    ("build-file findings", "findings", "total"),
)
MAX_LISTED_FINDINGS = 10  # in the Markdown; the JSON lists them all


def _direction(before: int, after: int, lower_is_better: bool = True) -> str:
    if before == after:
        return "same"
    return "better" if (after < before) == lower_is_better else "worse"


def _stage_changes(before: JsonDict, after: JsonDict) -> list[JsonDict]:
    old = {str(s.get("name")): str(s.get("state")) for s in as_dicts(before.get("stages"))}
    changes: list[JsonDict] = []
    for stage in as_dicts(after.get("stages")):
        name, state = str(stage.get("name")), str(stage.get("state"))
        previous = old.get(name)
        if previous is None or previous == state:
            continue
        rank = _STAGE_RANK.get(state, 1) - _STAGE_RANK.get(previous, 1)
        direction = "better" if rank > 0 else "worse" if rank < 0 else "same"
        changes.append({"what": f"stage {name}", "before": previous, "after": state, "direction": direction})
    return changes


def _count_changes(before: JsonDict, after: JsonDict) -> list[JsonDict]:
    changes: list[JsonDict] = []
    for label, section, key in _COUNTS:
        old_section, new_section = before.get(section), after.get(section)
        if not isinstance(old_section, dict) or not isinstance(new_section, dict):
            continue
        old, new = as_int(old_section.get(key)), as_int(new_section.get(key))
        changes.append({"what": label, "before": old, "after": new, "direction": _direction(old, new)})
    return changes


def finding_keys(findings: list[JsonDict]) -> set[str]:
    return {f"{r.get('rule_id')} in {r.get('file')}" for r in findings}


def _finding_keys(report: JsonDict) -> set[str]:
    return finding_keys(as_dicts(as_dict(report.get("findings")).get("top")))


def settings_changes(before: JsonDict, after: JsonDict) -> list[JsonDict]:
    """Project settings that differ between the two runs (stored differences from the defaults)."""
    keys = sorted(set(before) | set(after))
    return [{"setting": key, "before": before.get(key, "(default)"), "after": after.get(key, "(default)")}
            for key in keys if before.get(key) != after.get(key)]


def _not_run(state: object) -> bool:
    return state in ("skipped", "not_applicable")


def compare_reports(before: JsonDict, after: JsonDict, before_findings: set[str] | None = None,
                    after_findings: set[str] | None = None, changed_settings: list[JsonDict] | None = None) -> JsonDict:
    """Stage state changes, count changes, findings that appeared or went away (all of them when the
    callers pass the full sets), and settings changes. A stage that runs, or stops running, because a
    setting changed is a settings change, neither better nor worse."""
    changed_settings = changed_settings or []
    changes = _stage_changes(before, after) + _count_changes(before, after)
    for change in changes:
        if changed_settings and (_not_run(change.get("before")) or _not_run(change.get("after"))):
            change["direction"] = "settings"
    old_keys = before_findings if before_findings is not None else _finding_keys(before)
    new_keys = after_findings if after_findings is not None else _finding_keys(after)
    better = sum(1 for c in changes if c["direction"] == "better")
    worse = sum(1 for c in changes if c["direction"] == "worse")
    return {
        "previous_run": before.get("run"),
        "changes": changes,
        "settings_changes": changed_settings,
        "new_findings": sorted(new_keys - old_keys),
        "resolved_findings": sorted(old_keys - new_keys),
        "better": better,
        "worse": worse,
        "verdict": "better" if better and not worse else "worse" if worse and not better else
                   "mixed" if better and worse else "unchanged",
    }
