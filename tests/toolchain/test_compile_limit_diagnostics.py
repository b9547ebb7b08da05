"""A per-file compile that one of Migrator's limits stopped has an error diagnostic for that limit, and the
file's cause is Migrator: the time and output limits hit for real in the sandbox, the memory, process and
disk limits from the sandbox's records of them."""
from __future__ import annotations

from pathlib import Path

import pytest

from worker.project_settings import ProjectSettings
from worker.toolchain.causes import compile_causes
from worker.toolchain.compile import LIMIT_FLAG, FileResult, compile_tree, limit_diagnostics


def _stage_data(result: FileResult) -> dict[str, object]:
    """What the compile stage stores of one file, for the causes (worker/toolchain/stage_data.py)."""
    return {"files": [{"path": result.path, "status": result.status}],
            "diagnostics": [{"tu": result.path, **d.to_dict()} for d in result.diagnostics]}


def _limits(result: FileResult) -> list[str]:
    return [d.message for d in result.diagnostics if d.flag == LIMIT_FLAG and d.is_error]


def test_a_compile_past_its_time_limit_has_a_limit_error_and_migrator_as_its_cause(tmp_path: Path) -> None:
    tree = tmp_path / "hip"
    tree.mkdir()
    (tree / "reduce.hip").write_text("#include <hip/hip_runtime.h>\n__global__ void reduce(float* x) { x[0] = 0; }\n")
    report = compile_tree(tree, tmp_path / "build", ProjectSettings(compile_timeout_s=1), tmp_path / "cache", jobs=1)
    [result] = report.files
    assert result.status == "timeout"
    assert _limits(result) == ["the command ran past its time limit of 1 s and was killed"]
    [cause] = compile_causes(_stage_data(result))
    assert (cause.kind, cause.key, cause.file) == ("migrator", "limits", "reduce.hip")
    assert "the command ran past its time limit of 1 s" in cause.reason


def test_a_compile_printing_past_its_output_limit_is_stopped_and_blamed_on_the_limit(tmp_path: Path) -> None:
    tree = tmp_path / "hip"
    tree.mkdir()
    noisy = "".join(f"#warning table entry {i} is generated\n" for i in range(400))  # about 60 bytes each
    (tree / "tables.cpp").write_text(noisy + "int table_size() { return 400; }\n")
    report = compile_tree(tree, tmp_path / "build", ProjectSettings(), tmp_path / "cache", jobs=1, output_bytes=4000)
    [result] = report.files
    assert result.status == "failed" and not report.ok
    assert _limits(result) == ["the command printed more than 4000 bytes and was stopped"]
    [cause] = compile_causes(_stage_data(result))
    assert (cause.kind, cause.key) == ("migrator", "limits")  # not "project code" for its warnings


def test_the_same_file_under_the_default_output_limit_compiles(tmp_path: Path) -> None:
    tree = tmp_path / "hip"
    tree.mkdir()
    (tree / "tables.cpp").write_text("#warning table entry 1 is generated\nint table_size() { return 1; }\n")
    [result] = compile_tree(tree, tmp_path / "build", ProjectSettings(), tmp_path / "cache", jobs=1).files
    assert result.status == "passed" and _limits(result) == []


@pytest.mark.parametrize("violation", [
    "the job hit its memory limit of 8192 MB: the kernel stopped 1 of its processes",
    "the command hit its limit of 256 processes (3 refused)",
    "the command used up its CPU time limit and was killed",
    "the command wrote a file past the size limit of 8192 MB and was stopped",
    "workspace limit reached (4096 MB)",
])
def test_each_recorded_limit_is_a_migrator_cause_whatever_the_compiler_printed(violation: str) -> None:
    clang_error = {"tu": "src/solver.hip", "file": "src/solver.hip", "line": 12, "column": 3, "severity": "error",
                   "flag": "", "message": "use of undeclared identifier 'solve_step'"}
    limits = [{"tu": "src/solver.hip", **d.to_dict()} for d in limit_diagnostics([violation])]
    data = {"files": [{"path": "src/solver.hip", "status": "failed"}], "diagnostics": [clang_error, *limits]}
    [cause] = compile_causes(data)
    assert (cause.kind, cause.key, cause.message) == ("migrator", "limits", violation)
    assert violation.split(": ")[0] in cause.reason


def test_a_compile_error_without_a_limit_keeps_its_own_cause() -> None:
    clang_error = {"tu": "src/solver.hip", "file": "src/solver.hip", "line": 12, "column": 3, "severity": "error",
                   "flag": "", "message": "use of undeclared identifier 'solve_step'"}
    [cause] = compile_causes({"files": [{"path": "src/solver.hip", "status": "failed"}], "diagnostics": [clang_error]})
    assert cause.kind == "project_code"
