"""The dependency section of a run, for the scan panel and the report (page, Markdown, JSON).

It joins what the scan recorded (each install set with its ROCm side and resolve key) with the
resolve rows' state and result. Stored data is read defensively: an older scan lacks keys.
"""
from __future__ import annotations

from migrator.dependencies.constants import ResolveState
from migrator.dependencies.models import DependencyResolve

JsonDict = dict[str, object]
MAX_SETS_SHOWN = 80


def _dict(value: object) -> JsonDict:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _dicts(value: object) -> list[JsonDict]:
    return [_dict(v) for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _resolution(key: str, row: DependencyResolve | None, not_resolved: str, resolve: str) -> JsonDict:
    if not key:
        reason = "resolution is turned off" if resolve == "off" else not_resolved or "not resolved"
        return {"state": "not_resolved", "message": reason}
    if row is None:
        return {"state": "missing", "message": "no resolve was recorded for this set (the scan ran before the "
                                               "dependencies app, or the row was removed)"}
    result = _dict(row.result)
    check = _dict(result.get("check"))
    waiting = {ResolveState.QUEUED: "queued: waiting for a worker on the deps queue",
               ResolveState.RUNNING: f"resolving… (worker {row.worker})"}
    return {
        "state": row.state, "status": str(result.get("status", "")),
        "message": waiting.get(ResolveState(row.state), str(result.get("message", "")) or row.summary),
        "summary": row.summary, "packages": len(_dicts(result.get("packages"))),
        "no_wheel": _strings(result.get("no_wheel")), "problems": _strings(check.get("problems")),
        "notes": _strings(check.get("notes")), "constraints": _strings(check.get("constraints")),
        "duration_s": result.get("duration_s"), "python": str(result.get("python", "")),
        "finished_at": row.finished_at.isoformat(timespec="seconds") if row.finished_at else None,
    }


def _entry(entry: JsonDict) -> JsonDict:
    counterpart = _dict(entry.get("counterpart"))
    return {"name": str(entry.get("name", "")), "declared": _strings(entry.get("declared")),
            "where": _strings(entry.get("where")), "action": str(entry.get("action", "")),
            "rocm_requirement": str(entry.get("rocm_requirement", "")), "note": str(entry.get("note", "")),
            "install": str(counterpart.get("install", "")), "sources": _strings(counterpart.get("sources")),
            "checked": str(counterpart.get("checked", ""))}


def _set(item: JsonDict, rows: dict[str, DependencyResolve], resolve: str) -> JsonDict:
    rocm = _dict(item.get("rocm"))
    entries = [_entry(e) for e in _dicts(rocm.get("entries"))]
    key = str(item.get("resolve_key", ""))
    return {
        "id": str(item.get("id", "")), "kind": str(item.get("kind", "")), "file": str(item.get("file", "")),
        "line": item.get("line"), "rocm_file": bool(item.get("rocm")), "image": str(item.get("image", "")),
        "includes": _strings(item.get("includes")), "problems": _strings(item.get("problems")),
        "declared": len(_dicts(item.get("declarations"))) + len(_dicts(item.get("conda"))),
        "torch": _dict(rocm.get("torch")) or None, "notes": _strings(rocm.get("notes")),
        "changes": [e for e in entries if e["action"] not in ("keep",) or e["note"] != "portable"],
        "portable": sum(1 for e in entries if e["action"] == "keep" and e["note"] == "portable"),
        "requirements_rocm": _strings(item.get("requirements_rocm")), "resolve_key": key,
        "resolution": _resolution(key, rows.get(key), str(rocm.get("not_resolved", "")), resolve),
    }


def dependency_section(scan: JsonDict) -> JsonDict | None:
    """The run's dependency section, or None when its scan recorded no dependency report."""
    deps = _dict(scan.get("dependencies"))
    if not deps or "sets" not in deps:
        return None
    resolve = str(deps.get("resolve", ""))
    items = _dicts(deps.get("sets"))[:MAX_SETS_SHOWN]
    keys = {str(i.get("resolve_key")) for i in items if i.get("resolve_key")}
    rows = {row.key: row for row in DependencyResolve.objects.filter(key__in=keys)}
    sets = [_set(i, rows, resolve) for i in items]
    counts: dict[str, int] = {}
    for item in sets:
        state = str(_dict(item["resolution"]).get("state"))
        counts[state] = counts.get(state, 0) + 1
    resolving = counts.get(ResolveState.QUEUED, 0) + counts.get(ResolveState.RUNNING, 0)
    return {
        "rocm_version": str(deps.get("rocm_version", "")), "main_set": str(deps.get("main_set", "")),
        "resolve": resolve, "state": "resolving" if resolving else "final", "resolving": resolving, "counts": counts,
        "summary": str(scan.get("dependencies_summary", "")), "sets": sets,
        "rocm_files": _dicts(deps.get("rocm_files")), "kept_files": _strings(deps.get("kept_files")),
        "cuda_packages": _strings(deps.get("cuda_packages")), "unreadable": _strings(deps.get("unreadable")),
        "problems": sum(len(_strings(_dict(s["resolution"]).get("problems"))) for s in sets),
    }
