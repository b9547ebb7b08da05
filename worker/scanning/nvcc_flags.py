"""nvcc-only compiler flags and what each becomes under hipcc/clang.

Every flag is either mapped (architecture flags to ``--offload-arch`` with the project's
targets, ``-rdc=true`` to ``-fgpu-rdc``, ``-Xcompiler X`` to ``X``, ``-fatbin`` to a code
object build), dropped with a note (``--expt-*``, ``-Xptxas …``, ``--threads N``), or
reported with no automatic path (``-ptx``). Replacements never leave a flag hipcc rejects.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from worker.scanning.model import RuleHit, make_hit

# sm_80, sm_90a, sm_$(GPU_CC), compute_${arch}, compute_$(subst .,,${COMPUTE})
_NUMBER = r"(?:\d+[af]?|\$\((?:[^()$]|\$[({][^(){}]*[)}])*\)|\$\{[^{}]*\}|\$\w+)"
_CODE_ITEM = r"(?:\w|\$\([\w.-]*\)|\$\{[\w.-]*\})+"  # sm_80, sm_$(SM): references kept whole, never half a call
_CODE = r"(?:\[[\w,$(){} ]+\]|" + _CODE_ITEM + r"(?:," + _CODE_ITEM + r")*)"
_ARCH = re.compile(
    r"(?<![\w-])(?:-arch[= ]\s*|--gpu-architecture[= ]\s*|--cuda-gpu-arch=)(?:sm|compute|lto)_(" + _NUMBER + r")(?![\w}])"
    r"|(?<![\w-])(?:-gencode|--generate-code)[= ]\s*(?P<q>[\"']?)arch=compute_(" + _NUMBER + r"),code=" + _CODE
    + r"(?P=q)"
)
# -arch=$(ARCH), -arch ${GPU_ARCH}: the architecture comes through a variable (``ARCH = sm_60``)
_ARCH_VARIABLE = re.compile(r"(?<![\w-])(?:-arch[= ]\s*|--gpu-architecture[= ]\s*)\$(?:\((\w+)\)|\{(\w+)\})(?![\w}])")
_GPU_ARCH_VALUE = re.compile(r"^\s*(?:sm|compute|lto)_\w+\s*$")
_ASSIGNMENT = re.compile(r"^\s*(?:override\s+|export\s+)?(\w+)\s*(?:[:?+]|::)?=\s*(.*?)\s*(?:#.*)?$", re.MULTILINE)
_CODE_FLAG = re.compile(r"(?<![\w-])(?:-code|--gpu-code)=" + _CODE)
_SPLIT_GENCODE_VALUE = re.compile(r"^arch=compute_(" + _NUMBER + r"),code=" + _CODE + r"$")
_THREADS = re.compile(r"(?<![\w-])(?:--threads[= ]\s*|-t=|-t\s+(?=\d))\d+(?![\w.-])")
_FAST_MATH = re.compile(r"(?<![\w-])--?use_fast_math\b")
_WARNING_ONLY = re.compile(r"(?<![\w-])-Wno-deprecated-gpu-targets(?![\w-])")
_DROPPED = re.compile(
    r"(?<![\w-])(?:--?expt-relaxed-constexpr|--?expt-extended-lambda|--extended-lambda"
    r"|--resource-usage|-rdc=false|--relocatable-device-code=false)(?![\w-])"
)
_CUDA_STEP = re.compile(r"(?<![\w-])--?cuda(?![\w-])(?=.*\.cu\b)")  # nvcc -cuda x.cu: only on a line compiling .cu
# A flag's value: quoted, or a word that may hold make/CMake references with nested parentheses
# (``$(maxregisters)``, ``$(call f,$(x))``, ``${N}``), taken whole so no closing parenthesis is left behind.
_REFERENCE_VALUE = r"\$\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|\$\{[^{}]*\}"
_WITH_VALUE = r"(?:=|\s+)(?:\"[^\"]*\"|'[^']*'|(?:" + _REFERENCE_VALUE + r"|[^\s\"'>()$])+)"
_DROPPED_WITH_VALUE = re.compile(r"(?<![\w-])(?:-Xptxas|--ptxas-options|-maxrregcount|--maxrregcount|-ccbin"
                                 r"|--compiler-bindir)" + _WITH_VALUE)
_XCOMPILER = re.compile(r"(?<![\w-])(?:-Xcompiler|--compiler-options)(?:=|\s+)(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'>)]+))")
_RDC = re.compile(r"(?<![\w-])(?:-rdc=true|--relocatable-device-code=true|-rdc\s+true)(?![\w-])")
_LINEINFO = re.compile(r"(?<![\w-])(?:-lineinfo|--generate-line-info)(?![\w-])")
_DEFAULT_STREAM = re.compile(r"(?<![\w-])--default-stream[= ]\s*per-thread\b")
_DEVICE_DEBUG = re.compile(r"(?<![\w-])-G(?![\w-])")
_FATBIN = re.compile(r"(?<![\w-])(?:-fatbin|--fatbin|-cubin|--cubin)(?![\w-])")
_PTX = re.compile(r"(?<![\w-])(?:-ptx|--ptx)(?![\w-])")
_X_CU = re.compile(r"(?<![\w-])-x\s+cu(?![\w-])")
_NVCC_CONTEXT = re.compile(r"nvcc|NVCC|CUDA_FLAGS|CUDA_NVCC|COMPILE_LANGUAGE:CUDA|COMPILE_LANGUAGE:HIP|HIP_FLAGS"
                           r"|hipcc|HIPCC|CUD_C|CUDA_FLAG\b|CMAKE_CUDA_COMPILER|CMAKE_HIP_COMPILER")


_ARCH_LIST_ENV = re.compile(r"\bTORCH_CUDA_ARCH_LIST\b(?:(=|\s*:\s*)(\"[\d.;+ PTXptx]*\"|'[\d.;+ PTXptx]*'|[\d.;+PTXptx]+))?")


def arch_list_hits(line: str, archs: Sequence[str]) -> list[RuleHit]:
    """``TORCH_CUDA_ARCH_LIST=8.0;9.0`` names compute capabilities; ROCm PyTorch reads gfx targets from
    PYTORCH_ROCM_ARCH."""
    hits = []
    for m in _ARCH_LIST_ENV.finditer(line):
        value = m.group(2)
        quote = value[0] if value and value[0] in "\"'" else ""
        replacement = "PYTORCH_ROCM_ARCH" + (f"{m.group(1)}{quote}{';'.join(archs)}{quote}" if value else "")
        hits.append(make_hit(m, "nvidia-arch-flag", "error", "TORCH_CUDA_ARCH_LIST lists CUDA compute capabilities; "
                             "ROCm PyTorch builds for the gfx targets in PYTORCH_ROCM_ARCH.",
                             notebook_slug="no-binary-for-gpu", replacement=replacement))
    return hits


def offload_flags(archs: Sequence[str], one_argument: bool = False) -> str:
    """``--offload-arch=`` per target; ``one_argument``: one flag listing them all (``--offload-arch=a,b``),
    for a single item of an argument list (a Python build's ``extra_compile_args``)."""
    if one_argument:
        return f"--offload-arch={','.join(archs)}"
    return " ".join(f"--offload-arch={arch}" for arch in archs)


def _arch_hits(line: str, archs: Sequence[str], loop_vars: frozenset[str], one_argument: bool = False) -> list[RuleHit]:
    hits = []
    for m in _ARCH.finditer(line):
        number = m.group(1) or m.group(3)
        variable = number.strip("${}()") if number.startswith("$") else ""
        replacement = f"--offload-arch=${{{variable}}}" if variable in loop_vars else offload_flags(archs, one_argument)
        quote = m.group("q") or ""
        hits.append(make_hit(m, "nvidia-arch-flag", "error", "NVIDIA GPU architecture flag; AMD targets are chosen "
                             "with --offload-arch (the project's offload_archs).", notebook_slug="no-binary-for-gpu",
                             replacement=quote + replacement + quote))
    hits += [make_hit(m, "nvidia-arch-flag", "error", "nvcc's -code list has no HIP meaning; --offload-arch names "
                      "the targets.", notebook_slug="no-binary-for-gpu", replacement="")
             for m in _CODE_FLAG.finditer(line) if not _inside(m, _ARCH, line)]
    return hits


def arch_variables(text: str) -> dict[str, bool]:
    """Variables a Makefile assigns, each with whether every value given to it is a GPU architecture
    (``ARCH = sm_60``): ``-arch=$(ARCH)`` is converted where the variable holds one, or is not assigned in
    this file (an included fragment or the command line sets it), and left alone where it holds anything else."""
    found: dict[str, bool] = {}
    for match in _ASSIGNMENT.finditer(text):
        found[match.group(1)] = found.get(match.group(1), True) and bool(_GPU_ARCH_VALUE.match(match.group(2)))
    return found


def variable_arch_hits(line: str, archs: Sequence[str], variables: dict[str, bool]) -> list[RuleHit]:
    """``-arch=$(ARCH)`` where ARCH names an NVIDIA architecture: the run's offload targets instead."""
    hits = []
    for m in _ARCH_VARIABLE.finditer(line):
        if variables.get(m.group(1) or m.group(2), True):
            hits.append(make_hit(m, "nvidia-arch-flag", "error", f"NVIDIA GPU architecture flag through the variable "
                                 f"{m.group(1) or m.group(2)}; AMD targets are chosen with --offload-arch (the "
                                 "project's offload_archs).", notebook_slug="no-binary-for-gpu",
                                 replacement=offload_flags(archs)))
    return hits


def _inside(match: re.Match[str], pattern: re.Pattern[str], line: str) -> bool:
    return any(o.start() <= match.start() < o.end() for o in pattern.finditer(line))


def split_gencode_value(value: str, archs: Sequence[str]) -> str | None:
    """The second item of ``'-gencode', 'arch=compute_80,code=sm_80'`` (lists, argument strings)."""
    return offload_flags(archs, one_argument=True) if _SPLIT_GENCODE_VALUE.match(value) else None


def _dropped_hits(line: str, nvcc_only: bool = False) -> list[RuleHit]:
    hits = [make_hit(m, "nvcc-only-flag", "error", "nvcc-only switch (lambdas, constexpr, resource usage); hipcc "
                     "(clang) rejects it and needs no such flag, so it is dropped.", replacement="")
            for m in _DROPPED.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "info", "nvcc's GPU-target warning switch; clang only warns about the "
                      "unknown option, so it is dropped.", replacement="") for m in _WARNING_ONLY.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "error", "nvcc's -cuda writes the host code as C++ for another "
                      "compiler; hipcc has no such step, so it is dropped.", replacement="")
             for m in _CUDA_STEP.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "error", "ptxas options, register caps and the host-compiler choice "
                      "are nvcc's own; hipcc has no ptxas and uses its clang, so the option and its value are "
                      "dropped.", replacement="") for m in _DROPPED_WITH_VALUE.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "error", "nvcc's compile threads; hipcc builds offload targets in "
                      "one process (use -parallel-jobs=N for parallel targets), so it is dropped.", replacement="")
             for m in _THREADS.finditer(line) if nvcc_only or _NVCC_CONTEXT.search(line)]
    return hits


def _mapped_hits(line: str, family: str) -> list[RuleHit]:
    hits = [make_hit(m, "nvcc-only-flag", "error", "nvcc's fast-math flag; clang/hipcc spells it -ffast-math.",
                     replacement="-ffast-math") for m in _FAST_MATH.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "error", "Relocatable device code is -fgpu-rdc under hipcc (pass it "
                      "to the link as well).", replacement="-fgpu-rdc") for m in _RDC.finditer(line)]
    for m in _XCOMPILER.finditer(line):
        value = next(g for g in m.groups() if g is not None)
        hits.append(make_hit(m, "nvcc-only-flag", "error", "hipcc passes host-compiler flags directly, so "
                             "-Xcompiler goes and its flags stay.", replacement=" ".join(value.split(","))))
    hits += [make_hit(m, "nvcc-only-flag", "error", "Line information for profilers is -gline-tables-only in "
                      "clang.", replacement="-gline-tables-only") for m in _LINEINFO.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "error", "Per-thread default stream is -fgpu-default-stream=per-thread "
                      "in hipcc.", replacement="-fgpu-default-stream=per-thread") for m in _DEFAULT_STREAM.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "error", "-x cu selects CUDA; hipcc/clang read HIP with -x hip.",
                      replacement="-x hip") for m in _X_CU.finditer(line)]
    if _NVCC_CONTEXT.search(line):
        hits += [make_hit(m, "nvcc-only-flag", "error", "nvcc's device debug flag; clang has no -G for GPU code, "
                          "-ggdb gives host and device debug information.", replacement="-ggdb")
                 for m in _DEVICE_DEBUG.finditer(line)]
    code_object = "-x hip --cuda-device-only" if family == "cmake" else "--genco"
    hits += [make_hit(m, "nvcc-only-flag", "error", f"{m.group(0)} asks nvcc for a CUDA fat binary/cubin for the "
                      f"driver API. HIP's counterpart is a code object built with {code_object} and loaded with "
                      "hipModuleLoad; the file keeps its name.", replacement=code_object) for m in _FATBIN.finditer(line)]
    hits += [make_hit(m, "nvcc-only-flag", "error", "PTX is NVIDIA's virtual ISA and has no HIP equivalent; build a "
                      "code object (--genco) and load it with hipModuleLoad, or compile the kernels into the "
                      "program.") for m in _PTX.finditer(line)]
    return hits


def nvcc_flag_hits(line: str, archs: Sequence[str], family: str,
                   loop_vars: frozenset[str] = frozenset(), *, nvcc_only: bool = False) -> list[RuleHit]:
    """Every nvcc-only flag of one line, with its replacement when one is safe. ``nvcc_only``: the line holds
    nvcc's flags alone (an extension's ``extra_compile_args['nvcc']``), so ``-t N`` is nvcc's without nvcc named."""
    return (_arch_hits(line, archs, loop_vars, family == "python-build") + _dropped_hits(line, nvcc_only)
            + _mapped_hits(line, family) + arch_list_hits(line, archs))
