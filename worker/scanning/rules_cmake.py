"""CMake rules: FindCUDA, the CUDA language, CUDA:: targets, CMAKE_CUDA_* and .cu sources.

CMake has no maintained Python parser, so this reads lines and tracks which command a
line belongs to (commands may span lines) by counting parentheses outside quotes.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from worker.scanning.libraries import CMAKE_TARGET_MAP, LINK_LIBRARY_MAP
from worker.scanning.model import Finding, RuleHit, to_finding
from worker.scanning.rules_commands import compiler_hits, library_hits, make_hit

_COMMAND = re.compile(r"^\s*([A-Za-z_]\w*)\s*\(")
_FIND_CUDA = re.compile(r"find_package\s*\(\s*CUDA\b[^)]*\)?", re.IGNORECASE)
_FIND_TOOLKIT = re.compile(r"find_package\s*\(\s*CUDAToolkit\b", re.IGNORECASE)
_GENEX_CUDA = re.compile(r"\$<(?:\$<)?COMPILE_LANG(?:UAGE|_AND_ID):CUDA\b")
_ENABLE_CUDA = re.compile(r"\b(enable_language|check_language)\s*\(\s*CUDA\s*\)", re.IGNORECASE)
_SIMPLE_MACROS = {"cuda_add_executable": "add_executable", "cuda_add_library": "add_library",
                  "cuda_include_directories": "include_directories"}
_MACRO = re.compile(r"\bcuda_(?:add_executable|add_library|include_directories|add_cublas_to_target"
                    r"|add_cufft_to_target|compile|compile_ptx|wrap_srcs|select_nvcc_arch_flags|build_clean_target)\b",
                    re.IGNORECASE)
_FINDCUDA_VAR = re.compile(r"\bCUDA_(?:NVCC_FLAGS\w*|INCLUDE_DIRS|LIBRARIES|CUBLAS_LIBRARIES|CUFFT_LIBRARIES"
                           r"|curand_LIBRARY|cusparse_LIBRARY|cusolver_LIBRARY|cudart_static_LIBRARY"
                           r"|SEPARABLE_COMPILATION|PROPAGATE_HOST_FLAGS|HOST_COMPILER|VERSION\w*|FOUND)\b")
_TARGET = re.compile(r"\bCUDA::(\w+)")
_CMAKE_CUDA = re.compile(r"\bCMAKE_CUDA_(\w+)")
_RENAMEABLE = {"STANDARD", "STANDARD_REQUIRED", "EXTENSIONS"}
_CUDA_PROPERTY = re.compile(r"\bCUDA_(ARCHITECTURES|STANDARD|SEPARABLE_COMPILATION|RESOLVE_DEVICE_SYMBOLS|RUNTIME_LIBRARY)\b")
_CU_SOURCE = re.compile(r"[\w./${}*-]*\.cu\b(?![\w.])")
_BARE_LIB = re.compile(r"(?<![\w:${}/.-])(" + "|".join(sorted(LINK_LIBRARY_MAP, key=len, reverse=True)) + r")(?![\w:.-])")
_LINK_COMMANDS = {"target_link_libraries", "link_libraries"}
_SOURCE_COMMANDS = {"add_executable", "add_library", "target_sources", "cuda_add_executable", "cuda_add_library",
                    "set", "list", "file"}

SLUG = "cmake-findcuda"


def _strip_comment(line: str) -> str:
    in_quote = False
    for index, char in enumerate(line):
        if char == '"':
            in_quote = not in_quote
        elif char == "#" and not in_quote:
            return line[:index]
    return line


def commands_by_line(lines: list[str]) -> Iterator[tuple[str, str]]:
    """(command name in lower case or "", code without comments) for each line."""
    depth, command = 0, ""
    for raw in lines:
        code = _strip_comment(raw)
        if depth <= 0:
            match = _COMMAND.match(code)
            command, depth = (match.group(1).lower() if match else ""), 0
        yield command, code
        depth += code.count("(") - code.count(")")


def _find_package_hits(code: str) -> list[RuleHit]:
    hits: list[RuleHit] = []
    for m in _FIND_CUDA.finditer(code):
        whole_call = m.group(0).endswith(")") and "COMPONENTS" not in m.group(0).upper()
        hits.append(make_hit(m, "find-package-cuda", "error", "FindCUDA is deprecated and absent on ROCm; find "
                             "the HIP package instead and link hip::host or hip::device.", notebook_slug=SLUG,
                             replacement="find_package(hip REQUIRED)" if whole_call else None,
                             suggestion=None if whole_call else "find_package(hip REQUIRED)"))
    hits += [make_hit(m, "find-package-cudatoolkit", "error", "CUDAToolkit provides CUDA:: targets only; on ROCm "
                      "use find_package(hip) and the hipblas/hipfft/... packages.", notebook_slug=SLUG,
                      suggestion="find_package(hip REQUIRED)") for m in _FIND_TOOLKIT.finditer(code)]
    hits += [make_hit(m, "enable-language-cuda", "error", "The CUDA language needs nvcc; CMake 3.21+ has the "
                      "HIP language for hipcc/clang.", notebook_slug=SLUG,
                      replacement=f"{m.group(1)}(HIP)") for m in _ENABLE_CUDA.finditer(code)]
    hits += [make_hit(m, "cuda-generator-expression", "warning", "Generator expression for CUDA sources; with "
                      "the HIP language it must name HIP.", notebook_slug=SLUG,
                      replacement=m.group(0)[:-4] + "HIP") for m in _GENEX_CUDA.finditer(code)]
    return hits


def _macro_hits(code: str) -> list[RuleHit]:
    hits = []
    for m in _MACRO.finditer(code):
        target = _SIMPLE_MACROS.get(m.group(0).lower())
        safe = target is not None and "OPTIONS" not in code
        hits.append(make_hit(m, "findcuda-macro", "error", f"{m.group(0)} is a FindCUDA macro; use the plain "
                             "CMake command with the HIP language (mark .cu sources LANGUAGE HIP).",
                             notebook_slug=SLUG, replacement=target if safe else None))
    hits += [make_hit(m, "findcuda-variable", "warning", f"{m.group(0)} is set by FindCUDA/nvcc; HIP builds use "
                      "CMAKE_HIP_FLAGS, hip::device and ROCm package variables.", notebook_slug=SLUG)
             for m in _FINDCUDA_VAR.finditer(code)]
    return hits


def _target_hits(code: str, command: str) -> list[RuleHit]:
    hits = [make_hit(m, "cuda-imported-target", "error", f"{m.group(0)} comes from FindCUDAToolkit; link "
                     f"{CMAKE_TARGET_MAP.get(m.group(1), 'the ROCm counterpart')} after find_package of its package.",
                     notebook_slug="cuda-link-libraries", suggestion=CMAKE_TARGET_MAP.get(m.group(1)))
            for m in _TARGET.finditer(code)]
    for m in _CMAKE_CUDA.finditer(code):
        renamed = f"CMAKE_HIP_{m.group(1)}" if m.group(1) in _RENAMEABLE else None
        hits.append(make_hit(m, "cmake-cuda-variable", "warning", f"{m.group(0)} configures the CUDA language; "
                             "the HIP language reads CMAKE_HIP_* (architectures are gfx targets).",
                             notebook_slug=SLUG, replacement=renamed, suggestion=None if renamed else f"CMAKE_HIP_{m.group(1)}"))
    hits += [make_hit(m, "cuda-property", "warning", f"{m.group(0)} is a CUDA target property; HIP uses HIP_* "
                      "properties (HIP_ARCHITECTURES takes gfx targets).", notebook_slug=SLUG,
                      suggestion=f"HIP_{m.group(1)}") for m in _CUDA_PROPERTY.finditer(code)]
    if command in _LINK_COMMANDS:
        hits += [make_hit(m, "cuda-link-library", "error", f"Links the CUDA library {m.group(1)}; its ROCm "
                          f"counterpart is {LINK_LIBRARY_MAP[m.group(1)]}.", notebook_slug="cuda-link-libraries",
                          replacement=LINK_LIBRARY_MAP[m.group(1)]) for m in _BARE_LIB.finditer(code)]
    return hits


def _project_hits(code: str, command: str) -> list[RuleHit]:
    if command != "project":
        return []
    return [make_hit(m, "project-language-cuda", "error", "project() enables the CUDA language, which needs "
                     "nvcc; CMake 3.21+ offers HIP.", notebook_slug=SLUG, replacement="HIP")
            for m in re.finditer(r"(?<![\w:])CUDA(?![\w:])", code)]


def _cu_source_hits(lines: list[str], rel: str) -> list[Finding]:
    text = "\n".join(lines)
    if re.search(r"LANGUAGE\s+HIP\b", text):
        return []
    findings = []
    for number, (command, code) in enumerate(commands_by_line(lines), start=1):
        if command not in _SOURCE_COMMANDS:
            continue
        for m in _CU_SOURCE.finditer(code):
            hit = make_hit(m, "cu-source-language", "warning", ".cu files are compiled as CUDA by extension; "
                           "mark them LANGUAGE HIP so hipcc/clang builds them.", notebook_slug=SLUG,
                           suggestion=f"set_source_files_properties({m.group(0)} PROPERTIES LANGUAGE HIP)")
            findings.append(to_finding(hit, rel, number, "cmake"))
    return findings


def scan_cmake(rel: str, text: str) -> list[Finding]:
    lines = text.splitlines()
    findings: list[Finding] = []
    for number, (command, code) in enumerate(commands_by_line(lines), start=1):
        if not code.strip():
            continue
        hits = _find_package_hits(code) + _macro_hits(code) + _target_hits(code, command)
        hits += _project_hits(code, command) + compiler_hits(code) + library_hits(code)
        findings += [to_finding(hit, rel, number, "cmake") for hit in hits]
    return findings + _cu_source_hits(lines, rel)
