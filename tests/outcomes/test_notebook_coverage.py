"""Each notebook entry written for failures seen on real code ranks first on the real message.

Every case runs the default ROCm root's real tools (hipcc, the linker, CMake, make) on a small source
in the style of the projects where the failure was seen; the output goes through the same path a
failed stage's log takes (its own error lines, entries of the stage) before matching.
"""
from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from migrator.lib.signatures.failure_lines import own_error_lines
from migrator.lib.signatures.matcher import Matcher, SignatureSpec, compile_signatures
from migrator.lib.signatures.seed import NOTEBOOK_SLUGS, REAL_FAILURE_SLUGS, SeedEntry, load_seed_entries
from tests.outcomes.real_toolchain import run_in_root

RT = "#include <hip/hip_runtime.h>\n"
HIPCC = ["hipcc", "--offload-arch=gfx90a"]


def compile_only(name: str, source: str, *flags: str) -> tuple[dict[str, str], list[str]]:
    return {name: source}, [*HIPCC, *flags, "-c", name, "-o", "/tmp/out.o"]


def cmake(lists: str, **files: str) -> tuple[dict[str, str], list[str]]:
    return {"CMakeLists.txt": lists, **files}, ["cmake", "-S", ".", "-B", "/tmp/build"]


def shell(script: str, **files: str) -> tuple[dict[str, str], list[str]]:
    return dict(files), ["sh", "-c", script]


CASES: list[tuple[str, str, tuple[dict[str, str], list[str]]]] = [
    ("rocm-library-not-in-toolchain", "compile", compile_only("contract.hip", RT + "#include <hiptensor/hiptensor.h>\n")),
    ("rocm-library-not-in-toolchain", "link", shell("hipcc --offload-arch=gfx90a k.hip -lhiptensor -o /tmp/app",
                                                      **{"k.hip": RT + "int main() { return 0; }\n"})),
    ("rocm6-moved-library-header", "compile", compile_only("gemm.hip", RT + "#include <hipblas.h>\n")),
    ("rocm-library-not-linked", "link", shell("hipcc --offload-arch=gfx90a blas.hip -o /tmp/app", **{
        "blas.hip": RT + "#include <hipblas/hipblas.h>\nint main() { hipblasHandle_t h; return hipblasCreate(&h); }\n"})),
    ("cuda-gl-interop", "compile", compile_only("viewer.hip", RT + "#include <cuda_gl_interop.h>\n")),
    ("cuda-egl-interop", "compile", compile_only("frames.hip", RT + "#include <cudaEGL.h>\n")),
    ("nvtx-to-roctx", "compile", compile_only("trace.hip", RT + "#include <nvtx3/nvToolsExt.h>\n")),
    ("nvsci-nvmedia", "compile", compile_only("buf.hip", RT + "#include <nvscibuf.h>\n")),
    ("cooperative-groups-reduce", "compile", compile_only("cg.hip", RT + "#include <cooperative_groups/reduce.h>\n")),
    ("pytorch-extension-headers", "compile", compile_only("extensions/muladd.cpp", "#include <Python.h>\n")),
    ("pytorch-extension-headers", "compile", compile_only("ops.hip", RT + "#include <torch/extension.h>\n")),
    ("texture-image-unsupported", "compile", (
        {"tex.hip": RT + "__global__ void k(hipTextureObject_t t, float4* o) { o[0] = tex2Dgather<float4>(t, 0.5f, 0.5f, 0); }\n"},
        ["hipcc", "--offload-arch=gfx942", "-c", "tex.hip", "-o", "/tmp/out.o"])),
    ("project-copies-cuda-types", "compile", compile_only("stubs.hip", RT + "enum hipMemcpyKind { hipMemcpyHostToHost = 0 };\n")),
    ("windows-only-headers", "compile", compile_only("fs.hip", RT + "#include <direct.h>\n")),
    ("windows-only-headers", "compile", compile_only("win.hip", RT + "#include <windows.h>\n")),
    ("nvcc-flag-fatbin", "compile", compile_only("k.hip", RT + "__global__ void k() {}\n", "-fatbin")),
    ("nvcc-flag-threads", "compile", compile_only("k.hip", RT + "__global__ void k() {}\n", "-t=0")),
    ("cuda-gpu-arch-for-hip", "compile", compile_only("k.hip", RT + "__global__ void k() {}\n", "--cuda-gpu-arch=sm_20")),
    ("nvcc-only-flags", "compile", compile_only("k.hip", RT + "__global__ void k() {}\n", "--expt-relaxed-constexpr")),
    ("nvcc-only-flags", "compile", compile_only("k.hip", RT + "__global__ void k() {}\n", "-rdc=true")),
    ("cmake-cannot-determine-link-language", "compile", cmake(
        "cmake_minimum_required(VERSION 3.21)\nproject(demo LANGUAGES CXX HIP)\nadd_executable(demo main.cu)\n",
        **{"main.cu": "int main() { return 0; }\n"})),
    ("warp-sync-mask-64bit", "compile", compile_only("warp.hip", "#define HIP_ENABLE_WARP_SYNC_BUILTINS\n" + RT +
                                                    "__global__ void r(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n")),
    ("hip-api-missing-in-target", "compile", compile_only("graph.hip", RT + "void f() { hipGraphInstantiateWithParamsExt(0); }\n")),
    ("cuda-driver-api-left", "compile", compile_only("ctx.hip", RT + "void f() { CUcontext c; cuCtxCreate(&c, 0, 0); }\n")),
    ("cuda-library-names-left", "compile", compile_only("blas.hip", RT + "void f() { cublasHandle_t h; cublasCreate(&h); }\n")),
    ("thrust-cuda-backend", "compile", compile_only("sort.hip", RT + "#include <thrust/system/cuda/execution_policy.h>\n")),
    ("cub-to-hipcub", "compile", compile_only("scan.hip", RT + "#include <cub/cub.cuh>\n")),
    ("wmma-to-rocwmma", "compile", compile_only("mma.hip", RT + "#include <mma.h>\n")),
    ("wmma-to-rocwmma", "compile", compile_only("tc.hip", RT + "__global__ void k() { nvcuda::wmma::fragment<int, 16, 16, 16, float> f; }\n")),
    ("libcudacxx-headers", "compile", compile_only("atom.hip", RT + "#include <cuda/std/atomic>\n")),
    ("cutlass-no-hip", "compile", compile_only("gemm.hip", RT + "#include <cutlass/gemm/device/gemm.h>\n")),
    ("inline-ptx-asm", "compile", compile_only("lane.hip", RT + '__global__ void k(unsigned* o) { unsigned l; asm volatile("mov.u32 %0, %%laneid;" : "=r"(l)); o[0] = l; }\n')),
    ("nv-bfloat16-types", "compile", compile_only("bf.hip", RT + "__global__ void k(__nv_bfloat16* x) {}\n")),
    ("dynamic-parallelism", "compile", compile_only("dp.hip", RT + "__global__ void child() {}\n__global__ void parent() { child<<<1, 1>>>(); }\n")),
    ("requires-nvcc-guard", "compile", compile_only("guard.hip", RT + '#ifndef __CUDACC__\n#error "This file must be compiled with nvcc"\n#endif\n')),
    ("device-intrinsics-missing", "compile", compile_only("sleep.hip", RT + "__global__ void k() { __nanosleep(100); }\n")),
    ("makefile-calls-nvcc", "compile", shell("make", Makefile="all:\n\tnvcc -o app a.cu\n")),
    ("multiple-definition-in-header", "link", shell(
        "hipcc --offload-arch=gfx90a -c a.hip -o /tmp/a.o && hipcc --offload-arch=gfx90a -c b.hip -o /tmp/b.o && "
        "hipcc --offload-arch=gfx90a /tmp/a.o /tmp/b.o -o /tmp/app",
        **{"h.h": "int helper(int x) { return x + 1; }\n", "a.hip": RT + '#include "h.h"\nint main() { return helper(1); }\n',
           "b.hip": RT + '#include "h.h"\nint other() { return helper(2); }\n'})),
    ("extern-device-symbol-needs-rdc", "link", shell("hipcc --offload-arch=gfx90a a.hip b.hip -o /tmp/app", **{
        "a.hip": RT + "extern __device__ int g;\n__global__ void k(int* o) { o[0] = g; }\nint main() { return 0; }\n",
        "b.hip": RT + "__device__ int g = 3;\n"})),
    ("shared-memory-over-limit", "compile", compile_only("tile.hip", RT + "__global__ void k(float* o) { __shared__ float s[20000]; s[threadIdx.x] = 1; __syncthreads(); o[0] = s[5]; }\n")),
    ("grid-constant-attribute", "compile", compile_only("gc.hip", RT + "__global__ void k(const __grid_constant__ int x) {}\n")),
    ("hip-code-in-cxx-file", "compile", shell("c++ -c kernels.cpp -o /tmp/k.o", **{"kernels.cpp": "__global__ void k(float* x) { x[0] = 1; }\n"})),
    ("kernel-template-in-launch-macro", "compile", compile_only("launch.hip", RT + "template <typename A, typename B> __global__ void k(A a, B b) {}\n"
                                                                "void f() { hipLaunchKernelGGL(k<int, float>, dim3(1), dim3(1), 0, 0, 1, 2.0f); }\n")),
    ("rocm-cmake-package-missing", "compile", cmake("cmake_minimum_required(VERSION 3.21)\nproject(d LANGUAGES CXX)\nfind_package(hiptensor REQUIRED)\n")),
    ("hip-compiler-check-failed", "compile", cmake("cmake_minimum_required(VERSION 3.21)\nset(CMAKE_HIP_ARCHITECTURES sm_80)\nproject(d LANGUAGES HIP)\n")),
]


@pytest.fixture(scope="module")
def seed() -> list[SeedEntry]:
    return load_seed_entries()


@pytest.fixture(scope="module")
def matcher(seed: list[SeedEntry]) -> Matcher:
    return compile_signatures([SignatureSpec(i, i * 100 + n, s.kind, s.pattern)
                               for i, entry in enumerate(seed) for n, s in enumerate(entry.signatures)])


def ranked_for_stage(matcher: Matcher, seed: list[SeedEntry], output: str, stage: str) -> list[str]:
    """What a failed stage with this log shows: matches on its own error lines, for its stage."""
    lines = own_error_lines(output)
    return [seed[m.entry_id].slug for m in matcher.match("\n".join(lines)) if stage in seed[m.entry_id].stages]


def test_the_notebook_has_sixty_entries_and_every_new_one_is_tested() -> None:
    assert len(NOTEBOOK_SLUGS) >= 60
    tested = {slug for slug, _, _ in CASES} | {"cooperative-groups-header-order", "no-translation-units"}
    assert tested == set(REAL_FAILURE_SLUGS)


@pytest.mark.parametrize(("slug", "stage", "case"), CASES, ids=[f"{s}-{i}" for i, (s, _, _) in enumerate(CASES)])
def test_the_real_message_ranks_its_entry_first(matcher: Matcher, seed: list[SeedEntry], tmp_path: Path,
                                                slug: str, stage: str, case: tuple[dict[str, str], list[str]]) -> None:
    files, argv = case
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    code, output = run_in_root(tmp_path, argv)
    assert code != 0, output
    ranked = ranked_for_stage(matcher, seed, output, stage)
    assert ranked[:1] == [slug], (ranked, own_error_lines(output))


def test_the_compile_stage_message_for_a_tree_without_sources_matches(matcher: Matcher, seed: list[SeedEntry]) -> None:
    from worker.stages import compile as compile_stage

    message = "No translation units found in the translated tree."
    assert message in inspect.getsource(compile_stage)  # the compile stage's own words
    assert ranked_for_stage(matcher, seed, f"[migrator] compile failed\nerror: {message}", "compile")[:1] == ["no-translation-units"]


def test_the_hip_5_cooperative_groups_order_message_matches(matcher: Matcher, seed: list[SeedEntry]) -> None:
    # HIP 6.4's header is self-contained: the message comes from HIP 5.2 (see the notebook knowledge notes).
    line = "reduce.hip:14:22: error: use of undeclared identifier 'hipBlockDim_z'"
    assert ranked_for_stage(matcher, seed, line, "compile")[:1] == ["cooperative-groups-header-order"]
