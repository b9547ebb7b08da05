"""On conflicting evidence the cause follows the issue's order: environment, then translation, then build
configuration, then Migrator, and project code only as the last resort, within a file and across files."""
from __future__ import annotations

from typing import Any

import pytest

from worker.toolchain.causes import KIND_ORDER, compile_causes, group_causes, summary_line
from worker.toolchain.log_causes import toolchain_data
from worker.toolchain.reference_evidence import NvccError, ReferenceBuild

# One clang error for each kind, as hipcc prints them (the message part the compile stage stores).
ENVIRONMENT = "'hipblaslt/hipblaslt.h' file not found"  # hipBLASLt is not in the toolchain below
TRANSLATION = "use of undeclared identifier 'cudaStreamCreateWithPriority'"
BUILD_CONFIGURATION = "unsupported option '--use_fast_math' for target 'x86_64-pc-linux-gnu'"
MIGRATOR = "unable to execute command: Killed"
PROJECT_CODE = "no matching function for call to 'reduce_rows'"
BY_KIND = {"environment": ENVIRONMENT, "translation": TRANSLATION, "build_configuration": BUILD_CONFIGURATION,
           "migrator": MIGRATOR, "project_code": PROJECT_CODE}


def _error(file: str, line: int, message: str, tu: str = "") -> dict[str, Any]:
    return {"tu": tu, "file": file, "line": line, "original_file": file, "original_line": line,
            "severity": "error", "message": message, "flag": ""}


def _per_file(errors: dict[str, list[str]]) -> dict[str, Any]:
    """Per-file compile data: each file's errors in the order clang printed them (line 10, 20, ...)."""
    files = [{"path": name, "original_path": name, "status": "failed"} for name in errors]
    diagnostics = [_error(name, 10 * (n + 1), message, tu=name) for name, messages in errors.items()
                   for n, message in enumerate(messages)]
    return {"mode": "per_tu", "files": files, "diagnostics": diagnostics, "toolchain": toolchain_data(["hipBLASLt"])}


@pytest.mark.parametrize("strongest", KIND_ORDER)
def test_within_one_file_the_strongest_evidence_decides_whatever_the_order_printed(strongest: str) -> None:
    weaker = [BY_KIND[kind] for kind in reversed(KIND_ORDER) if KIND_ORDER.index(kind) > KIND_ORDER.index(strongest)]
    [cause] = compile_causes(_per_file({"src/gemm.hip": [*weaker, BY_KIND[strongest]]}))
    assert cause.kind == strongest
    assert cause.message == BY_KIND[strongest]  # the error that decided is the one shown


def test_the_order_is_the_issues() -> None:
    assert KIND_ORDER == ("environment", "translation", "build_configuration", "migrator", "project_code")


def test_across_files_the_headline_follows_the_order_not_the_count() -> None:
    data = _per_file({f"src/op{n}.hip": [PROJECT_CODE] for n in range(6)} | {
        "src/stream.hip": [TRANSLATION], "src/flags.hip": [BUILD_CONFIGURATION], "src/blas.hip": [ENVIRONMENT]})
    groups = group_causes(compile_causes(data))
    assert [g.kind for g in groups] == ["environment", "translation", "build_configuration", "project_code"]
    assert len(groups[-1].files) == 6
    assert summary_line(groups).startswith("1 file fails because hipBLASLt is not in toolchain")


def test_a_project_build_takes_each_files_strongest_error() -> None:
    diagnostics = [_error("src/attn.hip", 12, PROJECT_CODE), _error("src/attn.hip", 40, TRANSLATION),
                   _error("src/norm.hip", 8, PROJECT_CODE), _error("src/norm.hip", 9, PROJECT_CODE)]
    data = {"mode": "project", "diagnostics": diagnostics, "toolchain": toolchain_data([]),
            "project_build": {"ok": False, "error": "make exited 2"}}
    by_file = {c.file: c.kind for c in compile_causes(data)}
    assert by_file == {"src/attn.hip": "translation", "src/norm.hip": "project_code"}


def test_migrators_limits_come_before_project_code_and_after_the_rest() -> None:
    data = _per_file({"src/big.hip": [], "src/ops.hip": [PROJECT_CODE], "src/flags.hip": [BUILD_CONFIGURATION]})
    data["files"][0]["status"] = "timeout"  # compile_timeout_s stopped it: no compiler message
    kinds = [g.kind for g in group_causes(compile_causes(data))]
    assert kinds == ["build_configuration", "migrator", "project_code"]


def test_the_cuda_reference_saying_project_code_does_not_beat_a_translation_error() -> None:
    reference = ReferenceBuild({"src/attn.cu": False}, (NvccError("src/attn.cu", 10, 'identifier "reduce_rows" is undefined'),),
                               frozenset({"src/attn.cu"}))
    data = _per_file({"src/attn.cu": [PROJECT_CODE, TRANSLATION]})
    [cause] = compile_causes(data, reference=reference)
    assert cause.kind == "translation" and cause.key == "cuda-names"


def test_the_cuda_build_passing_takes_a_file_out_of_project_code_but_keeps_it_behind_the_environment() -> None:
    reference = ReferenceBuild({"src/ops.cpp": True, "src/blas.cpp": True}, (), frozenset())
    data = _per_file({"src/ops.cpp": [PROJECT_CODE], "src/blas.cpp": [ENVIRONMENT]})
    groups = group_causes(compile_causes(data, reference=reference))
    assert [(g.kind, g.key) for g in groups] == [("environment", "missing-library:hipBLASLt"),
                                                 ("translation", "cuda-build-passes")]


def test_a_limit_the_sandbox_recorded_for_a_project_build_is_the_cause_not_what_failed_after_it() -> None:
    data = {"mode": "project", "diagnostics": [_error("src/filter_bank.hip", 3, PROJECT_CODE)],
            "toolchain": toolchain_data([]),
            "project_build": {"ok": False, "error": "make exited 2",
                              "violations": ["the command ran past its time limit of 30 s and was killed"]}}
    [cause] = compile_causes(data)
    assert (cause.kind, cause.key) == ("migrator", "limits")
    assert cause.reason == "Migrator's sandbox or limits stopped the build (the command ran past its time limit of 30 s and was killed)"
