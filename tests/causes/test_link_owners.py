"""Undefined references explained from the sources that define the symbol and the build's data."""
from __future__ import annotations

from pathlib import Path

from worker.toolchain.causes import compile_causes, group_causes, link_causes
from worker.toolchain.link_owners import explain_undefined, find_definitions
from worker.toolchain.log_causes import toolchain_data

SOURCES = {
    "src/check.hip": "#include <hip/hip_runtime.h>\nvoid cudaCheck(hipError_t e,\n               const char* what)\n{\n}\n",
    "src/main.hip": "void cudaCheck(hipError_t e, const char* what);\nint main() {\n  if (ok(1)) { cudaCheck(x, \"a\"); }\n"
                    "  return run(2);\n}\n",
    "include/util.h": "inline int ok(int x) { return x; }\n",
}


def _tree(tmp_path: Path) -> Path:
    for relative, text in SOURCES.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    return tmp_path


def test_definitions_are_found_and_declarations_and_calls_are_not(tmp_path: Path) -> None:
    found = find_definitions(_tree(tmp_path), ["cudaCheck", "ok", "run", "main"])
    assert found == {"cudaCheck": ["src/check.hip"], "ok": ["include/util.h"], "main": ["src/main.hip"]}


def _installed(name: str) -> bool | None:
    return name != "RCCL"


UNITS = [{"name": "app", "build_file": "CMakeLists.txt", "sources": ["src/main.hip", "src/check.hip"]}]


def test_each_way_a_defined_symbol_goes_missing() -> None:
    unlisted = explain_undefined("cudaCheck", ["src/check.hip"], {"build_units": [UNITS[0] | {"sources": ["src/main.hip"]}]},
                                 _installed)
    assert unlisted is not None and unlisted.kind == "build_configuration"
    assert unlisted.reason == ("cudaCheck is defined in src/check.hip, which is not compiled: "
                               "CMakeLists.txt (target app) does not list it")
    listed = explain_undefined("cudaCheck", ["src/check.hip"], {"build_units": UNITS}, _installed)
    assert listed is not None and "listed in CMakeLists.txt (target app) but not compiled" in listed.reason
    compiled = {"build_units": UNITS, "files": [{"path": "src/check.hip", "status": "passed"}]}
    linked = explain_undefined("cudaCheck", ["src/check.hip"], compiled, _installed)
    assert linked is not None and "compiled, but its object is not linked" in linked.reason
    failed = {"build_units": UNITS, "files": [{"path": "src/check.hip", "status": "failed"}]}
    assert explain_undefined("cudaCheck", ["src/check.hip"], failed, _installed) is None


def test_library_names_no_source_defines() -> None:
    rccl = explain_undefined("ncclAllReduce", [], {}, _installed)
    assert rccl is not None and (rccl.kind, rccl.key) == ("environment", "missing-library:RCCL")
    hipblas = explain_undefined("hipblasSgemm", [], {}, _installed)
    assert hipblas is not None and (hipblas.kind, hipblas.key) == ("build_configuration", "not-linked:hipblas")
    assert explain_undefined("compute_sum", [], {}, _installed) is None


def test_a_projects_own_cuda_named_function_is_not_cuda_names_left() -> None:
    problem = {"kind": "undefined_reference", "symbol": "cudaCheck(hipError_t, char const*)", "object": "main.o",
               "message": "main.hip:(.text+0x2e): undefined reference to `cudaCheck(hipError_t, char const*)'"}
    [cause] = link_causes({"problems": [problem]}, toolchain_data(()), {})
    assert (cause.kind, cause.key) == ("project_code", "undefined:cudaCheck")
    [cause] = link_causes({"problems": [problem | {"defined_in": ["src/check.hip"]}]}, toolchain_data(()),
                          {"build_units": [UNITS[0] | {"sources": ["src/main.hip"]}]})
    assert (cause.kind, cause.key) == ("build_configuration", "unlisted-source:src/check.hip")


def test_a_project_build_groups_its_failing_files_by_cause() -> None:
    def error(file: str, message: str, flag: str = "") -> dict[str, object]:
        return {"tu": "", "file": file, "line": 3, "severity": "error", "message": message, "original_file": file,
                "original_line": 3, "flag": flag}
    data = {"mode": "project", "toolchain": toolchain_data(("RCCL",)), "project_build": {"ok": False, "error": ""},
            "diagnostics": [error("a.hip", "use of undeclared identifier 'cudaMemcpyAsync'"),
                            error("b.hip", "'cudaStream_t' does not name a type"),
                            error("b.hip", "expected ';' after expression"),
                            error("c.hip", "no matching function for call to 'clamp'"),
                            error("d.hip", "'rccl/rccl.h' file not found")]}
    groups = group_causes(compile_causes(data))
    assert [(g.kind, g.files) for g in groups] == [
        ("environment", ["d.hip"]), ("translation", ["a.hip", "b.hip"]), ("project_code", ["c.hip"])]


def test_a_link_failure_after_a_passed_compile_is_explained_from_the_compile_data() -> None:
    from migrator.projects.causes import causes_from_data

    problem = {"kind": "undefined_reference", "symbol": "cudaCheck(hipError_t)", "object": "src/main.hip",
               "message": "undefined reference to `cudaCheck(hipError_t)'", "defined_in": ["src/check.hip"]}
    built = {"toolchain": toolchain_data(()), "files": [{"path": "src/main.hip", "status": "passed"}],
             "build_units": [UNITS[0] | {"sources": ["src/main.hip"]}]}
    causes = causes_from_data({}, {"problems": [problem]}, (), built)
    assert causes.summary == ("1 file fails because cudaCheck is defined in src/check.hip, which is not compiled: "
                              "CMakeLists.txt (target app) does not list it (build configuration)")
