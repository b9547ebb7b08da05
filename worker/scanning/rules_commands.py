"""Rules for command-line text: nvcc and its flags, CUDA libraries and paths, CUDA-only
environment variables, docker GPU flags and CUDA wheel pins.

They read one line and return hits without a family; the caller gives the file's family
(make, shell, container, ci, python-build, cmake) to the shared ones.
"""
from __future__ import annotations

import re

from worker.scanning.libraries import LINK_LIBRARY_MAP
from worker.scanning.model import Family, RuleHit, Severity

_NVCC = re.compile(r"(?<![\w.$(-])nvcc(?![\w.-])")
_ARCH_NUMBER = r"(?:\d+[af]?|\$[({]\w+[)}])"  # sm_80, sm_90a, sm_$(GPU_COMPUTE_CAPABILITY)
_ARCH_FLAG = re.compile(
    r"(?<![\w-])(?:-arch[= ]\s*|--gpu-architecture[= ]\s*|-code=|--gpu-code=)\[?(?:sm|compute|lto)_" + _ARCH_NUMBER
    + r"\]?|(?<![\w-])(?:-gencode|--generate-code)[= ]\s*\"?arch=compute_" + _ARCH_NUMBER + r",code=\[?[\w,$(){}]+\]?"
)
_FAST_MATH = re.compile(r"(?<![\w-])--?use_fast_math\b")
_DROPPED_FLAGS = re.compile(
    r"(?<![\w-])(?:--expt-relaxed-constexpr|--expt-extended-lambda|--extended-lambda|--threads[= ]\d+)(?![\w-])"
)
_RDC = re.compile(r"(?<![\w-])(?:-rdc=true|--relocatable-device-code=true)(?![\w-])")
_MANUAL_FLAGS = re.compile(
    r"(?<![\w-])(?:-Xcompiler|--compiler-options|-Xptxas|--ptxas-options|-ccbin|--compiler-bindir"
    r"|-lineinfo|--default-stream|-maxrregcount|--resource-usage|-Xlinker)(?![\w-])"
)
_CUDA_PATH = re.compile(r"/usr/local/cuda(?:-\d+(?:\.\d+)?)?(/include|/lib64|/lib|/bin)?(?![\w.-])")
_CUDA_LIB = re.compile(r"(?<![\w-])-l(" + "|".join(sorted(LINK_LIBRARY_MAP, key=len, reverse=True)) + r")(?![\w.-])")
_CUDA_HOME = re.compile(r"\b(CUDA_HOME|CUDA_PATH|CUDA_ROOT|CUDA_TOOLKIT_ROOT_DIR|CUDA_DIR|CUDA_BIN_PATH)\b")
_LD_PATH = re.compile(r"\bLD_LIBRARY_PATH\b")
_DOCKER_GPUS = re.compile(r"(?<![\w-])--gpus(?:=|\s+)(?:\"[^\"]*\"|'[^']*'|[\w=,.:-]+)")
_NVIDIA_RUNTIME = re.compile(r"(?<![\w-])--runtime(?:=|\s+)nvidia\b")
_NVIDIA_ENV = re.compile(r"\b(NVIDIA_VISIBLE_DEVICES|NVIDIA_DRIVER_CAPABILITIES|NVIDIA_REQUIRE_CUDA)\b")
_CUDA_VISIBLE = re.compile(r"\bCUDA_VISIBLE_DEVICES\b")
_NCCL_VAR = re.compile(r"\bNCCL_[A-Z0-9_]+\b")
_WHEEL_INDEX = re.compile(r"download\.pytorch\.org/whl/(?:nightly/|test/)?cu\d+")
_LOCAL_CU = re.compile(r"(?<=[\w.])\+cu\d+\b")
_NVIDIA_WHEEL = re.compile(r"(?<![\w-])nvidia-[a-z0-9-]+-cu1\d\b")
_CUPY = re.compile(r"(?<![\w-])cupy-cuda\w*")
_CONDA_CUDA = re.compile(r"(?<![\w-])(pytorch-cuda|cudatoolkit(?:-dev)?|cuda-toolkit|cuda-nvcc)(?=[=<>\s\"',]|$)")

ROCM_WHEEL_INDEX = "download.pytorch.org/whl/rocm6.2"
ROCM_DEVICE_FLAGS = "--device=/dev/kfd --device=/dev/dri --group-add video"


def make_hit(match: re.Match[str], name: str, severity: Severity, explanation: str, *,
         replacement: str | None = None, notebook_slug: str | None = None, suggestion: str | None = None,
         family: Family | None = None) -> RuleHit:
    return RuleHit(name=name, severity=severity, column=match.start(), text=match.group(0), explanation=explanation,
                   replacement=replacement, notebook_slug=notebook_slug, suggestion=suggestion, family=family)


def compiler_hits(line: str) -> list[RuleHit]:
    """nvcc invocations and NVIDIA-only compiler flags."""
    hits = [make_hit(m, "nvcc", "error", "nvcc is NVIDIA's compiler; hipcc compiles HIP for AMD GPUs "
                 "(export HIP_PLATFORM=amd where nvcc is also installed).",
                 replacement="hipcc", notebook_slug="hipcc-nvidia-platform") for m in _NVCC.finditer(line)]
    hits += [make_hit(m, "nvidia-arch-flag", "error", "NVIDIA GPU architecture flag; AMD targets are chosen "
                  "with --offload-arch=gfxNNN (the project's offload_archs).",
                  notebook_slug="no-binary-for-gpu", suggestion="--offload-arch=gfx90a") for m in _ARCH_FLAG.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "warning", "nvcc's fast-math flag; clang/hipcc spells it -ffast-math.",
                  replacement="-ffast-math") for m in _FAST_MATH.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "warning", "nvcc-only switch (lambdas, constexpr, compile "
                  "threads); hipcc (clang) needs no such flag, so it is dropped.", replacement="") for m in _DROPPED_FLAGS.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "warning", "Relocatable device code is -fgpu-rdc under hipcc.",
                  replacement="-fgpu-rdc") for m in _RDC.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "warning", "nvcc-only option: hipcc passes host flags directly, has no "
                  "ptxas and uses -fgpu-default-stream=per-thread; rewrite this option by hand.")
             for m in _MANUAL_FLAGS.finditer(line)]
    return hits


def _path_hit(match: re.Match[str], line: str) -> RuleHit:
    suffix = match.group(1) or ""
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
    hits += [make_hit(m, "cuda-home-variable", "warning", f"{m.group(1)} points at the CUDA toolkit; ROCm builds use "
                  "ROCM_PATH (usually /opt/rocm).", notebook_slug="cuda-header-not-found", suggestion="ROCM_PATH")
             for m in _CUDA_HOME.finditer(line)]
    ld = _LD_PATH.search(line)
    if ld and re.search(r"cuda", line[ld.end():], re.IGNORECASE):
        hits.append(make_hit(ld, "ld-library-path-cuda", "warning", "LD_LIBRARY_PATH holds CUDA directories; "
                         "the loader may pick CUDA libraries ahead of ROCm's. Remove them.", notebook_slug="ld-library-path-cuda"))
    return hits


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
    hits += [make_hit(m, "nccl-variable", "info", "RCCL reads the NCCL_* variables under their NCCL names; keep "
                  "them, but check values tuned for NVIDIA interconnects.", notebook_slug="rccl-hang",
                  family="run-config") for m in _NCCL_VAR.finditer(line)]
    return hits


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


def command_line_hits(line: str) -> list[RuleHit]:
    """Every command-line rule, for Makefiles, shell scripts, Dockerfiles and CI steps."""
    if line.lstrip().startswith("#"):
        return []
    return compiler_hits(line) + library_hits(line) + runtime_env_hits(line) + dependency_hits(line)
