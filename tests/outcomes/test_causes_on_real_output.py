"""Compile failures classified by cause, on real hipcc output from the default ROCm root."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.outcomes.real_toolchain import compile_data, require_root
from worker.toolchain.causes import compile_causes, group_causes, link_causes, summary_line

RUNTIME = "#include <hip/hip_runtime.h>\n"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], dict[str, str]]:
    require_root()
    workspace = tmp_path_factory.mktemp("causes")
    sources = {
        "tensor_contract.hip": RUNTIME + "#include <hiptensor/hiptensor.h>\nint f() { return 0; }\n",
        "tensor_reduce.hip": RUNTIME + "#include <hiptensor/hiptensor.h>\nint g() { return 1; }\n",
        "left.hip": RUNTIME + "__global__ void k(float* x) { x[0] = 1; }\nint h(hipGraphNodeType t) { return t == cudaGraphNodeTypeConditional ? cudaErrorLossyQuery : 0; }\n",
        "gemm.hip": RUNTIME + "#include <hipblas.h>\n",
        "interop.hip": RUNTIME + "#include <cuda_gl_interop.h>\n",
        "ext/muladd.cpp": "#include <Python.h>\n",
        "util_user.hip": RUNTIME + '#include "util/helpers.h"\n',
        "plain.hip": RUNTIME + "int main() { int x = \"text\"; return x; }\n",
        "warp.hip": RUNTIME + "__global__ void r(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n",
    }
    return compile_data(workspace, sources, include_dirs=("src/include",))


def test_each_failure_gets_the_cause_whose_fault_it_is(real: tuple[dict[str, object], dict[str, str]]) -> None:
    data, outputs = real
    assert "fatal error: 'hiptensor/hiptensor.h' file not found" in outputs["tensor_contract.hip"]
    causes = {c.file: c for c in compile_causes(data)}
    assert causes["tensor_contract.hip"].kind == "environment"
    assert causes["tensor_contract.hip"].reason.startswith(f"hipTensor is not in toolchain {require_root().name}")
    assert causes["left.hip"].kind == "translation" and causes["left.hip"].key == "cuda-names"
    assert causes["gemm.hip"].kind == "translation" and causes["gemm.hip"].reason == "<hipblas.h> is <hipblas/hipblas.h> in this ROCm version"
    assert causes["interop.hip"].kind == "translation" and "cuda_gl_interop.h" in causes["interop.hip"].reason
    assert causes["ext/muladd.cpp"].kind == "build_configuration"
    assert causes["util_user.hip"].kind == "migrator" and "src/include" in causes["util_user.hip"].reason
    assert causes["plain.hip"].kind == "project_code"
    # HIP before 7.0 hides the warp-sync builtins (undeclared); 7.x has them and refuses the 32-bit mask
    warp = "warp-sync" if int(require_root().short_version.split(".")[0]) < 7 else "lane-mask"
    assert causes["warp.hip"].kind == "translation" and causes["warp.hip"].key == warp


def test_the_include_dirs_a_user_set_are_not_blamed_on_migrator(real: tuple[dict[str, object], dict[str, str]]) -> None:
    data, _ = real
    causes = {c.file: c for c in compile_causes(data, user_include_dirs=("src/include",))}
    assert causes["util_user.hip"].kind == "build_configuration"


def test_a_nvcc_only_flag_is_build_configuration(tmp_path: Path) -> None:
    data, outputs = compile_data(tmp_path, {"k.hip": RUNTIME + "__global__ void k() {}\n"}, flags=("-fatbin",))
    assert "unknown argument: '-fatbin'" in outputs["k.hip"]
    (cause,) = compile_causes(data)
    assert cause.kind == "build_configuration" and cause.key == "flag:-fatbin"


def test_the_summary_puts_the_largest_environment_group_first_with_grammar(
    real: tuple[dict[str, object], dict[str, str]]
) -> None:
    data, _ = real
    groups = group_causes(compile_causes(data))
    line = summary_line(groups)
    assert line.startswith(f"2 files fail because hipTensor is not in toolchain {require_root().name}")
    assert "1 file on CUDA names left untranslated: cudaGraphNodeTypeConditional, cudaErrorLossyQuery (translation)" in line
    assert "1 files" not in line
    assert [g.kind for g in groups][0] == "environment" and groups[-1].kind == "project_code"


def test_link_problems_are_classified_too() -> None:
    problems = {"problems": [
        {"kind": "missing_library", "library": "cublas", "replacement": "hipblas", "message": "ld.lld: error: unable to find library -lcublas"},
        {"kind": "undefined_reference", "symbol": "cudaMemcpy", "object": "main.o", "message": "undefined symbol: cudaMemcpy"},
        {"kind": "undefined_reference", "symbol": "solve(int)", "object": "main.o", "message": "undefined symbol: solve(int)"},
    ]}
    kinds = [(c.kind, c.key) for c in link_causes(problems)]
    assert kinds == [("translation", "cuda-library:cublas"), ("translation", "cuda-names"), ("project_code", "undefined:solve")]
