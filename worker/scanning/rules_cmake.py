"""CMake rules: FindCUDA, the CUDA language, CUDA:: targets, CMAKE_CUDA_* and .cu sources.

The safe fixes together turn a CUDA CMake project into one that configures and builds with
CMake's HIP language: the language (``project``/``enable_language``), the packages
(``find_package(hip)`` plus each ROCm library package the tree links), the imported targets,
the architectures (the project's gfx targets), the flags and the ``.cu`` sources (marked
``LANGUAGE HIP`` after each target that lists them, literally or through variables).
"""
from __future__ import annotations

import posixpath
import re

from worker.scanning.cmake_sources import (
    aux_source_insertions,
    commands,
    commands_by_line,
    host_link_insertions,
    language_insertions,
)
from worker.scanning.libraries import CMAKE_TARGET_MAP, LINK_LIBRARY_MAP
from worker.scanning.model import Finding, RuleHit, ScanContext, make_hit, to_finding
from worker.scanning.rules_commands import compiler_hits, host_compiler_hits, library_hits
from worker.scanning.rules_renames import renamed_source_hits
from worker.scanning.rules_roctx import cmake_roctx_findings

_FIND_CUDA = re.compile(r"find_package\s*\(\s*(CUDA|CUDAToolkit)\b([^)]*)(\)?)", re.IGNORECASE)
_GENEX_CUDA = re.compile(r"\$<(?:COMPILE_LANG(?:UAGE|_AND_ID)|LINK_LANGUAGE|LINK_LANG_AND_ID):[\w,]*")
_ENABLE_CUDA = re.compile(r"\b(enable_language|check_language)\s*\(\s*CUDA\s*\)", re.IGNORECASE)
_PROJECT_CUDA = re.compile(r"\bproject\s*\([^)]*\bCUDA\b", re.IGNORECASE)
_ENABLED_HIP = re.compile(r"\benable_language\s*\(\s*HIP\b|\bproject\s*\([^)]*\bHIP\b", re.IGNORECASE)
_SIMPLE_MACROS = {"cuda_add_executable": "add_executable", "cuda_add_library": "add_library",
                  "cuda_include_directories": "include_directories"}
_MACRO = re.compile(r"\bcuda_(?:add_executable|add_library|include_directories|compile|compile_ptx|compile_fatbin"
                    r"|compile_cubin|wrap_srcs|select_nvcc_arch_flags|build_clean_target)\b", re.IGNORECASE)
_ADD_TO_TARGET = re.compile(r"\bcuda_add_(cublas|cufft)_to_target\s*\(\s*([^\s()]+)\s*\)", re.IGNORECASE)
# FindCUDA and FindCUDAToolkit result variables with a hip-config counterpart (used as ${NAME}).
_VARIABLE_MAP = {
    "CUDA_INCLUDE_DIRS": "hip_INCLUDE_DIRS", "CUDA_TOOLKIT_INCLUDE": "hip_INCLUDE_DIRS", "CUDA_FOUND": "hip_FOUND",
    "CUDAToolkit_INCLUDE_DIRS": "hip_INCLUDE_DIRS", "CUDAToolkit_INCLUDE_DIR": "hip_INCLUDE_DIRS",
    "CUDAToolkit_LIBRARY_DIR": "hip_LIB_INSTALL_DIR", "CUDAToolkit_BIN_DIR": "hip_BIN_INSTALL_DIR",
    "CUDAToolkit_NVCC_EXECUTABLE": "hip_HIPCC_EXECUTABLE", "CUDAToolkit_FOUND": "hip_FOUND",
    "CUDA_NVCC_EXECUTABLE": "hip_HIPCC_EXECUTABLE",
}
_LIBRARY_VARIABLES = {"CUDA_LIBRARIES": "hip::host", "CUDA_CUDART_LIBRARY": "hip::host",
                      "CUDA_CUDA_LIBRARY": "hip::host", "CUDA_cudart_static_LIBRARY": "hip::host",
                      "CUDA_CUBLAS_LIBRARIES": "roc::hipblas", "CUDA_cublas_LIBRARY": "roc::hipblas",
                      "CUDA_CUFFT_LIBRARIES": "hip::hipfft", "CUDA_cufft_LIBRARY": "hip::hipfft",
                      "CUDA_curand_LIBRARY": "hip::hiprand", "CUDA_cusparse_LIBRARY": "roc::hipsparse",
                      "CUDA_cusolver_LIBRARY": "roc::hipsolver", "CUDA_nvml_LIBRARY": "rocm_smi64"}
_MAPPED_VARIABLE = re.compile(r"\$\{(" + "|".join(sorted({*_VARIABLE_MAP, *_LIBRARY_VARIABLES}, key=len, reverse=True))
                              + r")\}")
_FINDCUDA_VAR = re.compile(r"\bCUDA_(?:NVCC_FLAGS\w*|INCLUDE_DIRS|LIBRARIES|CUBLAS_LIBRARIES|CUFFT_LIBRARIES"
                           r"|\w+_LIBRARY|SEPARABLE_COMPILATION|PROPAGATE_HOST_FLAGS|HOST_COMPILER|VERSION\w*|FOUND"
                           r"|TOOLKIT_INCLUDE|TOOLKIT_ROOT_DIR|NVCC_EXECUTABLE|ARCH_LIST|ATTACH_VS_BUILD_RULE_TO_CUDA_FILE"
                           r"|64_BIT_DEVICE_CODE|BUILD_EMULATION|GENERATED_OUTPUT_DIR|SDK_ROOT_DIR|VERBOSE_BUILD)\b"
                           r"|\bCUDAToolkit_\w+\b")
_TARGET = re.compile(r"\bCUDA::(\w+)")
_CMAKE_CUDA = re.compile(r"\bCMAKE_CUDA_(\w+)")
_RENAMEABLE = re.compile(r"FLAGS(?:_\w+)?|STANDARD|STANDARD_REQUIRED|EXTENSIONS|ARCHITECTURES|COMPILER|COMPILER_ID"
                         r"|COMPILER_VERSION|COMPILER_LAUNCHER|USE_RESPONSE_FILE_FOR_\w+|COMPILE_FEATURES"
                         r"|VISIBILITY_PRESET|CLANG_TIDY|OUTPUT_EXTENSION")
_SET_ARCHITECTURES = re.compile(r"\bset\s*\(\s*CMAKE_CUDA_ARCHITECTURES\b[^)]*\)", re.IGNORECASE)
_ARCH_LOOP = re.compile(r"\bforeach\s*\(\s*(\w+)\s+(?:IN\s+LISTS\s+CMAKE_(?:CUDA|HIP)_ARCHITECTURES|"
                        r"\$\{CMAKE_(?:CUDA|HIP)_ARCHITECTURES\})", re.IGNORECASE)
_PROPERTY = re.compile(r"\bCUDA_(ARCHITECTURES|STANDARD_REQUIRED|STANDARD|EXTENSIONS|SEPARABLE_COMPILATION"
                       r"|RESOLVE_DEVICE_SYMBOLS|RUNTIME_LIBRARY|PTX_COMPILATION)\b(?:\s+(\"[^\"]*\"|[^\s)]+))?")
_SOLE_SEPARABLE = re.compile(r"^\s*set_target_properties\s*\(\s*([^\s()]+)\s+PROPERTIES\s+CUDA_SEPARABLE_COMPILATION"
                             r"\s+\w+\s*\)\s*$", re.IGNORECASE)
_STD_FEATURE = re.compile(r"\bcuda_std_(\d+)\b")
_BARE_LIB = re.compile(r"(?<![\w:${}/.-])(" + "|".join(sorted(LINK_LIBRARY_MAP, key=len, reverse=True)) + r")(?![\w:.-])")
_LINK_COMMANDS = {"target_link_libraries", "link_libraries"}

SLUG = "cmake-findcuda"


def _find_package_hits(code: str, rel: str, ctx: ScanContext) -> list[RuleHit]:
    hits: list[RuleHit] = []
    for m in _FIND_CUDA.finditer(code):
        whole = bool(m.group(3))
        required = " REQUIRED" if "REQUIRED" in m.group(2).upper() else ""
        packages = sorted(ctx.cmake_libraries_below(posixpath.dirname(rel)))
        calls = [f"find_package(hip{required})"] + [f"find_package({p}{required})" for p in packages]
        name = "find-package-cuda" if m.group(1).upper() == "CUDA" else "find-package-cudatoolkit"
        hits.append(make_hit(m, name, "error", f"{m.group(1)} is NVIDIA's package; ROCm's are hip (hip::host, "
                             "hip::device) and one package per library (hipblas, hipfft, ...), found here for the "
                             "libraries this directory links.", notebook_slug=SLUG,
                             replacement="\n".join(calls) if whole else None, suggestion=" ".join(calls)))
    hits += [make_hit(m, "enable-language-cuda", "error", "The CUDA language needs nvcc; CMake 3.21+ has the "
                      "HIP language for hipcc/clang.", notebook_slug=SLUG,
                      replacement=f"{m.group(1)}(HIP)") for m in _ENABLE_CUDA.finditer(code)]
    for m in _GENEX_CUDA.finditer(code):
        if re.search(r"\bCUDA\b", m.group(0)):
            hits.append(make_hit(m, "cuda-generator-expression", "warning", "Generator expression for CUDA sources; "
                                 "with the HIP language it must name HIP (compiler id Clang).", notebook_slug=SLUG,
                                 replacement=re.sub(r"\bCUDA\b", "HIP", m.group(0)).replace("NVIDIA", "Clang")))
    return hits


def _macro_hits(code: str) -> list[RuleHit]:
    hits = []
    for m in _MACRO.finditer(code):
        target = _SIMPLE_MACROS.get(m.group(0).lower())
        safe = target is not None and "OPTIONS" not in code
        hits.append(make_hit(m, "findcuda-macro", "error", f"{m.group(0)} is a FindCUDA macro; use the plain "
                             "CMake command with the HIP language (.cu sources marked LANGUAGE HIP).",
                             notebook_slug=SLUG, replacement=target if safe else None))
    for m in _ADD_TO_TARGET.finditer(code):
        target = CMAKE_TARGET_MAP[m.group(1).lower()]
        hits.append(make_hit(m, "findcuda-macro", "error", f"{m.group(0)} links a CUDA library; link {target} "
                             "instead.", notebook_slug=SLUG, replacement=f"target_link_libraries({m.group(2)} {target})"))
    for m in _MAPPED_VARIABLE.finditer(code):
        new = _VARIABLE_MAP.get(m.group(1))
        replacement = f"${{{new}}}" if new else _LIBRARY_VARIABLES[m.group(1)]
        hits.append(make_hit(m, "findcuda-variable", "warning", f"{m.group(1)} is set by NVIDIA's package; "
                             f"the ROCm counterpart is {replacement}.", notebook_slug=SLUG, replacement=replacement))
    mapped = {m.start(1) for m in _MAPPED_VARIABLE.finditer(code)}
    hits += [make_hit(m, "findcuda-variable", "warning", f"{m.group(0)} is set by FindCUDA/FindCUDAToolkit; HIP "
                      "builds use CMAKE_HIP_FLAGS, hip::device and the hip package's variables.", notebook_slug=SLUG)
             for m in _FINDCUDA_VAR.finditer(code) if m.start() not in mapped]
    return hits


def _target_hits(code: str, command: str, ctx: ScanContext) -> list[RuleHit]:
    hits = []
    for m in _TARGET.finditer(code):
        target = CMAKE_TARGET_MAP.get(m.group(1))
        hits.append(make_hit(m, "cuda-imported-target", "error", f"{m.group(0)} comes from FindCUDAToolkit; "
                             + (f"ROCm's target is {target}." if target else "ROCm has no counterpart of this "
                                "library; port its use by hand."), notebook_slug="cuda-link-libraries",
                             replacement=target, suggestion=target))
    archs = ";".join(ctx.offload_archs)
    for m in _SET_ARCHITECTURES.finditer(code):
        hits.append(make_hit(m, "cmake-cuda-variable", "warning", "CUDA architectures become the project's AMD GPU "
                             "targets in CMAKE_HIP_ARCHITECTURES.", notebook_slug="no-binary-for-gpu",
                             replacement=f"set(CMAKE_HIP_ARCHITECTURES {archs})"))
    inside_set = [(m.start(), m.end()) for m in _SET_ARCHITECTURES.finditer(code)]
    for m in _CMAKE_CUDA.finditer(code):
        if any(a <= m.start() < b for a, b in inside_set):
            continue
        renamed = f"CMAKE_HIP_{m.group(1)}" if _RENAMEABLE.fullmatch(m.group(1)) else None
        hits.append(make_hit(m, "cmake-cuda-variable", "warning", f"{m.group(0)} configures the CUDA language; "
                             "the HIP language reads CMAKE_HIP_*" + ("." if renamed else " and has no such setting."),
                             notebook_slug=SLUG, replacement=renamed, suggestion=renamed))
    hits += _property_hits(code, archs)
    hits += [make_hit(m, "cuda-property", "warning", "CMake's HIP language names this compile feature hip_std_*.",
                      notebook_slug=SLUG, replacement=f"hip_std_{m.group(1)}") for m in _STD_FEATURE.finditer(code)]
    if command in _LINK_COMMANDS:
        hits += [make_hit(m, "cuda-link-library", "error", f"Links the CUDA library {m.group(1)}; its ROCm "
                          f"counterpart is {LINK_LIBRARY_MAP[m.group(1)]}.", notebook_slug="cuda-link-libraries",
                          replacement=LINK_LIBRARY_MAP[m.group(1)]) for m in _BARE_LIB.finditer(code)]
    return hits


def _property_hits(code: str, archs: str) -> list[RuleHit]:
    hits = []
    sole = _SOLE_SEPARABLE.match(code.rstrip("\n"))
    for m in _PROPERTY.finditer(code):
        name, value = m.group(1), m.group(2)
        replacement: str | None = None
        if name == "ARCHITECTURES":
            replacement = f'HIP_ARCHITECTURES "{archs}"' if value else None
        elif name in ("STANDARD", "STANDARD_REQUIRED", "EXTENSIONS"):
            replacement = m.group(0).replace("CUDA_", "HIP_", 1)
        elif name == "SEPARABLE_COMPILATION" and sole:
            continue  # the whole statement is rewritten below
        elif name == "SEPARABLE_COMPILATION" and value:
            replacement = ""
        hits.append(make_hit(m, "cuda-property", "warning", f"CUDA_{name} is a CUDA target property; the HIP "
                             "language reads HIP_* properties (HIP_ARCHITECTURES takes gfx targets); separable "
                             "compilation is -fgpu-rdc in compile and link options.", notebook_slug=SLUG,
                             replacement=replacement, suggestion=None if replacement is not None else f"HIP_{name}"))
    if sole:
        start = len(code) - len(code.lstrip())
        text = code.rstrip("\n").rstrip()[start:]
        hits.append(RuleHit("cuda-property", "warning", start, text, "CMake's HIP language has no separable "
                            "compilation property; most programs do not need relocatable device code. Where device "
                            "code calls across files, add -fgpu-rdc to the HIP compile and link options.",
                            replacement=f"# {text}  (HIP: no separable compilation; -fgpu-rdc where needed)",
                            notebook_slug=SLUG))
    return hits


def _project_hits(code: str, command: str, project_languages: set[str]) -> list[RuleHit]:
    if command != "project":
        return []
    # hip-config needs C or CXX enabled (FindThreads), so a CUDA-only project gains CXX.
    replacement = "HIP" if project_languages & {"C", "CXX"} else "CXX HIP"
    return [make_hit(m, "project-language-cuda", "error", "project() enables the CUDA language, which needs "
                     "nvcc; CMake 3.21+ offers HIP.", notebook_slug=SLUG, replacement=replacement)
            for m in re.finditer(r"(?<![\w:${])CUDA(?![\w:}])", code)]


def _structure_findings(lines: list[str], rel: str, ctx: ScanContext) -> list[Finding]:
    """Lines to insert: LANGUAGE HIP for each target's .cu sources, and the HIP language where the
    project enables neither CUDA nor HIP although it builds .cu files."""
    findings = []
    for last, items, elsewhere in language_insertions(lines):
        items = [_renamed(item, ctx) for item in items]
        body = lines[last - 1].rstrip("\r\n")
        scope = f" TARGET_DIRECTORY {elsewhere}" if elsewhere else ""
        statement = f"set_source_files_properties({' '.join(items)}{scope} PROPERTIES LANGUAGE HIP)"
        hit = RuleHit("cu-source-language", "error", len(body), "", ".cu files are compiled as CUDA by extension; "
                      "they build as HIP once marked LANGUAGE HIP.", replacement="\n" + statement,
                      notebook_slug=SLUG, suggestion=statement)
        findings.append(to_finding(hit, rel, last, "cmake"))
    if ctx.builds_cuda_host_code(rel):
        for last, target, keyword in host_link_insertions(lines):
            statement = f"target_link_libraries({target}{' PRIVATE' if keyword else ''} hip::host)"
            hit = RuleHit("hip-host-link", "error", len(lines[last - 1].rstrip("\r\n")), "", "C/C++ sources of this "
                          "target include CUDA headers, which become HIP's; compiled as C/C++ they need hip::host "
                          "(its __HIP_PLATFORM_AMD__ definition and the HIP runtime).", replacement="\n" + statement,
                          notebook_slug="hip-runtime-not-linked", suggestion=statement)
            findings.append(to_finding(hit, rel, last, "cmake"))
    text = "\n".join(lines)
    has_language = _ENABLED_HIP.search(text) or _ENABLE_CUDA.search(text)
    if has_language or _PROJECT_CUDA.search(text):
        findings += _aux_source_findings(lines, rel)
    project = next((c for c in commands(lines) if c.name == "project"), None)
    if any(f.rule_id == "cmake.cu-source-language" for f in findings) and project and not has_language and "CUDA" not in project.arguments:
        body = lines[project.last - 1].rstrip("\r\n")
        hit = RuleHit("project-language-cuda", "error", len(body), "", "This project builds .cu files but enables "
                      "no GPU language; HIP sources need enable_language(HIP).", replacement="\nenable_language(HIP)",
                      notebook_slug=SLUG)
        findings.append(to_finding(hit, rel, project.last, "cmake"))
    return findings


def _aux_source_findings(lines: list[str], rel: str) -> list[Finding]:
    findings = []
    for last, folder, variable in aux_source_insertions(lines):
        sources = f"{variable}_CUDA_SOURCES"
        pattern = f"{folder.rstrip('/')}/*.cu" if folder not in (".", "") else "*.cu"
        block = (f'file(GLOB {sources} CONFIGURE_DEPENDS "{pattern}")\n'
                 f"set_source_files_properties(${{{sources}}} PROPERTIES LANGUAGE HIP)\n"
                 f"list(APPEND {variable} ${{{sources}}})")
        hit = RuleHit("aux-source-directory-cuda", "error", len(lines[last - 1].rstrip("\r\n")), "",
                      "aux_source_directory lists the files of the enabled languages' extensions; the HIP "
                      "language's is .hip, so the .cu files of this folder are dropped unless added as HIP sources.",
                      replacement="\n" + block, notebook_slug=SLUG, suggestion=block)
        findings.append(to_finding(hit, rel, last, "cmake"))
    return findings


def scan_cmake(rel: str, text: str, ctx: ScanContext | None = None) -> list[Finding]:
    ctx = ctx or ScanContext()
    lines = text.splitlines()
    loop_vars = frozenset(m.group(1) for m in _ARCH_LOOP.finditer(text))
    project = next((c for c in commands(lines) if c.name == "project"), None)
    languages = set(project.arguments[1:]) if project else set()
    findings: list[Finding] = []
    for number, (command, code) in enumerate(commands_by_line(lines), start=1):
        if not code.strip():
            continue
        hits = _find_package_hits(code, rel, ctx) + _macro_hits(code) + _target_hits(code, command, ctx)
        hits += _project_hits(code, command, languages) + compiler_hits(code, ctx.offload_archs, "cmake", loop_vars)
        hits += library_hits(code) + host_compiler_hits(code, host_cc=False) + renamed_source_hits(rel, code, ctx)
        findings += [to_finding(hit, rel, number, "cmake") for hit in hits]
    return findings + _structure_findings(lines, rel, ctx) + cmake_roctx_findings(lines, rel, ctx)


def _renamed(item: str, ctx: ScanContext) -> str:
    name = item.rsplit("/", 1)[-1]
    hit = item.endswith(".cu") and any(p.rsplit("/", 1)[-1] == name for p in ctx.renamed_cu)
    return item[:-3] + ".hip" if hit else item
