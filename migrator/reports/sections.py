"""Report sections drawn from each stage's stored data (the keys are typed in worker/payloads.py).

Every reader tolerates missing keys: a stage may be skipped, unavailable here, or older than
the key. A section is None when its stage left nothing to report.
"""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

from migrator.reports.jsondata import (
    JsonDict,
    as_dict,
    as_dicts,
    as_float,
    as_int,
    as_list,
    as_str,
    counts,
)
from translator.mapping import load_default

TOP_UNCONVERTED = 20
LOCATIONS_PER_NAME = 5
TOP_FINDINGS = 30
TOP_DIAGNOSTICS = 25
TOP_LINK_PROBLEMS = 20
_SEVERITY_ORDER = {"fatal": 0, "error": 1, "warning": 2, "info": 3, "note": 4, "remark": 5}


@lru_cache(maxsize=1)
def _mapping_db() -> object | None:
    try:
        return load_default()
    except (OSError, ValueError):  # the engine's data file is missing or unreadable: families read "unknown"
        return None


def family_of(name: str) -> str:
    database = _mapping_db()
    lookup = getattr(database, "lookup", None)
    mapping = lookup(name) if callable(lookup) else None
    return str(getattr(mapping, "family", "") or "unknown")


def _unconverted_locations(files: list[JsonDict]) -> dict[str, list[str]]:
    locations: dict[str, list[str]] = defaultdict(list)
    for entry in files:
        path = as_str(entry.get("path"), 300)
        for item in as_dicts(entry.get("unconverted")):
            name = as_str(item.get("name"), 200)
            if len(locations[name]) < LOCATIONS_PER_NAME:
                line = as_int(item.get("line"))
                locations[name].append(f"{path}:{line}" if line else path)
    return locations


def translation_section(hipify: JsonDict) -> JsonDict | None:
    totals = as_dict(hipify.get("totals"))
    if not totals:
        return None
    names = counts(totals.get("unconverted_names"))
    locations = _unconverted_locations(as_dicts(hipify.get("files")))
    unconverted_by_family: dict[str, int] = defaultdict(int)
    for name, count in names.items():
        unconverted_by_family[family_of(name)] += count
    top = [
        {"name": name, "count": count, "family": family_of(name), "locations": locations.get(name, [])}
        for name, count in list(names.items())[:TOP_UNCONVERTED]
    ]
    return {
        "engine": as_str(hipify.get("engine")),
        "files": as_int(totals.get("files")),
        "changed": as_int(totals.get("changed")),
        "by_status": counts(totals.get("by_status")),
        "converted_total": as_int(totals.get("converted_total")),
        "converted_by_family": counts(totals.get("converted")),
        "unconverted_total": as_int(totals.get("unconverted_total")),
        "unconverted_by_family": dict(sorted(unconverted_by_family.items(), key=lambda i: (-i[1], i[0]))),
        "unconverted_distinct": len(names),
        "top_unconverted": top,
        "deprecated_total": as_int(totals.get("deprecated_total")),
        "warnings_total": as_int(totals.get("warnings_total")),
        "renames": len(as_dict(hipify.get("renames"))),
    }


def _finding_row(item: JsonDict) -> JsonDict:
    return {
        "rule_id": as_str(item.get("rule_id"), 100), "severity": as_str(item.get("severity"), 20),
        "file": as_str(item.get("file"), 300), "line": as_int(item.get("line")),
        "text": as_str(item.get("text"), 200), "fixable": bool(item.get("fixable")),
        "notebook_slug": as_str(item.get("notebook_slug"), 60),
    }


def findings_section(scan: JsonDict) -> JsonDict | None:
    if not scan or "findings" not in scan and "findings_total" not in scan:
        return None
    rows = [_finding_row(item) for item in as_dicts(scan.get("findings"))]
    rows.sort(key=lambda r: (_SEVERITY_ORDER.get(str(r["severity"]), 9), str(r["file"]), as_int(r["line"])))
    readiness = as_dict(scan.get("readiness"))
    inventory = as_dict(scan.get("inventory"))
    return {
        "total": as_int(scan.get("findings_total", len(rows))),
        "by_severity": counts(scan.get("findings_by_severity")),
        "by_rule": counts(scan.get("findings_by_rule")),
        "fixable": sum(1 for r in rows if r["fixable"]),
        "top": rows[:TOP_FINDINGS],
        "files_total": as_int(inventory.get("files_total")),
        "readiness": {
            "translatable_share": as_float(readiness.get("translatable_share")),
            "references_total": as_int(readiness.get("references_total")),
            "items_total": as_int(readiness.get("items_total") or readiness.get("references_total")),
            "hand_work": as_int(readiness.get("hand_work")),
            "hand_work_by_kind": counts(readiness.get("hand_work_by_kind")),
            "automatic_by_kind": counts(readiness.get("automatic_by_kind")),
            "hand_work_apis": counts(readiness.get("hand_work_apis")),
            "rocm_libraries_needed": [as_str(x, 60) for x in as_list(readiness.get("rocm_libraries_needed"))],
            "constructs": {str(k): as_str(v, 200) for k, v in as_dict(readiness.get("constructs")).items()},
        },
    }


def _hazard_row(item: JsonDict) -> JsonDict:
    return {
        "file": as_str(item.get("file"), 300), "line": as_int(item.get("line")), "kind": as_str(item.get("kind"), 40),
        "expression": as_str(item.get("expression"), 200), "rule": as_str(item.get("rule"), 60),
        "fix": as_str(item.get("fix"), 300), "applied": bool(item.get("applied")), "wave32": bool(item.get("wave32")),
        "why": as_str(item.get("why"), 400),
    }


def wavefront_section(hipify: JsonDict, scan: JsonDict) -> JsonDict | None:
    """Code that assumes 32-lane warps: counts per kind and every hazard, with the fix applied or suggested.

    From the hipify stage (what the translation applied) when it ran, else from the scan (what it will apply)."""
    source = "translation" if "wavefront_hazards" in hipify else "scan"
    data = hipify if source == "translation" else scan
    if "wavefront_hazards" not in data:
        return None
    hazards = [_hazard_row(item) for item in as_dicts(data.get("wavefront_hazards"))]
    by_kind: dict[str, dict[str, int]] = {}
    for hazard in hazards:
        kind = by_kind.setdefault(str(hazard["kind"]), {"total": 0, "fixed": 0, "suggested": 0})
        kind["total"] += 1
        kind["fixed" if hazard["applied"] else "suggested"] += 1
    fixed = sum(1 for h in hazards if h["applied"])
    return {"source": source, "total": len(hazards), "fixed": fixed, "suggested": len(hazards) - fixed,
            "by_kind": dict(sorted(by_kind.items(), key=lambda item: (-item[1]["total"], item[0]))),
            "hazards": hazards}


def build_fixes_section(hipify: JsonDict) -> list[JsonDict]:
    """The fixes the hipify stage applied to the translated tree (its ``build_fixes``: build files and,
    for PyTorch projects, Python and configuration files); no other stage applies any."""
    return [
        {"rule_id": as_str(f.get("rule_id"), 100), "file": as_str(f.get("file"), 300),
         "line": as_int(f.get("line")), "before": as_str(f.get("before"), 300), "after": as_str(f.get("after"), 300)}
        for f in as_dicts(hipify.get("build_fixes"))
    ]


def _diagnostic_row(item: JsonDict) -> JsonDict:
    original = as_str(item.get("original_file"), 300)
    file = original or as_str(item.get("file") or item.get("tu"), 300)
    line = as_int(item.get("original_line") if original else item.get("line"))
    return {"severity": as_str(item.get("severity"), 20), "file": file, "line": line,
            "message": as_str(item.get("message"), 300), "flag": as_str(item.get("flag"), 80)}


def compile_section(compile_data: JsonDict) -> JsonDict | None:
    if not compile_data:
        return None
    files = as_dicts(compile_data.get("files"))
    diagnostics = [_diagnostic_row(d) for d in as_dicts(compile_data.get("diagnostics"))]
    diagnostics.sort(key=lambda d: _SEVERITY_ORDER.get(str(d["severity"]), 9))
    if files:
        errors = sum(as_int(f.get("errors")) for f in files)
        warnings = sum(as_int(f.get("warnings")) for f in files)
    else:
        errors = sum(1 for d in diagnostics if d["severity"] in ("error", "fatal"))
        warnings = sum(1 for d in diagnostics if d["severity"] == "warning")
    cache = as_dict(compile_data.get("cache"))
    build = as_dict(compile_data.get("project_build"))
    project = as_dict(compile_data.get("project_targets"))  # a project's own build, per target
    return {
        "mode": as_str(compile_data.get("mode")) or "per_tu",
        "files": len(files),
        "failed_files": [as_str(f.get("original_path") or f.get("path"), 300) for f in files if f.get("status") != "passed"],
        "errors": errors, "warnings": warnings,
        "diagnostics_total": len(diagnostics) + max(0, as_int(compile_data.get("diagnostics_truncated")) - len(diagnostics)),
        "top_diagnostics": diagnostics[:TOP_DIAGNOSTICS],
        "cache_hits": as_int(cache.get("hits")), "cache_misses": as_int(cache.get("misses")),
        "project_build_error": as_str(build.get("error"), 300),
        # PyTorch extensions compiled against the hipified headers (issue 26)
        "checked": as_str(compile_data.get("checked"), 300),
        "parts": [{"name": as_str(p.get("name"), 200), "state": as_str(p.get("state"), 40),
                   "summary": as_str(p.get("summary"), 300)} for p in as_dicts(compile_data.get("parts"))],
        "would_run": [as_str(c, 500) for c in as_list(compile_data.get("would_run"))][:20],
        "toolchain": toolchain_facts(as_dict(compile_data.get("toolchain"))),
        "offload_archs": [as_str(a, 40) for a in as_list(compile_data.get("offload_archs"))],
        "failed_targets": [as_str(a, 40) for a in as_list(compile_data.get("failed_targets"))],
        "failed_by_target": _failed_by_target(files or as_dicts(project.get("units"))),
        "outputs_by_target": {as_str(o.get("path"), 300): [as_str(a, 40) for a in as_list(o.get("targets"))]
                              for o in as_dicts(project.get("outputs"))},
        "hip_defines": [as_str(as_dict(d).get("name"), 80) for d in as_list(compile_data.get("hip_defines"))],
    }


def _failed_by_target(units: list[JsonDict]) -> JsonDict:
    """Failing file -> the targets it fails on (per-file compiles and project builds alike)."""
    return {as_str(u.get("original_path") or u.get("path"), 300): [as_str(t.get("arch"), 40) for t in as_dicts(u.get("targets"))
                                                                    if t.get("status") not in ("passed", "unchecked")]
            for u in units if u.get("status") != "passed"}


def toolchain_facts(toolchain: JsonDict) -> JsonDict:
    """What a compile ran with, enough to redo it: the root's name, its HIP and clang versions."""
    return {"name": as_str(toolchain.get("name"), 80), "hip_version": as_str(toolchain.get("hipcc_version"), 40),
            "clang_version": as_str(toolchain.get("clang_version"), 40)}


def link_section(link_data: JsonDict) -> JsonDict | None:
    if not link_data:
        return None
    problems = as_dicts(link_data.get("problems"))
    return {
        "targets": [{"name": as_str(t.get("name"), 200), "kind": as_str(t.get("kind"), 40), "status": as_str(t.get("status"), 40)}
                    for t in as_dicts(link_data.get("targets"))],
        "libraries": [as_str(x, 80) for x in as_list(link_data.get("libraries"))],
        "problems_total": len(problems),
        "problems": [
            {key: as_str(p.get(key), 300) for key in ("kind", "symbol", "library", "replacement", "object", "message")}
            for p in problems[:TOP_LINK_PROBLEMS]
        ],
        "error": as_str(link_data.get("error"), 300),
    }


def smoke_section(smoke: JsonDict, summary: str = "") -> JsonDict | None:
    """``summary``: the stage's own summary, which says why smoke did not run when it did not."""
    if not smoke:
        return None
    execution = as_dict(smoke.get("execution"))
    reference = as_dict(smoke.get("reference"))
    comparison = as_dict(reference.get("comparison"))
    classification = as_dict(smoke.get("classification"))
    return {
        "fake_gpu": bool(smoke.get("fake_gpu")),
        "ran": bool(execution),
        "not_run": "" if execution else as_str(summary, 300),
        "exit_code": execution.get("exit_code") if execution else None,
        "signal": as_str(execution.get("signal"), 20),
        "timed_out": bool(execution.get("timed_out")),
        "duration_s": as_float(execution.get("duration_s")),
        "classification": as_str(classification.get("kind"), 60),
        "evidence": as_str(classification.get("evidence"), 300),
        "checks": [{"name": as_str(c.get("name"), 100), "passed": bool(c.get("passed")),
                    "skipped": bool(c.get("skipped")), "detail": as_str(c.get("detail"), 200)}
                   for c in as_dicts(smoke.get("checks"))],
        "reference": {
            "available": bool(reference.get("available")), "ok": reference.get("ok"),
            "summary": as_str(reference.get("summary"), 300),
            "comparison": as_str(comparison.get("status"), 40), "comparison_detail": as_str(comparison.get("detail"), 300),
            "differences": as_int(comparison.get("difference_count")),
            "fake_gpu": bool(reference.get("fake_gpu")), "reuse_note": as_str(reference.get("reuse_note"), 300),
        } if reference else None,
    }
