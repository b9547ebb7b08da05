"""Rules for command-line text: nvcc and its flags, CUDA libraries and paths, CUDA-only
environment variables, docker GPU flags and CUDA wheel pins.

They read one line and return hits without a family; the caller gives the file's family
(make, shell, container, ci, python-build, cmake) to the shared ones.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from worker.scanning.libraries import LINK_LIBRARY_MAP
from worker.scanning.model import DEFAULT_OFFLOAD_ARCHS, RuleHit, make_hit
from worker.scanning.nvcc_flags import nvcc_flag_hits, offload_flags

__all__ = ["compiler_hits", "library_hits", "make_hit", "runtime_env_hits", "dependency_hits", "command_line_hits"]

_NVCC = re.compile(r"(?<![\w.$(-])nvcc(?![\w.-])")
_NVCXX = re.compile(r"(?<![\w.$(/-])(?:/[\w.+-]+)*/?nvc\+\+(?![\w.+-])")  # NVIDIA's HPC compiler (nvc++ -stdpar=gpu)
_STDPAR = re.compile(r"(?<![\w-])-stdpar(?:=(?:gpu|multicore))?(?![\w=-])")
_NVHPC_GPU = re.compile(r"(?<![\w-])-gpu=[\w,.]+")
HIPSTDPAR_FLAGS = "--hipstdpar --hipstdpar-path=/usr/include/thrust/system/hip/hipstdpar"
# Only the toolkit root and its include/lib/bin dirs have ROCm counterparts (``targets/<triple>``,
# ``samples``, ``lib64/stubs`` do not), so a longer path is reported but never rewritten.
_CUDA_PATH = re.compile(r"(?:/usr/local|/opt)/cuda(?:-\d+(?:\.\d+)*)?(?:(/include|/bin)(?![\w.-])"
                        r"|(/lib64|/lib)(?![\w.-])(?!/[\w.])|(?![\w.-])(?!/[\w.]))")
_CUDA_PATH_DEEPER = re.compile(r"(?:/usr/local|/opt)/cuda(?:-\d+(?:\.\d+)*)?/[\w.][\w./-]*"
                               r"|/usr/local/nvidia(?:/[\w.-]+)*|/usr/lib/nvidia(?:-\d+)?(?:/[\w.-]+)*")
_TOOLKIT_VAR = r"\$[({](?:\w*CUDA\w*|NVCC_?\w*)[)}]"
_TOOLKIT_LIB64 = re.compile(r"(" + _TOOLKIT_VAR + r")/lib64(?![\w/.-])")
_TOOLKIT_INCLUDE = re.compile(r"(?<![\w-])-I\s*(?:" + _TOOLKIT_VAR + r"|(?:/usr/local|/opt)/cuda[\w.-]*|/usr/include/cuda)/?include/?(?![\w.-])"
                              r"|(?<![\w-])-I\s*/usr/include/cuda(?![\w.-])")
_HOST_CC = re.compile(r"^\s*(?:CC|C_C|CXX|CPP|CC_C|HOST_COMPILER|HOSTCC)\s*[:?+]?=\s*(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(?:-\d+)?(?=\s|$)")
_CUDA_LIB = re.compile(r"(?<![\w-])-l(" + "|".join(sorted(LINK_LIBRARY_MAP, key=len, reverse=True)) + r")(?![\w.-])")
_OTHER_CUDA_LIB = re.compile(r"(?<![\w-])-l(cu(?:blas|fft|rand|sparse|solver|dnn|pti|da|tensor)\w*|nv(?:jpeg|blas|ToolsExt|ptxcompiler|JitLink|rtc)\w*|npp\w+)(?![\w.-])")
_CUDA_HOME = re.compile(r"\b(CUDA_HOME|CUDA_PATH|CUDA_ROOT|CUDA_TOOLKIT_ROOT_DIR|CUDA_DIR|CUDA_BIN_PATH|CUDAPATH"
                        r"|CUDA_INSTALL_PATH|CUDA_TOOLKIT_PATH|CUDA_TOOLKIT_DIR|CUDA_ROOT_DIR|CUDA_LIB_DIR|CUDA_LIB_PATH"
                        r"|CUDA_INC_DIR|CUDA_INC_PATH|CUDA_INCLUDE_DIR|CUDA_SDK_DIR|CUDA_SDK_PATH|CUDA_LIB|CUDA_INC"
                        r"|CUDA_LIBDIR|CUDA_INCDIR|CUDA_BIN|CUDA_TOOLKIT|CUDACXX|CUDAHOSTCXX|CUDA_INSTALL_DIR)\b")
HIP_PLATFORM_DEFINE = "-D__HIP_PLATFORM_AMD__"
_LD_PATH = re.compile(r"\bLD_LIBRARY_PATH\b")
_DOCKER_GPUS = re.compile(r"(?<![\w-])--gpus(?:=|\s+)(?:\"[^\"]*\"|'[^']*'|[\w=,.:-]+)")
_NVIDIA_RUNTIME = re.compile(r"(?<![\w-])--runtime(?:=|\s+)nvidia\b")
_NVIDIA_ENV = re.compile(r"\b(NVIDIA_VISIBLE_DEVICES|NVIDIA_DRIVER_CAPABILITIES|NVIDIA_REQUIRE_CUDA)\b")
_CUDA_VISIBLE = re.compile(r"\bCUDA_VISIBLE_DEVICES\b")
_NVIDIA_IMAGE = re.compile(r"(?<![\w/.-])(?:nvcr\.io/nvidia/[\w.-]+|nvidia/(?:cuda|cudagl|pytorch))(?::[\w.${}-]+)?")
_TORCH_CUDA_VERSION = re.compile(r"\btorch\.version\.cuda\b")
_NVIDIA_SMI = re.compile(r"(?<![\w/.-])nvidia-smi(?![\w.-])")
_NCCL_VAR = re.compile(r"\bNCCL_[A-Z0-9_]+\b")
_WHEEL_INDEX = re.compile(r"download\.pytorch\.org/whl/(?:nightly/|test/)?cu\d+")
_LOCAL_CU = re.compile(r"(?<=[\w.])\+cu\d+\b")
_NVIDIA_WHEEL = re.compile(r"(?<![\w-])nvidia-[a-z0-9-]+-cu1\d\b")
_CUPY = re.compile(r"(?<![\w-])cupy-cuda\w*")
_CONDA_CUDA = re.compile(r"(?<![\w-])(pytorch-cuda|cudatoolkit(?:-dev)?|cuda-toolkit|cuda-nvcc)(?=[=<>\s\"',]|$)")

ROCM_WHEEL_INDEX = "download.pytorch.org/whl/rocm6.2"
ROCM_DEVICE_FLAGS = "--device=/dev/kfd --device=/dev/dri --group-add video"


def compiler_hits(line: str, archs: Sequence[str] = DEFAULT_OFFLOAD_ARCHS, family: str = "make",
                  loop_vars: frozenset[str] = frozenset()) -> list[RuleHit]:
    """nvcc invocations and NVIDIA-only compiler flags."""
    hits = [make_hit(m, "nvcc", "error", "nvcc is NVIDIA's compiler; hipcc compiles HIP for AMD GPUs "
                 "(export HIP_PLATFORM=amd where nvcc is also installed).",
                 replacement="hipcc", notebook_slug="hipcc-nvidia-platform") for m in _NVCC.finditer(line)]
    hits += [make_hit(m, "nvcc", "error", "nvc++ is NVIDIA's HPC compiler; hipcc compiles the same C++ for AMD GPUs "
                      "(standard parallelism with --hipstdpar).", replacement="hipcc",
                      notebook_slug="hipcc-nvidia-platform") for m in _NVCXX.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "error", "nvc++ -stdpar offloads the C++ standard algorithms; "
                      "hipcc does it with --hipstdpar (rocThrust's hipstdpar headers).",
                      replacement=HIPSTDPAR_FLAGS) for m in _STDPAR.finditer(line)]
    if _NVCXX.search(line):
        hits += [make_hit(m, "nvcc-only-flag", "error", "nvc++'s -gpu= names NVIDIA targets and options; the run's "
                          "offload targets replace it.", replacement=offload_flags(archs))
                 for m in _NVHPC_GPU.finditer(line)]
    return hits + nvcc_flag_hits(line, archs, family, loop_vars)


def _path_hit(match: re.Match[str], line: str) -> RuleHit:
    suffix = match.group(1) or match.group(2) or ""
    new_suffix = "/lib" if suffix == "/lib64" else suffix
    slug = "cuda-header-not-found" if suffix in ("", "/include", "/bin") else "cuda-link-libraries"
    if _LD_PATH.search(line):
        slug = "ld-library-path-cuda"
    return make_hit(match, "cuda-path", "error", "Hard-coded CUDA toolkit path; ROCm installs under /opt/rocm "
                "(ROCM_PATH).", replacement="/opt/rocm" + new_suffix, notebook_slug=slug)


def library_hits(line: str) -> list[RuleHit]:
    """CUDA toolkit paths, -l<cuda library>, CUDA_HOME-style variables, LD_LIBRARY_PATH."""
    hits = [_path_hit(m, line) for m in _CUDA_PATH.finditer(line)]
    for m in _CUDA_LIB.finditer(line):
        target = LINK_LIBRARY_MAP[m.group(1)]
        note = " (hipcc links it by itself; it may be dropped)" if target == "amdhip64" else ""
        hits.append(make_hit(m, "cuda-link-library", "error", f"Links the CUDA library {m.group(1)}; its ROCm "
                         f"counterpart is {target}{note}.", replacement=f"-l{target}", notebook_slug="cuda-link-libraries"))
    hits += [make_hit(m, "cuda-link-library", "error", f"Links {m.group(1)}, an NVIDIA library with no ROCm "
                      "counterpart; port its use by hand or drop it.", notebook_slug="cuda-link-libraries")
             for m in _OTHER_CUDA_LIB.finditer(line) if m.group(1) not in LINK_LIBRARY_MAP]
    hits += [make_hit(m, "cuda-home-variable", "warning", f"{m.group(1)} points at the CUDA toolkit; ROCm builds use "
                  "ROCM_PATH (usually /opt/rocm).", notebook_slug="cuda-header-not-found", suggestion="ROCM_PATH")
             for m in _CUDA_HOME.finditer(line)]
    hits += [make_hit(m, "cuda-path", "error", "A path inside the CUDA toolkit that ROCm does not have; point it at "
                      "the ROCm file or directory by hand.", notebook_slug="cuda-header-not-found")
             for m in _CUDA_PATH_DEEPER.finditer(line) if not _CUDA_PATH.match(line, m.start())]
    hits += [make_hit(m, "cuda-path", "warning", "The toolkit's lib64 directory is lib under ROCm.",
                      replacement=m.group(1) + "/lib", notebook_slug="cuda-link-libraries")
             for m in _TOOLKIT_LIB64.finditer(line)]
    ld = _LD_PATH.search(line)
    if ld and re.search(r"cuda", line[ld.end():], re.IGNORECASE):
        hits.append(make_hit(ld, "ld-library-path-cuda", "warning", "LD_LIBRARY_PATH holds CUDA directories; "
                         "the loader may pick CUDA libraries ahead of ROCm's. Remove them.", notebook_slug="ld-library-path-cuda"))
    return hits


def host_compiler_hits(line: str, host_cc: bool = True) -> list[RuleHit]:
    """C/C++ compiled by gcc/g++ against the toolkit's headers: once hipified they include HIP headers,
    which need the platform macro that hipcc would define."""
    if HIP_PLATFORM_DEFINE in line or _NVCC.search(line) or "NVCC" in line:
        return []
    explanation = ("Host sources built by the C/C++ compiler include the (hipified) CUDA headers; HIP's headers "
                   "need -D__HIP_PLATFORM_AMD__ there.")
    # Zero-width insertions after the flag or compiler, so a path fix on the same text still applies.
    ends = [m.end() for m in _TOOLKIT_INCLUDE.finditer(line)]
    ends += [m.end() for m in _HOST_CC.finditer(line)] if host_cc else []
    return [RuleHit("hip-platform-define", "error", end, "", explanation, replacement=f" {HIP_PLATFORM_DEFINE}",
                    notebook_slug="cuda-header-not-found") for end in ends[:1]]


def runtime_env_hits(line: str) -> list[RuleHit]:
    """Container GPU flags and CUDA/NCCL environment variables."""
    hits = [make_hit(m, "docker-gpus-flag", "error", "--gpus needs the NVIDIA container toolkit; AMD GPUs are "
                 "passed as devices.", replacement=ROCM_DEVICE_FLAGS, notebook_slug="nvidia-container",
                 family="container") for m in _DOCKER_GPUS.finditer(line)]
    hits += [make_hit(m, "nvidia-runtime", "error", "The nvidia container runtime does not exist on ROCm hosts; "
                  f"pass {ROCM_DEVICE_FLAGS} instead.", notebook_slug="nvidia-container",
                  suggestion=ROCM_DEVICE_FLAGS, family="container") for m in _NVIDIA_RUNTIME.finditer(line)]
    hits += [make_hit(m, "nvidia-env", "warning", f"{m.group(1)} is read only by the NVIDIA container runtime; "
                  "select AMD GPUs with HIP_VISIBLE_DEVICES and device flags.", notebook_slug="nvidia-container",
                  family="container") for m in _NVIDIA_ENV.finditer(line)]
    hits += [make_hit(m, "cuda-visible-devices", "info", "ROCm selects GPUs with HIP_VISIBLE_DEVICES.",
                  replacement="HIP_VISIBLE_DEVICES", notebook_slug="cuda-visible-devices", family="run-config")
             for m in _CUDA_VISIBLE.finditer(line)]
    hits += [make_hit(m, "torch-version-cuda", "info", "torch.version.cuda is None on ROCm PyTorch; "
                      "torch.version.hip holds the HIP version.", notebook_slug="cuda-python-wheels",
                      family="run-config") for m in _TORCH_CUDA_VERSION.finditer(line)]
    hits += [make_hit(m, "nvidia-smi", "warning", "nvidia-smi does not exist on ROCm hosts; rocm-smi (or amd-smi) "
                      "reports AMD GPUs, with other options and output.", notebook_slug="no-amd-gpu-visible",
                      suggestion="rocm-smi", family="run-config") for m in _NVIDIA_SMI.finditer(line)]
    hits += [make_hit(m, "nccl-variable", "info", "RCCL reads the NCCL_* variables under their NCCL names; keep "
                  "them, but check values tuned for NVIDIA interconnects.", notebook_slug="rccl-hang",
                  family="run-config") for m in _NCCL_VAR.finditer(line)]
    return hits


def nvidia_image_hits(line: str) -> list[RuleHit]:
    """NVIDIA container images named in scripts (Dockerfiles and CI have their own image rules)."""
    if line.lstrip().startswith("#"):
        return []
    return [make_hit(m, "nvidia-base-image", "warning", "An NVIDIA container image; ROCm images are "
                     "rocm/dev-ubuntu-* (toolchain) and rocm/pytorch (framework).", notebook_slug="nvidia-container",
                     suggestion="rocm/pytorch:latest", family="container") for m in _NVIDIA_IMAGE.finditer(line)]


def dependency_hits(line: str) -> list[RuleHit]:
    """CUDA builds of Python packages named in text (requirements, pip/conda commands)."""
    slug = "cuda-python-wheels"
    hits = [make_hit(m, "cuda-wheel-index", "error", "CUDA wheel index; ROCm builds of PyTorch come from the "
                 "rocmX.Y index matching the installed ROCm.", notebook_slug=slug, suggestion=ROCM_WHEEL_INDEX,
                 family="dependencies") for m in _WHEEL_INDEX.finditer(line)]
    hits += [make_hit(m, "cuda-local-version", "error", f"'{m.group(0)}' pins a CUDA build; use the matching "
                  "+rocmX.Y build from the ROCm index.", notebook_slug=slug, suggestion="+rocm6.2",
                  family="dependencies") for m in _LOCAL_CU.finditer(line)]
    hits += [make_hit(m, "nvidia-wheel", "error", "NVIDIA CUDA runtime wheel; ROCm builds bring their own "
                  "libraries, so drop it.", notebook_slug=slug, family="dependencies") for m in _NVIDIA_WHEEL.finditer(line)]
    hits += [make_hit(m, "cupy-cuda", "error", "CuPy CUDA build; use a ROCm build (cupy-rocm-X-Y, or build with "
                  "CUPY_INSTALL_USE_HIP=1).", notebook_slug=slug, suggestion="cupy-rocm-5-0",
                  family="dependencies") for m in _CUPY.finditer(line)]
    hits += [make_hit(m, "conda-cuda-package", "error", f"{m.group(1)} installs NVIDIA's CUDA stack; ROCm PyTorch "
                  "comes from the ROCm wheel index or the rocm/pytorch image.", notebook_slug=slug,
                  family="dependencies") for m in _CONDA_CUDA.finditer(line)]
    return hits


def command_line_hits(line: str, archs: Sequence[str] = DEFAULT_OFFLOAD_ARCHS, family: str = "make",
                      host_cc: bool = True) -> list[RuleHit]:
    """Every command-line rule, for Makefiles, shell scripts, Dockerfiles and CI steps."""
    if line.lstrip().startswith("#"):
        return []
    return (compiler_hits(line, archs, family) + library_hits(line) + host_compiler_hits(line, host_cc)
            + runtime_env_hits(line) + dependency_hits(line))
