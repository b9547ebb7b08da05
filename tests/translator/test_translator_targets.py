"""What decides whether a HIP name may be emitted: target version, toolchain declarations, --roc/--miopen."""
from __future__ import annotations

from translator import TranslateOptions, translate_source
from translator.mapping import load_default

NEWER_NAMES = """void f(CUlimit* l, float* out, cublasLtHandle_t lt, curandGenerator_t g, unsigned long long* v) {
  *l = CU_LIMIT_STACK_SIZE;
  *out = CUDART_INF_F;
  curandGenerateLongLong(g, v, 4);
  cudaDataType_t t = CUDA_R_32F;
}
"""


def test_the_default_target_is_the_toolchains_hip_6_4() -> None:
    result = translate_source(NEWER_NAMES, "f.cpp")
    assert result.account.unconverted == []
    for name in ("hipLimitStackSize", "HIP_INF_F", "hipblasLtHandle_t", "hiprandGenerateLongLong",
                 "hipDataType t = HIP_R_32F"):
        assert name in result.text


def test_an_older_target_reports_names_hip_added_later() -> None:
    result = translate_source(NEWER_NAMES, "f.cpp", TranslateOptions(target_hip_version="5.2"))
    reasons = {f["name"]: f["reason"] for f in result.account.unconverted}
    assert reasons["curandGenerateLongLong"].startswith("newer-than-target (HIP 5.")
    assert "cudaDataType_t" not in reasons and "CUDA_R_32F" not in reasons  # HIP 5.2's headers declare them
    assert "hipDataType t = HIP_R_32F" in result.text


def test_declared_names_decide_over_the_version_table() -> None:
    declared = frozenset({"hiprandGenerateLongLong", "hipDataType", "HIP_R_32F", "hipblasLtHandle_t",
                          "hipLimitStackSize", "hipLimit_t", "hiprandGenerator_t"})
    options = TranslateOptions(target_hip_version="5.2", declared_names=declared)
    result = translate_source(NEWER_NAMES, "f.cpp", options)
    assert "hiprandGenerateLongLong(g, v, 4);" in result.text  # gated by the table, declared by the toolchain
    assert [(f["name"], f["reason"]) for f in result.account.unconverted] == [
        ("CUDART_INF_F", "not-declared-by-toolchain")]
    assert "*out = CUDART_INF_F;" in result.text


def test_experimental_names_need_the_experimental_switch() -> None:
    source = "void f(CUgraph g, CUgraphNode n) { cuGraphAddMemFreeNode(&n, g, nullptr, 0, 0); }\n"
    mapping = load_default().lookup("cuGraphAddMemFreeNode")
    assert mapping is not None and mapping.hip_experimental
    plain = translate_source(source, "f.cpp")
    assert [f["reason"] for f in plain.account.unconverted] == [f"experimental-in-hip (HIP {mapping.hip_experimental})"]
    assert "hipDrvGraphAddMemFreeNode(&n" in translate_source(source, "f.cpp", TranslateOptions(experimental=True)).text


def test_roc_and_miopen_pick_rocm_library_names_like_hipify_clang() -> None:
    source = "cuDoubleComplex z; cudaStream_t s; cudnnHandle_t h; cublasHandle_t b;\n"
    roc = translate_source(source, "f.cpp", TranslateOptions(roc_libraries=True)).text
    assert roc.endswith("rocblas_double_complex z; hipStream_t s; miopenHandle_t h; rocblas_handle b;\n")
    miopen = translate_source(source, "f.cpp", TranslateOptions(miopen=True)).text
    assert "miopenAcceleratorQueue_t s;" in miopen


def test_use_hip_data_types_keeps_hip_data_type_under_roc() -> None:
    source = "cudaDataType_t t = CUDA_R_32F;\n"
    assert translate_source(source, "f.cpp", TranslateOptions(roc_libraries=True)).text.endswith(
        "rocblas_datatype_ t = rocblas_datatype_f32_r;\n")
    options = TranslateOptions(roc_libraries=True, use_hip_data_types=True)
    assert translate_source(source, "f.cpp", options).text.endswith("hipDataType t = HIP_R_32F;\n")
