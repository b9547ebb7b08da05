"""Small real programs using each ROCm library compile and link in the default toolchain root."""
from __future__ import annotations

from pathlib import Path

from worker.project_settings import ProjectSettings
from worker.toolchain.compile import compile_tree
from worker.toolchain.link import link_objects

PROGRAMS = {
    "blas.hip": """#include <hipblas/hipblas.h>
int main() { hipblasHandle_t h; if (hipblasCreate(&h) != HIPBLAS_STATUS_SUCCESS) return 1;
  float a = 1, x[2] = {1, 2}, y[2] = {0, 0};
  hipblasSaxpy(h, 2, &a, x, 1, y, 1); return hipblasDestroy(h) == HIPBLAS_STATUS_SUCCESS ? 0 : 1; }
""",
    "blaslt.hip": """#include <hipblaslt/hipblaslt.h>
int main() { hipblasLtHandle_t h; return hipblasLtCreate(&h) == HIPBLAS_STATUS_SUCCESS ? 0 : 1; }
""",
    "solver.hip": """#include <hipsolver/hipsolver.h>
int main() { hipsolverHandle_t h; return hipsolverCreate(&h) == HIPSOLVER_STATUS_SUCCESS ? 0 : 1; }
""",
    "fft.hip": """#include <hipfft/hipfft.h>
int main() { hipfftHandle plan; return hipfftPlan1d(&plan, 64, HIPFFT_C2C, 1) == HIPFFT_SUCCESS ? 0 : 1; }
""",
    "sparse.hip": """#include <hipsparse/hipsparse.h>
int main() { hipsparseHandle_t h; return hipsparseCreate(&h) == HIPSPARSE_STATUS_SUCCESS ? 0 : 1; }
""",
    "rand.hip": """#include <hiprand/hiprand.h>
int main() { hiprandGenerator_t g;
  return hiprandCreateGenerator(&g, HIPRAND_RNG_PSEUDO_DEFAULT) == HIPRAND_STATUS_SUCCESS ? 0 : 1; }
""",
    "cub.hip": """#include <hip/hip_runtime.h>
#include <hipcub/hipcub.hpp>
int main() { size_t bytes = 0; int* in = nullptr; int* out = nullptr;
  return hipcub::DeviceReduce::Sum(nullptr, bytes, in, out, 16) == hipSuccess ? 0 : 1; }
""",
    "thrust.hip": """#include <thrust/device_vector.h>
#include <thrust/reduce.h>
int main() { thrust::device_vector<int> v(16, 1); return thrust::reduce(v.begin(), v.end()) == 16 ? 0 : 1; }
""",
    "miopen.hip": """#include <miopen/miopen.h>
int main() { miopenHandle_t h; return miopenCreate(&h) == miopenStatusSuccess ? 0 : 1; }
""",
}


def test_programs_using_every_rocm_library_compile_and_link(tmp_path: Path) -> None:
    for name, text in PROGRAMS.items():
        program = tmp_path / "hip" / name.removesuffix(".hip")
        program.mkdir(parents=True)
        (program / name).write_text(text)
    settings = ProjectSettings(offload_archs=("gfx90a",))  # not about targets (test_toolchain_targets.py is)
    report = compile_tree(tmp_path / "hip", tmp_path / "build", settings, tmp_path / "cache")
    assert report.ok, {f.path: f.output[-800:] for f in report.files if f.status != "passed"}
    for result in report.files:
        objects = {result.path: Path(result.object_path)}
        linked = link_objects(objects, tmp_path / "hip", tmp_path / "build", settings)
        assert linked.ok, (result.path, [t.output[-800:] for t in linked.targets])
        [target] = linked.targets
        assert Path(target.output_path).is_file()
    libraries = {f.path.split("/")[0]: f for f in report.files}
    assert set(libraries) == {name.removesuffix(".hip") for name in PROGRAMS}
