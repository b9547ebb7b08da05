"""The CUDA reference build as evidence on "project code": a failure the original also has in nvcc is
the project's (and says so); one in code nvcc compiles is the port's ("the CUDA build passes")."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.markers import requires_nvcc
from tests.outcomes.real_toolchain import compile_data, require_root
from worker.project_settings import ProjectSettings
from worker.runner.reference import build_cuda_reference
from worker.toolchain.causes import compile_causes, group_causes
from worker.toolchain.log_causes import toolchain_data
from worker.toolchain.reference_evidence import ReferenceBuild, changed_files, reference_build, weigh
from worker.toolchain.sandbox import Sandbox

# What the reference stores for each unit (StepRecord.to_dict()), in nvcc's and g++'s own wording.
NVCC_UNDEFINED = ('/workspace/source/src/kern.cu(4): error: identifier "clampf" is undefined\n'
                  "    if (i < n) x[i] = clampf(x[i]);\n                      ^\n\n"
                  '1 error detected in the compilation of "/workspace/source/src/kern.cu".\n')
GXX_UNDECLARED = ("/workspace/source/src/io.cpp: In function 'int load(const char*)':\n"
                  "/workspace/source/src/io.cpp:9:10: error: 'parse_header' was not declared in this scope\n"
                  "    9 |   return parse_header(f);\n      |          ^~~~~~~~~~~~\n")
REFERENCE: dict[str, Any] = {"ok": False, "build": {"ok": False, "compiles": [
    {"target": "src/kern.cu", "ok": False, "output": NVCC_UNDEFINED},
    {"target": "src/io.cpp", "ok": False, "output": GXX_UNDECLARED},
    {"target": "src/table.cpp", "ok": True, "output": ""},
    {"target": "src/scale.cu", "ok": True, "output": ""},
]}}
HIPIFY: dict[str, Any] = {"files": [{"path": "src/kern.cu", "changed": True, "renamed_to": "src/kern.hip"},
                                    {"path": "src/scale.cu", "changed": True, "renamed_to": "src/scale.hip"},
                                    {"path": "src/table.cpp", "changed": False, "status": "unchanged"}],
                          "renames": {"src/kern.cu": "src/kern.hip", "src/scale.cu": "src/scale.hip"},
                          "build_fixes": [{"rule_id": "wavefront.mask", "file": "src/scale.hip", "line": 3}]}


def _per_file(errors: dict[str, tuple[str, int, str]]) -> dict[str, Any]:
    """Per-file compile data: ``errors`` original path -> (translated path, line, clang's message)."""
    files = [{"path": hip, "original_path": original, "status": "failed"} for original, (hip, _, _) in errors.items()]
    diagnostics = [{"tu": hip, "file": hip, "line": line, "original_file": original, "original_line": line,
                    "severity": "error", "message": message, "flag": ""} for original, (hip, line, message) in errors.items()]
    return {"mode": "per_tu", "files": files, "diagnostics": diagnostics, "toolchain": toolchain_data(["hipTensor"])}


def test_nvcc_and_gxx_errors_are_read_at_tree_relative_paths() -> None:
    build = reference_build(REFERENCE, HIPIFY)
    assert build is not None
    assert {(e.file, e.line) for e in build.errors} == {("src/kern.cu", 4), ("src/io.cpp", 9)}
    assert build.compiled == {"src/kern.cu": False, "src/io.cpp": False, "src/table.cpp": True, "src/scale.cu": True}
    assert build.changed == {"src/kern.cu", "src/scale.cu"}  # table.cpp is as the project wrote it


def test_a_reference_that_built_nothing_is_no_evidence() -> None:
    assert reference_build({"ok": False, "summary": "no smoke command configured in project settings"}, {}) is None
    assert reference_build({"build": {"ok": False, "compiles": [], "error": "no CUDA or C++ translation unit found"}}, {}) is None


def test_a_build_fix_after_translation_counts_as_a_change_of_the_original() -> None:
    assert changed_files({"renames": {"a.cu": "a.hip"}, "build_fixes": [{"file": "a.hip"}, {"file": "b.cpp"}]}) == {"a.cu", "b.cpp"}


def test_the_same_line_failing_in_nvcc_keeps_project_code_and_says_so() -> None:
    data = _per_file({"src/kern.cu": ("src/kern.hip", 4, "use of undeclared identifier 'clampf'"),
                      "src/io.cpp": ("src/io.cpp", 9, "use of undeclared identifier 'parse_header'")})
    causes = compile_causes(data, reference=reference_build(REFERENCE, HIPIFY, "run #3"))
    assert {(c.file, c.kind, c.key) for c in causes} == {("src/kern.cu", "project_code", "also-fails-cuda"),
                                                         ("src/io.cpp", "project_code", "also-fails-cuda")}
    assert "also fail in the CUDA reference build (run #3)" in causes[0].reason


def test_code_nvcc_compiles_unchanged_is_not_project_code() -> None:
    data = _per_file({"src/table.cpp": ("src/table.cpp", 9, "type 'double' cannot be narrowed to 'int' in initializer list")})
    without = compile_causes(data)
    assert [(c.kind, c.key) for c in without] == [("project_code", "cxx-error")]  # the last resort, with no evidence
    [cause] = compile_causes(data, reference=reference_build(REFERENCE, HIPIFY))
    assert (cause.kind, cause.key) == ("translation", "cuda-build-passes")
    assert cause.reason.startswith("the CUDA build passes (this run) with these files unchanged by translation")


def test_code_nvcc_compiles_but_translation_changed_is_the_translations() -> None:
    data = _per_file({"src/scale.cu": ("src/scale.hip", 3, "no viable conversion from 'int' to 'dim3'")})
    [cause] = compile_causes(data, reference=reference_build(REFERENCE, HIPIFY))
    assert (cause.kind, cause.key) == ("translation", "cuda-build-passes:translated")
    assert "the error is in code translation changed" in cause.reason


def test_nvcc_failing_elsewhere_is_no_evidence_either_way() -> None:
    data = _per_file({"src/io.cpp": ("src/io.cpp", 30, "no matching function for call to 'open_stream'")})
    [cause] = compile_causes(data, reference=reference_build(REFERENCE, HIPIFY))
    assert (cause.kind, cause.key) == ("project_code", "cxx-error")


def test_evidence_weighs_only_on_project_code_never_on_an_earlier_cause() -> None:
    """The CUDA build of a file passing says nothing against a toolchain that lacks a library."""
    data = _per_file({"src/table.cpp": ("src/table.cpp", 2, "'hiptensor/hiptensor.h' file not found")})
    [cause] = compile_causes(data, reference=reference_build(REFERENCE, HIPIFY))
    assert cause.kind == "environment" and cause.key == "missing-library:hipTensor"


def test_a_project_build_weighs_each_failing_file() -> None:
    diagnostics = [{"tu": "", "file": "src/table.cpp", "original_file": "src/table.cpp", "line": 9, "original_line": 9,
                    "severity": "error", "flag": "", "message": "type 'double' cannot be narrowed to 'int' in initializer list"},
                   {"tu": "", "file": "src/io.cpp", "original_file": "src/io.cpp", "line": 9, "original_line": 9,
                    "severity": "error", "flag": "", "message": "use of undeclared identifier 'parse_header'"},
                   {"tu": "", "file": "src/io.cpp", "original_file": "src/io.cpp", "line": 30, "original_line": 30,
                    "severity": "error", "flag": "", "message": "no matching function for call to 'open_stream'"}]
    data = {"mode": "project", "diagnostics": diagnostics, "toolchain": toolchain_data([]),
            "project_build": {"ok": False, "error": "make exited 2"}}
    groups = group_causes(compile_causes(data, reference=reference_build(REFERENCE, HIPIFY)))
    assert [(g.kind, g.key, g.files) for g in groups] == [
        ("translation", "cuda-build-passes", ["src/table.cpp"]), ("project_code", "also-fails-cuda", ["src/io.cpp"])]


def test_a_header_counts_as_compiled_only_when_every_unit_compiled() -> None:
    passing = ReferenceBuild({"a.cu": True, "b.cu": True}, (), frozenset())
    assert weigh(passing, "", "include/util.h", 12) is not None
    partly = ReferenceBuild({"a.cu": True, "b.cu": False}, (), frozenset())
    assert weigh(partly, "", "include/util.h", 12) is None
    assert weigh(partly, "a.cu", "include/util.h", 12) is not None  # the unit that includes it compiled


TABLE_CPP = ("#include <cmath>\n\nstruct Cell {\n  int row;\n  int col;\n};\n\n"
             "Cell cell_at(double x, double y) {\n  Cell c{std::floor(y), std::floor(x)};\n  return c;\n}\n")
LOADER_CPP = "#include <cstdio>\nint load(const char* path) {\n  FILE* f = std::fopen(path, \"r\");\n  return read_header(f);\n}\n"


@requires_nvcc
def test_real_nvcc_and_hipcc_outputs_decide_between_the_port_and_the_project(tmp_path: Path) -> None:
    """g++ (under nvcc) only warns on a narrowing conversion in braces, clang rejects it; an undeclared
    call fails in both. Both files are plain C++ translation leaves alone."""
    require_root()
    sources = {"src/table.cpp": TABLE_CPP, "src/loader.cpp": LOADER_CPP}
    original = tmp_path / "original"
    for relative, text in sources.items():
        (original / relative).parent.mkdir(parents=True, exist_ok=True)
        (original / relative).write_text(text)
    built = build_cuda_reference(original, tmp_path / "reference", ProjectSettings(), Sandbox(None, tmp_path), "sm_90")
    assert [(r.target, r.ok) for r in built.compiles] == [("src/loader.cpp", False), ("src/table.cpp", True)]
    data, outputs = compile_data(tmp_path / "hip", sources)
    assert all(f["status"] == "failed" for f in data["files"]), outputs
    reference = reference_build({"build": built.to_dict()}, {"files": []})
    causes = {c.file: c for c in compile_causes(data, reference=reference)}
    assert (causes["src/table.cpp"].kind, causes["src/table.cpp"].key) == ("translation", "cuda-build-passes")
    assert (causes["src/loader.cpp"].kind, causes["src/loader.cpp"].key) == ("project_code", "also-fails-cuda")
