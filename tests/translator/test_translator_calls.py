"""Argument rewrites of translated calls (HIPIFY's FuncArgCasts and FuncOverloads)."""
from __future__ import annotations

from translator import TranslateOptions, translate_source
from translator.calls import Cast, edit_arguments
from translator.literals import matching_paren, split_arguments


def test_arguments_split_at_top_level_commas_only() -> None:
    inside = ' f(a, b), "x, y", \'\\\'\', m[1, 2] /* c, d */, {3, 4}'
    assert [a.strip() for a in split_arguments(inside)] == ["f(a, b)", '"x, y"', "'\\''", "m[1, 2] /* c, d */",
                                                             "{3, 4}"]
    assert split_arguments("  ") == []
    assert matching_paren('g(")", (1))', 1) == 10


def test_edits_keep_layout_and_follow_original_positions() -> None:
    arguments = ["h", " a", "\n      b", " c"]
    casts = (Cast(arg=1, kind="move", to=3), Cast(arg=2, kind="remove"), Cast(arg=9, kind="add_const", value="nullptr"),
             Cast(arg=0, kind="reinterpret_cast"))
    assert edit_arguments(arguments, casts) == "reinterpret_cast<const void*>(h), a, c, nullptr"
    assert edit_arguments(["x", " y"], (Cast(arg=1, kind="replace_const", value="Z"),)) == "x, Z"


def test_calls_are_rewritten_as_hipify_clang_writes_them() -> None:
    source = """__constant__ float coef[4];
__global__ void k() {}
void f(CUdeviceptr* p, int* size, CUfunction fn, float* host) {
  cudaMemcpyToSymbol(coef, host, sizeof(coef));
  CHECK(cudaMemcpyFromSymbol(host,
                             coef, sizeof(coef)));
  cudaLaunchCooperativeKernel(k, 1, 1, nullptr, 0, 0);
  cuOccupancyMaxPotentialBlockSize(size, size + 1, fn, nullptr, 0, 256);
  cudaFuncSetCacheConfig  (k, cudaFuncCachePreferShared);
  auto pointer = cudaFuncSetCacheConfig;
}
"""
    text = translate_source(source, "f.cu", TranslateOptions()).text
    assert "hipMemcpyToSymbol(HIP_SYMBOL(coef), host, sizeof(coef));" in text
    assert "CHECK(hipMemcpyFromSymbol(host,\n                             HIP_SYMBOL(coef), sizeof(coef)));" in text
    assert "hipLaunchCooperativeKernel(reinterpret_cast<const void*>(k), 1, 1, nullptr, 0, 0);" in text
    assert "hipModuleOccupancyMaxPotentialBlockSize(size, size + 1, fn, 0, 256);" in text
    assert "hipFuncSetCacheConfig  (reinterpret_cast<const void*>(k), hipFuncCachePreferShared);" in text
    assert "auto pointer = hipFuncSetCacheConfig;" in text and "\x01" not in text


def test_roc_rewrites_apply_only_with_roc() -> None:
    source = "void f() { cusparseSpSM_solve(h, a, b, al, A, B, C, t, alg, d); }\n"
    hip = translate_source(source, "f.cpp", TranslateOptions()).text
    assert "hipsparseSpSM_solve(h, a, b, al, A, B, C, t, alg, d, nullptr);" in hip
    roc = translate_source(source, "f.cpp", TranslateOptions(roc_libraries=True)).text
    assert "rocsparse_spsm(h, a, b, al, A, B, C, t, alg, rocsparse_spsm_stage_compute, nullptr, nullptr);" in roc
