"""Library APIs: hip* wrappers by default, roc* libraries on request; CUB and NCCL."""
from __future__ import annotations

from translator import TranslateOptions, translate_source

LIBRARIES = """#include <cublas_v2.h>
#include <curand.h>
#include <cufft.h>
#include <cusparse.h>
#include <cusolverDn.h>
#include <cudnn.h>
void f(float* x) {
  cublasHandle_t b; cublasCreate(&b); cublasSscal(b, 4, x, x, 1);
  curandGenerator_t g; curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
  cufftHandle p; cufftPlan1d(&p, 8, CUFFT_C2C, 1);
  cusparseHandle_t s; cusparseCreate(&s);
  cusolverDnHandle_t d; cusolverDnCreate(&d);
  cudnnHandle_t n; cudnnCreate(&n);
}
"""


def test_it_maps_libraries_to_hip_wrappers(hip52: TranslateOptions) -> None:
    result = translate_source(LIBRARIES, "", hip52)
    assert result.text == """#include <hip/hip_runtime.h>
#include <hipblas.h>
#include <hiprand/hiprand.h>
#include <hipfft/hipfft.h>
#include <hipsparse.h>
#include <hipsolver.h>
#include <hipDNN.h>
void f(float* x) {
  hipblasHandle_t b; hipblasCreate(&b); hipblasSscal(b, 4, x, x, 1);
  hiprandGenerator_t g; hiprandCreateGenerator(&g, HIPRAND_RNG_PSEUDO_DEFAULT);
  hipfftHandle p; hipfftPlan1d(&p, 8, HIPFFT_C2C, 1);
  hipsparseHandle_t s; hipsparseCreate(&s);
  hipsolverHandle_t d; hipsolverDnCreate(&d);
  hipdnnHandle_t n; hipdnnCreate(&n);
}
"""
    assert dict(result.account.converted) == {"library": 15, "header": 6}


def test_rocm6_targets_get_library_headers_from_their_folders() -> None:
    text = translate_source(LIBRARIES, "", TranslateOptions(target_hip_version="6.4")).text
    assert text.startswith("#include <hip/hip_runtime.h>\n#include <hipblas/hipblas.h>\n#include <hiprand/hiprand.h>\n"
                           "#include <hipfft/hipfft.h>\n#include <hipsparse/hipsparse.h>\n#include <hipsolver/hipsolver.h>\n")
    flat = translate_source(LIBRARIES, "", TranslateOptions(target_hip_version="6.4", library_header_folders=False))
    assert "#include <hipblas.h>\n" in flat.text


def test_it_targets_roc_libraries_and_miopen_when_asked() -> None:
    options = TranslateOptions(target_hip_version="5.2", roc_libraries=True)
    text = translate_source(LIBRARIES, "", options).text
    assert "#include <rocblas.h>" in text and "#include <miopen/miopen.h>" in text
    assert "rocblas_handle b; rocblas_create_handle(&b); rocblas_sscal(b, 4, x, x, 1);" in text
    assert "rocrand_generator g; rocrand_create_generator(&g, ROCRAND_RNG_PSEUDO_DEFAULT);" in text
    assert "rocsparse_handle s; rocsparse_create_handle(&s);" in text
    assert "miopenHandle_t n; miopenCreate(&n);" in text
    assert "hipfftHandle p; hipfftPlan1d(&p, 8, HIPFFT_C2C, 1);" in text  # no roc* name: hip* kept


def test_it_moves_cub_to_hipcub_and_nccl_to_rccl(hip52: TranslateOptions) -> None:
    source = """#include <cub/cub.cuh>
#include <nccl.h>
void f(float* in, float* out, int n, ncclComm_t comm, cudaStream_t s) {
  size_t bytes = 0; int cubic = 3; // cub::DeviceScan in a comment stays
  cub::DeviceReduce::Sum(nullptr, bytes, in, out, n);
  ::cub :: DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n);
  ncclAllReduce(in, out, n, ncclFloat, ncclSum, comm, s);
}
"""
    result = translate_source(source, "", hip52)
    assert result.text == """#include <hip/hip_runtime.h>
#include <hipcub/hipcub.hpp>
#include <rccl/rccl.h>
void f(float* in, float* out, int n, ncclComm_t comm, hipStream_t s) {
  size_t bytes = 0; int cubic = 3; // cub::DeviceScan in a comment stays
  hipcub::DeviceReduce::Sum(nullptr, bytes, in, out, n);
  ::hipcub :: DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n);
  ncclAllReduce(in, out, n, ncclFloat, ncclSum, comm, s);
}
"""
    assert dict(result.account.converted) == {"library": 2, "type": 1, "header": 2}
