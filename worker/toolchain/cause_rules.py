"""Cause rules for the messages beyond one compiler's wording: CMake, make, Python, pip, our own
limits, g++ and nvcc wording, and the CUDA names and headers the translator knows.

Each rule returns a ``Verdict`` (kind, key, reason) or None; ``worker/toolchain/causes.py`` makes
them causes. ``installed(name)`` answers whether the toolchain in use has a ROCm library (None:
the catalogue does not know it). Which names and headers are CUDA's comes from the translator's
mapping data, not from a prefix: a project's own ``cudaCheck`` is not a CUDA name.

Pure: the standard library and the translator's data.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import NamedTuple

from translator.mapping import ApiMapping, load_default

Installed = Callable[[str], "bool | None"]


class Verdict(NamedTuple):
    kind: str  # a CauseKind
    key: str
    reason: str


# CUDA headers HIP has no header for (the translator's table maps the rest).
CUDA_ONLY_HEADERS: frozenset[str] = frozenset({
    "mma.h", "cuda_pipeline.h", "cuda_pipeline_primitives.h", "cuda_awbarrier.h", "cuda_awbarrier_primitives.h",
    "cuda_fp8.h", "cuda_fp6.h", "cuda_fp4.h", "cuda_occupancy.h", "cuda_gl_interop.h", "cudaGL.h", "cuda_egl_interop.h",
    "cudaEGL.h", "cuda_d3d11_interop.h", "cudaProfiler.h", "nvml.h", "nvrtc.h", "nvfunctional", "cuda_surface_types.h",
    "surface_functions.h", "sm_20_intrinsics.h", "sm_30_intrinsics.h", "sm_32_intrinsics.h", "sm_35_intrinsics.h",
    "sm_60_atomic_functions.h", "sm_61_intrinsics.h", "cufile.h", "nvjpeg.h", "npp.h", "nvToolsExt.h", "cudla.h",
})
# Where a CUDA-only header has a ROCm library to port to: the library (catalogue name) and the rewrite.
PORT_TARGETS: dict[str, tuple[str, str]] = {
    "mma.h": ("rocWMMA", "WMMA (mma.h) has no HIP header: port the fragments to rocWMMA"),
    "nvToolsExt.h": ("roctracer/roctx", "NVTX has no HIP header: use roctx"),
}
_CUDA_HEADER_DIRS = ("cuda/", "nvtx3/", "cooperative_groups/", "crt/", "cub/", "thrust/system/cuda/", "cutlass/", "cute/")


@functools.cache
def _cuda_headers() -> frozenset[str]:
    return frozenset(load_default().headers()) | CUDA_ONLY_HEADERS


def is_cuda_header(header: str) -> bool:
    return header in _cuda_headers() or header.startswith(_CUDA_HEADER_DIRS) or bool(re.match(r"sm_\d+_\w+\.h$", header))


def cuda_header(header: str, installed: Installed) -> Verdict:
    """A CUDA header left in a translated file: environment when its ROCm port is absent, else translation."""
    target = PORT_TARGETS.get(header) or PORT_TARGETS.get(header.rsplit("/", 1)[-1])
    if target is not None and installed(target[0]) is False:
        return Verdict("environment", f"missing-library:{target[0]}", f"{target[0]} is not in the toolchain "
                       f"(<{header}> needs it: {target[1]})")
    if target is not None:
        return Verdict("translation", f"cuda-header:{header}", target[1])
    mapping = load_default().headers().get(header)
    if mapping is not None and mapping.hip:
        return Verdict("translation", f"cuda-header:{header}", f"CUDA header <{header}> left untranslated (HIP: <{mapping.hip}>)")
    return Verdict("translation", f"cuda-header:{header}", f"CUDA header <{header}> has no HIP counterpart")


@functools.cache
def _written_headers() -> dict[str, ApiMapping]:
    """The headers the translation writes (the HIP side of its table) that are a library's, not HIP's own."""
    return {m.hip: m for m in load_default().headers().values() if m.hip and not m.hip.startswith("hip/")}


def translated_header(header: str) -> Verdict | None:
    """A header the translation wrote for a CUDA one that this ROCm does not ship (cudnn.h -> hipDNN.h):
    the translation chose it, so the fix is there (the ROCm library's own header, where its table names one)."""
    mapping = _written_headers().get(header)
    if mapping is None:
        return None
    instead = f": ROCm's is <{mapping.roc}>" if mapping.roc and mapping.roc != header else ""
    return Verdict("translation", f"written-header:{header}",
                   f"the translation wrote <{header}> for <{mapping.cuda}>, which this ROCm does not ship{instead}")


def cuda_name(name: str) -> Verdict | None:
    """A name the CUDA API defines (per the translator's table), or None for anything else."""
    mapping = load_default().lookup(name)
    if mapping is None:
        return None
    if mapping.hip == name:  # HIP spells it the same (atomicAdd, __syncthreads): nothing was left to translate
        return Verdict("build_configuration", "not-hip", f"{name} is HIP's too, yet undeclared: the file is not compiled "
                       "as HIP (the build gives it to g++/c++, or to hipcc without -x hip)")
    if mapping.hip:
        return Verdict("translation", "cuda-names", "CUDA names left untranslated")
    return Verdict("translation", f"no-hip-counterpart:{name}",
                   f"{name} ({mapping.library} API) has no HIP counterpart: rewrite the call")


# Third-party headers and packages: when absent the toolchain lacks what the project needs.
_THIRD_PARTY_HEADER = re.compile(r"^(?:boost|opencv2?|Eigen|eigen3|gtest|gmock|glog|gflags|fmt|spdlog|nlohmann|yaml-cpp|"
                                 r"google/protobuf|absl|tbb|oneapi|openssl|curl|GL|GLFW|benchmark|hdf5|omp|mpi|zlib|png|"
                                 r"jpeglib|turbojpeg|libpng|cxxopts|CLI|catch2|half|torch|ATen|c10|pybind11)(?:[/.]|$)")


# Third-party libraries on a link line (-lboost_system, -lfftw3f): absent, the toolchain lacks them.
_THIRD_PARTY_LIBRARY = re.compile(r"^(?:boost_\w+|fftw3\w*|opencv_\w+|glog|gflags|protobuf\w*|yaml-cpp|fmt|spdlog|"
                                  r"gtest\w*|gmock\w*|benchmark\w*|hdf5\w*|z|png\w*|jpeg|turbojpeg|ssl|crypto|curl|"
                                  r"tbb\w*|mpi\w*|omp|gomp|openblas|lapack\w*|blas|GL|GLU|glut|GLEW|glfw\w*|absl_\w+)$")


def third_party_library(library: str) -> Verdict | None:
    if _THIRD_PARTY_LIBRARY.match(library):
        top = library.split("_", 1)[0] if library.startswith(("boost_", "opencv_", "absl_")) else library
        return Verdict("environment", f"missing-dependency:{top}", f"the toolchain lacks {top} (-l{library} not found)")
    return None


def third_party_header(header: str) -> Verdict | None:
    if _THIRD_PARTY_HEADER.match(header) and not header.startswith(("torch/", "ATen/", "c10/", "pybind11/")):
        top = header.split("/", 1)[0].removesuffix(".h")
        return Verdict("environment", f"missing-dependency:{top}", f"the toolchain lacks {top} (<{header}> not found)")
    return None


# CMake package names -> the ROCm library (catalogue name) standing in for it.
_ROCM_PACKAGES: dict[str, str] = {
    "nccl": "RCCL", "rccl": "RCCL", "hip": "HIP runtime", "hipblas": "hipBLAS", "hipblaslt": "hipBLASLt",
    "rocblas": "rocBLAS", "miopen": "MIOpen", "cudnn": "MIOpen", "hipfft": "hipFFT", "rocfft": "rocFFT",
    "rocrand": "rocRAND", "hiprand": "hipRAND", "hipsparse": "hipSPARSE", "rocsparse": "rocSPARSE",
    "hipsolver": "hipSOLVER", "rocsolver": "rocSOLVER", "hipcub": "hipCUB", "rocprim": "rocPRIM",
    "rocthrust": "rocThrust", "rocwmma": "rocWMMA", "roctracer": "roctracer/roctx",
}
_CUDA_PACKAGES = {"cuda", "cudatoolkit", "cudart", "cub", "thrust", "cutlass", "nvtx", "nvtx3", "cupti", "tensorrt", "nvcc"}
_PACKAGE = re.compile(r'package configuration file provided by "(?P<a>[\w.+-]+)"|Could NOT find (?P<b>[\w.+-]+)|'
                      r'Could not find (?!a package)(?:the )?(?P<c>[\w.+-]+)(?: library| package|\b)|'
                      r'(?:Unable|Failed) to find (?P<d>[\w.+-]+)|'
                      r'required packages were not found:\s*-\s*(?P<e>[\w.+-]+)|Package \'(?P<f>[\w.+-]+)\' not found')
_CMAKE_CUDA = re.compile(r"CMAKE_CUDA_\w+|\bCUDA_(?:ARCHITECTURES|SEPARABLE_COMPILATION|RESOLVE_DEVICE_SYMBOLS)\b|No CMAKE_CUDA_COMPILER|CUDA language|default CUDA architecture|"
                         r"Unknown CMake command \"(?:cuda_\w+|CUDA_\w+)\"|enable_language\(CUDA\)|nvcc executable|/cuda[\w.-]*/bin/nvcc\b|"
                         r"Failed to find nvcc|requires the CUDA toolkit|CUDAToolkit_ROOT|CMakeCUDA\w*\.cmake|\bCUDA::\w+",
                         re.IGNORECASE)
_CMAKE_SOURCES = re.compile(r"Cannot find source file:\s*(?P<file>\S+)|No SOURCES given to target:\s*(?P<target>\S+)|"
                            r"(?:Cannot|can not) determine link(?:er)? language for target \"?(?P<link>[\w.-]+)", re.IGNORECASE)
_CUDA_SOURCE = re.compile(r"\.(?:cu|cuh)$", re.IGNORECASE)
_HIP_CHECK = re.compile(r"The HIP compiler\b.*is not able to compile|CMakeTestHIPCompiler|No CMAKE_HIP_COMPILER", re.IGNORECASE)


def cmake(message: str, where: str, installed: Installed) -> Verdict | None:
    """A CMake error: a package the toolchain lacks, CUDA left in the build files, sources not listed."""
    at = f" ({where})" if where else ""
    if _CMAKE_CUDA.search(message):
        return Verdict("build_configuration", "cmake-cuda", f"CMake still uses the CUDA language or FindCUDA{at}")
    if found := _CMAKE_SOURCES.search(message):
        if found["file"] and not _CUDA_SOURCE.search(found["file"]):  # the conversion renames CUDA sources only
            return Verdict("project_code", "cmake-missing-source", f"the build files list {found['file']}, which "
                           f"is not in the project{at}")
        if found["file"]:
            return Verdict("build_configuration", "cmake-sources", f"the build files list {found['file']}, which the "
                           f"conversion renamed or dropped{at}")
        target = found["target"] or found["link"]
        return Verdict("build_configuration", "cmake-sources", f"target {target} has no sources left{at}")
    if _HIP_CHECK.search(message):
        return Verdict("environment", "hip-compiler-check", "the toolchain's HIP compiler fails CMake's test program")
    if found := _PACKAGE.search(message):
        return _package(next(v for v in found.groupdict().values() if v), at, installed)
    return None


def _package(name: str, at: str, installed: Installed) -> Verdict:
    name = name.rstrip(".")
    lowered = name.lower().removeprefix("lib")
    if lowered in _CUDA_PACKAGES or lowered.startswith("cuda"):
        return Verdict("build_configuration", "cmake-cuda", f"CMake still looks for CUDA package {name}{at}")
    library = _ROCM_PACKAGES.get(lowered)
    if library is not None and installed(library) is not True:
        return Verdict("environment", f"missing-library:{library}", f"{library} is not in the toolchain "
                       f"(CMake package {name}{at})")
    if library is not None:
        return Verdict("build_configuration", f"cmake-package:{name}",
                       f"the toolchain has {library} but CMake does not find package {name}: set CMAKE_PREFIX_PATH{at}")
    return Verdict("environment", f"missing-dependency:{name}", f"the toolchain lacks CMake package {name}{at}")


_NO_RULE_CUDA = re.compile(r"\.(?:cu|cuh)$|/cuda[\w.-]*/|libcu\w+\.(?:so|a)")


def make(kind: str, message: str, where: str) -> Verdict | None:
    """make's own errors; ``Error 1`` after a compiler error is a consequence (None)."""
    if kind == "make_no_rule":
        if _NO_RULE_CUDA.search(where):
            return Verdict("build_configuration", "make-cuda-paths", f"a make rule still needs {where} (CUDA source or "
                           f"path the conversion renamed or left)")
        return Verdict("build_configuration", "make-rule", f"a make rule needs {where}, which does not exist")
    if kind == "tool_not_found":
        tool = message.split(":", 1)[0].rsplit("/", 1)[-1]
        if tool == "nvcc":
            return Verdict("build_configuration", "makefile-nvcc", "the build files still call nvcc")
        if tool in ("hipcc", "amdclang++", "clang++", "hipconfig"):
            return Verdict("environment", f"missing-tool:{tool}", f"the toolchain has no {tool}")
        return Verdict("environment", f"missing-tool:{tool}", f"the toolchain lacks the tool {tool}")
    if kind == "make_error" and re.search(r"Killed|Terminated", message):
        return Verdict("migrator", "limits", "a build step was killed (Migrator's memory or time limits)")
    return None


_CUDA_PY = re.compile(r"^(?:pycuda|cupy|cupy_cuda\w*|tensorrt|pynvml|nvidia|cuda|numba\.cuda|cudf|cuml|apex|nvtx)(?:\.|$)")
_NO_MODULE = re.compile(r"No module named '?(?P<module>[\w.]+)'?")
_CUDA_WHEEL = re.compile(r"lib(?:cudart|cublas\w*|cudnn\w*|nvrtc|cufft|curand|nccl)\w*\.so")


_CUDA_ENV = re.compile(r"^KeyError: '(?P<name>CUDA_HOME|CUDA_PATH|CUDA_ROOT|CUDA_TOOLKIT_ROOT_DIR|CUDNN_HOME)'")
# torch.utils.cpp_extension's own words when a CUDAExtension is built with a PyTorch that is neither CUDA nor ROCm.
_TORCH_NOT_ROCM = re.compile(r"CUDA_HOME environment variable is not set")
_TORCH_VERSION_CUDA = re.compile(r"(?:AttributeError|TypeError): .*NoneType.* \(in `.*torch\.version\.cuda\b.*`\)$")
# The project's own exception demanding nvcc or the CUDA toolkit's path ("needs nvcc: set CUDA_HOME").
_SCRIPT_NEEDS_NVCC = re.compile(r"^(?:RuntimeError|OSError|EnvironmentError|SystemExit|Exception|AssertionError|ValueError)"
                                r"\b.*\b(?:nvcc|CUDA_HOME|CUDA_PATH)\b")
_CUDA_TOOL_MISSING = re.compile(r"No such file or directory: '(?:[\w./-]*/)?(?P<tool>nvcc|nvidia-smi|cuobjdump|nvdisasm)'")


def python(message: str) -> Verdict:
    """A Python exception; ``message`` ends with the project's line that raised it where the traceback shows one."""
    if _TORCH_NOT_ROCM.search(message):
        return Verdict("environment", "torch-not-rocm", "the toolchain's PyTorch is not a ROCm build: its "
                       "CUDAExtension looks for CUDA_HOME (a ROCm PyTorch builds it with hipcc)")
    if _TORCH_VERSION_CUDA.search(message):
        return Verdict("translation", "torch-version-cuda", "the code reads torch.version.cuda, which is None on a ROCm "
                       "PyTorch: check torch.version.hip too")
    if found := _CUDA_ENV.search(message):
        return Verdict("build_configuration", "cuda-env", f"the build script requires {found['name']} (a CUDA toolkit "
                       "path): read ROCM_PATH/HIP's instead")
    if found := _CUDA_TOOL_MISSING.search(message):
        return Verdict("build_configuration", "makefile-nvcc", f"the build script still runs {found['tool']}")
    if _SCRIPT_NEEDS_NVCC.search(message):
        return Verdict("build_configuration", "makefile-nvcc", "the build script refuses to run without nvcc "
                       "(CUDA_HOME): let it take the ROCm path")
    if found := _NO_MODULE.search(message):
        module = found["module"]
        if _CUDA_PY.match(module):
            return Verdict("translation", f"cuda-python:{module.split('.')[0]}", f"the code imports CUDA-only {module}")
        return Verdict("environment", f"missing-python:{module.split('.')[0]}", f"the toolchain lacks Python package "
                       f"{module.split('.')[0]}")
    if _CUDA_WHEEL.search(message):
        return Verdict("build_configuration", "cuda-wheels", "CUDA builds of Python packages are installed "
                       "(requirements pin CUDA wheels)")
    if "Torch not compiled with CUDA enabled" in message or "Found no NVIDIA driver" in message:
        return Verdict("translation", "cuda-only-python", "the Python code asks for CUDA explicitly")
    return Verdict("project_code", "python-error", "a Python error in the project's code")


_PIP_NAME = re.compile(r"(?:requirement|found for) (?P<name>[\w.\[\]+-]+(?:[=<>!~]=?[\w.+*-]+)?)")
_CUDA_PIP = re.compile(r"cu\d{2,3}\b|\+cu\d|^nvidia-|cuda|^pycuda|^tensorrt|^cupy", re.IGNORECASE)


_PIP_DEPENDS = re.compile(r"^(?P<who>[\w.-]+ [\w.+-]+) depends on (?P<what>\S+)")
_PIP_CONFLICT_SUMMARY = re.compile(r"^Cannot install .* because these package versions have conflicting dependencies")


def pip(message: str) -> Verdict | None:
    """pip's resolver. Its "Cannot install ... conflicting dependencies" is explained by the "X depends on Y"
    lines under it (None here): a CUDA build (+cu121) among them pins CUDA wheels."""
    if found := _PIP_DEPENDS.search(message):
        if _CUDA_PIP.search(found["who"]) or _CUDA_PIP.search(found["what"]):
            return Verdict("build_configuration", f"cuda-requirement:{found['who'].split()[0]}",
                           f"the requirements pin CUDA-only {found['who']} (it depends on {found['what']})")
    if _PIP_CONFLICT_SUMMARY.search(message):
        return None
    if found := _PIP_NAME.search(message):
        name = found["name"]
        if _CUDA_PIP.search(name):
            return Verdict("build_configuration", f"cuda-requirement:{name}", f"the requirements pin CUDA-only {name}")
        return Verdict("environment", f"missing-python:{re.split(r'[=<>!~]', name)[0]}",
                       f"{name} is not available to the toolchain's Python")
    if "torch" in message and ("depends on" in message or "conflict" in message.lower()):
        return Verdict("environment", "torch-pin", "the requirements conflict with the toolchain's ROCm PyTorch")
    if message.startswith(("ResolutionImpossible", "Cannot install")):
        return Verdict("project_code", "requirements-conflict", "the project's requirements conflict with each other")
    return None


_MIGRATOR = re.compile(r"\bbwrap: |sandbox (?:violation|denied)|No space left on device|Read-only file system|"
                       r"unable to execute command: Killed|signal 9\b|\bKilled\b|timed out after|exceeded (?:the )?(?:time|memory) limit|"
                       r"memory limit|Cannot allocate memory|out of memory allocating", re.IGNORECASE)
_TOOLCHAIN_INCOMPLETE = re.compile(r"cannot find ROCm device library|cannot find HIP runtime|cannot find ROCm installation|"
                                   r"no ROCm installation|unable to find a ROCm installation", re.IGNORECASE)
_COMPILER_CRASH = re.compile(r"frontend command failed due to signal|PLEASE submit a bug report|internal compiler error")


def limit(record: str) -> Verdict:
    """A limit Migrator's sandbox recorded from signals and counters ("the command ran past its time limit of
    30 s and was killed"): the build's failure is its consequence."""
    what = record.split(": ", 1)[0].rstrip(".;")
    return Verdict("migrator", "limits", f"Migrator's sandbox or limits stopped the build ({what})")


def migrator(message: str) -> Verdict | None:
    if _MIGRATOR.search(message):
        return Verdict("migrator", "limits", "Migrator's sandbox or limits stopped the build (disk, memory, time)")
    if _TOOLCHAIN_INCOMPLETE.search(message):
        return Verdict("environment", "toolchain-incomplete", "the toolchain's ROCm installation is incomplete "
                       "(device libraries or HIP runtime not found)")
    if _COMPILER_CRASH.search(message):
        return Verdict("environment", "compiler-crash", "the toolchain's compiler crashed")
    return None


# g++ and nvcc wordings of "undeclared": the name they report.
_GXX_UNDECLARED = re.compile(r"'(?P<name>[\w:]+)' (?:was not declared in this scope|does not name a type|has not been declared|"
                             r"is not a member of '[\w:]+'|is not a type|was not declared)|"
                             r"no member named '(?P<member>\w+)' in (?:namespace )?'[\w:]+'|"
                             r"identifier \"(?P<nvcc>[\w:]+)\" is undefined|namespace \"[\w:]+\" has no member \"(?P<nvmember>\w+)\"|"
                             r"'(?P<implicit>\w+)' undeclared|implicit declaration of function '(?P<cdecl>\w+)'")
_DEVICE_IN_CXX = re.compile(r"'__(?:global|device|host|shared|constant)__' does not name a type|"
                            r"'(?:threadIdx|blockIdx|blockDim|gridDim)' was not declared in this scope|"
                            r"expected primary-expression before '<' token")


def undeclared_name(message: str) -> str | None:
    if found := _GXX_UNDECLARED.search(message):
        return next(v for v in found.groupdict().values() if v)
    return None


def device_code_in_cxx(message: str, file: str) -> Verdict | None:
    if _DEVICE_IN_CXX.search(message):
        return Verdict("build_configuration", "hip-in-cxx", f"HIP device code compiled by the C++ compiler: the build "
                       f"files give {file or 'a HIP source'} to g++/c++ instead of hipcc")
    return None


# A builtin the GPU target lacks (MFMA on gfx906, dot instructions on gfx900): clang names the feature.
_TARGET_FEATURE = re.compile(r"'(?P<builtin>\w+)' needs target feature (?P<feature>[\w,+-]+)")
# The assembler rejecting an inline asm statement of a HIP file: PTX the translation left (hand work).
_INLINE_ASM = re.compile(r"^(?:invalid instruction|invalid operand for instruction|unknown directive|"
                         r"instruction not supported on this GPU)|^invalid (?:output|input) constraint '[^']*' in asm",
                         re.IGNORECASE)
# Kernels launching kernels (CUDA dynamic parallelism), which HIP does not support on AMD GPUs.
_DEVICE_LAUNCH = re.compile(r"device-side kernel call/launch is not supported|reference to __global__ function '\w+' "
                            r"in __global__ function")
# The device linker (amdgcn-link) missing a symbol another file's device code defines: no relocatable device code.
_DEVICE_LINK = re.compile(r"undefined (?:protected|hidden) symbol: ")


def gpu_code(message: str) -> Verdict | None:
    """Device code the GPU target cannot take: a builtin of a feature it lacks, or PTX left in inline asm."""
    if found := _TARGET_FEATURE.search(message):
        return Verdict("environment", f"target-feature:{found['feature']}", f"the target GPU lacks {found['feature']} "
                       f"({found['builtin']} needs it): choose offload targets that have it, or a fallback")
    if _INLINE_ASM.search(message):
        return Verdict("translation", "inline-asm", "inline PTX assembly left in the translated code (no HIP "
                       "translation): rewrite it with HIP intrinsics")
    if _DEVICE_LAUNCH.search(message):
        return Verdict("translation", "dynamic-parallelism", "a kernel launches kernels (CUDA dynamic parallelism), "
                       "which HIP does not support: launch them from the host")
    if _DEVICE_LINK.search(message):
        return Verdict("build_configuration", "device-rdc", "device code uses a symbol defined in another file: the "
                       "build needs relocatable device code (-fgpu-rdc, HIP_SEPARABLE_COMPILATION)")
    return None


# CUDA device intrinsics HIP does not have (address-space conversions, cache-hint loads and stores, sleeps); the
# translator's table leaves them, so they are named here.
_CUDA_INTRINSIC = re.compile(r"^__(?:cvta_\w+|nanosleep|ld(?:cs|cg|ca|lu|cv)|st(?:cs|cg|wb|wt)|is(?:Shared|Global|Constant|Local)"
                             r"|prof_trigger|trap_if)$")


def cuda_intrinsic(name: str) -> Verdict | None:
    if _CUDA_INTRINSIC.match(name):
        return Verdict("translation", f"cuda-intrinsic:{name}", f"{name} is a CUDA device intrinsic HIP does not have: "
                       "use the nearest HIP builtin")
    return None
