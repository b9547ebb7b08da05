"""Report sections of PyTorch projects: the Python and configuration findings, and the dependency report.

The findings come from the scan's ``python_findings`` (every one the stage row keeps, up to the
scan's cap); the dependency section from the dependencies app, which joins the scan's install
sets with the state and result of their resolves (so a report read while they run says so).
"""
from __future__ import annotations

from migrator.dependencies.section import dependency_section
from migrator.reports.jsondata import JsonDict, as_dict, as_dicts, as_int, as_list, as_str, counts

MAX_PYTHON_FINDINGS = 1000
_SEVERITY = {"error": 0, "warning": 1, "info": 2}


def python_section(scan: JsonDict) -> JsonDict | None:
    if "python_findings" not in scan and "python_readiness" not in scan:
        return None
    rows = [{
        "rule_id": as_str(f.get("rule_id"), 100), "severity": as_str(f.get("severity"), 20),
        "file": as_str(f.get("file"), 300), "line": as_int(f.get("line")), "text": as_str(f.get("text"), 200),
        "explanation": as_str(f.get("explanation"), 400), "suggestion": as_str(f.get("suggestion"), 300),
        "replacement": as_str(f.get("replacement"), 300) if f.get("replacement") is not None else None,
        "fixable": bool(f.get("fixable")), "notebook_slug": as_str(f.get("notebook_slug"), 60),
    } for f in as_dicts(scan.get("python_findings"))[:MAX_PYTHON_FINDINGS]]
    rows.sort(key=lambda r: (_SEVERITY.get(str(r["severity"]), 9), str(r["file"]), as_int(r["line"])))
    readiness = as_dict(scan.get("python_readiness"))
    return {
        "total": as_int(scan.get("python_findings_total", len(rows))),
        "listed": len(rows),
        "summary": as_str(scan.get("python_summary")),
        "fixed_automatically": as_int(readiness.get("fixed_automatically")),
        "hand_work": as_int(readiness.get("hand_work")),
        "informational": as_int(readiness.get("informational")),
        "by_rule": counts(readiness.get("by_rule")),
        "rocm_files_shipped": [as_str(x, 300) for x in as_list(readiness.get("rocm_files_shipped"))],
        "findings": rows,
    }


def dependencies_section(scan: JsonDict) -> JsonDict | None:
    return dependency_section(scan)
