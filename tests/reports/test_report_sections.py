"""Report sections read the keys the stages write (worker/payloads.py), built here as the stages build them."""
from __future__ import annotations

from migrator.reports.sections import build_fixes_section, link_section
from translator.account import FileAccount, TreeAccount
from worker.payloads import HipifyData, LinkData
from worker.scanning.model import AppliedFix
from worker.toolchain.diagnostics import parse_linker_output

LD_OUTPUT = "/usr/bin/ld: cannot find -lcublas: No such file or directory\n"


def hipify_data(fixes: list[AppliedFix]) -> HipifyData:
    """As worker/stages/hipify.py's ``_data`` builds it."""
    account = TreeAccount(source="source", destination="hip", files=[FileAccount(path="src/a.cu")])
    return HipifyData(**account.to_dict(max_findings=20, only_interesting=True), account_artifact="translation.json",
                      notebook_slugs=[], build_fixes=[fix.to_dict() for fix in fixes], generated_files=[])


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
