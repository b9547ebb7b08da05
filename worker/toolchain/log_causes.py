"""The causes of a failed build from its log alone, as the compile and link stages would store them.

Used where only a log and a little context are at hand (the labelled set of failures the cause
benchmark measures, a log pasted by hand): the log is parsed by every family's parser
(``log_families``), turned into the compile stage's ``project_build`` data and the link stage's
``problems``, and classified by the same rules as a run (``causes``).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from worker.toolchain.causes import CauseGroup, compile_causes, group_causes, link_causes
from worker.toolchain.diagnostics import parse_compiler_output, parse_linker_output
from worker.toolchain.log_families import as_diagnostics, parse_log
from worker.toolchain.rocm_libraries import ROCM_LIBRARIES


@dataclass(frozen=True)
class LogContext:
    missing_libraries: tuple[str, ...] = ()  # catalogue names the toolchain lacks (rocm_libraries)
    files: tuple[Mapping[str, Any], ...] = ()  # the compile stage's per-file results, when per file
    build_units: tuple[Mapping[str, Any], ...] = ()  # what the build files declare (name, build_file, sources)
    definitions: Mapping[str, Sequence[str]] = field(default_factory=dict)  # symbol -> files defining it


def toolchain_data(missing: Sequence[str], name: str = "ROCm 7.2") -> dict[str, object]:
    libraries = [{"name": lib.name, "header": lib.header, "library": f"lib{lib.library}.so" if lib.library else "",
                  "package": lib.package, "installed": lib.name not in missing} for lib in ROCM_LIBRARIES]
    return {"name": name, "libraries": libraries}


def stage_data(log: str, context: LogContext) -> tuple[dict[str, Any], dict[str, Any]]:
    """The compile and link stage data a build printing ``log`` leaves."""
    diagnostics = parse_compiler_output(log)
    diagnostics += as_diagnostics(parse_log(log), diagnostics)
    problems = [p.to_dict() for p in parse_linker_output(log)]
    for problem in problems:
        bare = problem["symbol"].split("(")[0].split("::")[-1].strip()
        problem["defined_in"] = list(context.definitions.get(bare, ()))
    errors = [d.to_dict() for d in diagnostics if d.is_error]
    if context.files:
        compile_data: dict[str, Any] = {"mode": "per_tu", "files": list(context.files),
                                        "diagnostics": [{**e, "tu": e["file"]} for e in errors]}
    else:
        compile_data = {"mode": "project", "diagnostics": errors,
                        "project_build": {"ok": bool(problems) and not errors, "error": "" if errors else "the build failed"}}
    compile_data["toolchain"] = toolchain_data(context.missing_libraries)
    compile_data["build_units"] = list(context.build_units)
    return compile_data, {"problems": problems}


def causes_from_log(log: str, context: LogContext) -> list[CauseGroup]:
    """Cause groups, headline first (evidence order: environment, translation, build configuration,
    Migrator, project code)."""
    compile_data, link_data = stage_data(log, context)
    found = compile_causes(compile_data) + link_causes(link_data, compile_data["toolchain"], compile_data)
    return group_causes(found)
