"""Report sections read the keys the stages write (worker/payloads.py), built here as the stages build them."""
from __future__ import annotations

from migrator.reports.sections import build_fixes_section, link_section, wavefront_section
from translator.account import FileAccount, TreeAccount
from worker.payloads import HipifyData, LinkData
from worker.scanning.model import AppliedFix
from worker.toolchain.diagnostics import parse_linker_output

LD_OUTPUT = "/usr/bin/ld: cannot find -lcublas: No such file or directory\n"


def hipify_data(fixes: list[AppliedFix]) -> HipifyData:
    """As worker/stages/hipify.py's ``_data`` builds it."""
    account = TreeAccount(source="source", destination="hip", files=[FileAccount(path="src/a.cu")])
    return HipifyData(**account.to_dict(max_findings=20, only_interesting=True), account_artifact="translation.json",
                      notebook_slugs=[], build_fixes=[fix.to_dict() for fix in fixes], generated_files=[],
                      wavefront_hazards=[])


def test_the_build_fixes_are_the_hipify_stage_s_build_fixes() -> None:
    fix = AppliedFix("cmake.find-package-cuda", "CMakeLists.txt", 3, "find_package(CUDA)\n", "find_package(hip)\n")
    assert build_fixes_section(dict(hipify_data([fix]))) == [{
        "rule_id": "cmake.find-package-cuda", "file": "CMakeLists.txt", "line": 3,
        "before": "find_package(CUDA)\n", "after": "find_package(hip)\n",
    }]
    assert build_fixes_section(dict(hipify_data([]))) == []


def test_the_link_section_lists_the_link_stage_s_problems() -> None:
    data = LinkData(targets=[], libraries=[], inferred_libraries=[], error="",
                    problems=[p.to_dict() for p in parse_linker_output(LD_OUTPUT)])
    section = link_section(dict(data))
    assert section is not None and section["problems_total"] == 1
    problems = section["problems"]
    assert isinstance(problems, list)
    assert problems[0]["library"] == "cublas" and problems[0]["replacement"] == "hipBLAS"


def test_the_wavefront_section_counts_per_kind_and_lists_every_hazard_from_the_scan_before_hipify() -> None:
    row = {"file": "k.cu", "line": 4, "column": 2, "kind": "lane-id-32", "expression": "threadIdx.x % 32",
           "why": "...", "wave32": False, "rule": "", "fix": "__lane_id()", "applied": False}
    fixed = {**row, "line": 5, "kind": "full-mask-32", "rule": "wavefront.full-mask-64", "applied": True}
    section = wavefront_section({}, {"wavefront_hazards": [row, fixed, {**row, "line": 9}]})
    assert section is not None and section["source"] == "scan"
    assert (section["total"], section["fixed"], section["suggested"]) == (3, 1, 2)
    assert section["by_kind"] == {"lane-id-32": {"total": 2, "fixed": 0, "suggested": 2},
                                  "full-mask-32": {"total": 1, "fixed": 1, "suggested": 0}}
    hazards = section["hazards"]
    assert isinstance(hazards, list)
    assert [(h["line"], h["applied"]) for h in hazards] == [(4, False), (5, True), (9, False)]
    assert wavefront_section({}, {}) is None  # a run from before the scan had it
