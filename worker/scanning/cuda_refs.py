"""CUDA references in one source file: API identifiers, kernels, launch sites, library
headers and constructs that have no automatic path to HIP."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from translator import handwork
from worker.scanning.libraries import HEADER_LIBRARIES

# The leading character class (instead of \b) lets the regex engine skip ahead quickly: ~7x faster.
_IDENTIFIER = re.compile(
    r"[cCnN](?<![\w][cCnN])(?:(?<=c)(?:uda|ublas|ublasLt|udnn|ufft|urand|usparse|usolver|utensor|u)[A-Z]\w*"
    r"|(?<=n)(?:ccl|vrtc|vtx)[A-Z]\w*|(?<=C)(?:UDA|UBLAS|UDNN|UFFT|URAND|USPARSE|USOLVER)_[A-Z0-9_]+\b"
    r"|(?<=N)CCL_[A-Z0-9_]+\b)"
)
_SOURCE_HINTS = ("cu", "CU", "nccl", "NCCL", "nvrtc", "nvtx", "__", "::", "asm")
_PRODUCT_NAME = re.compile(r"cu[A-Z]+(?:Lt)?")  # cuBLAS, cuDNN, cuBLASLt in comments and messages
# Words that may precede a type in a use (``const cudaDeviceProp&``, ``return cudaSuccess``).
_NOT_TYPES = frozenset(
    ["return", "case", "else", "new", "delete", "throw", "sizeof", "alignof", "decltype", "const", "volatile", "static", "inline", "extern", "struct", "class", "enum", "union", "typename", "template", "using", "namespace", "goto", "do", "if", "while", "for", "switch", "unsigned", "signed", "register", "constexpr", "co_return", "co_yield", "not", "and", "or", "public", "private", "protected", "friend", "virtual", "explicit", "operator", "__host__", "__device__", "__forceinline__", "__shared__", "__constant__", "__managed__", "auto", "export", "import"]
)
_KERNEL = re.compile(
    r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:[\w:<>,*&]+\s+)*?"
    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\("
)
_CHEVRON = re.compile(r"<<<")
_LAUNCH_CALL = re.compile(r"\b(cudaLaunchKernel|cudaLaunchCooperativeKernel|cuLaunchKernel)\s*\(")
_INCLUDE = re.compile(r"#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]")
_NAMESPACES = re.compile(r"\b(thrust|cub|cooperative_groups|nvcuda::wmma|wmma)::")
_NAMESPACE_HINTS = ("thrust::", "cub::", "cooperative_groups::", "wmma::")
# Inline PTX and tensor cores are found by the translator's own detector (translator.handwork), the one the
# translation account uses for what it leaves, so the scan's counts and the readiness agree; code that
# assumes 32-lane warps is the wavefront scan's (translator.wavefront), in the readiness.
_CONSTRUCTS = {
    "texture-objects": re.compile(r"\btex[123]D\w*\s*<|\bsurf[123]D\w*\s*\("),
}
# A construct's regex runs only when one of its hint substrings occurs (a cheap pre-check).
_CONSTRUCT_HINTS = {"texture-objects": ("tex1D", "tex2D", "tex3D", "surf1D", "surf2D", "surf3D")}
_NAMESPACE_LIBRARY = {"thrust": "Thrust", "cub": "CUB", "cooperative_groups": "cooperative groups",
                      "nvcuda::wmma": "WMMA", "wmma": "WMMA"}
CUDA_SUFFIXES = (".cu", ".cuh")


@dataclass
class Location:
    name: str
    file: str
    line: int


@dataclass
class SourceRefs:
    identifiers: Counter[str] = field(default_factory=Counter)
    defined: set[str] = field(default_factory=set)  # CUDA-looking names this code defines itself
    libraries: Counter[str] = field(default_factory=Counter)
    constructs: Counter[str] = field(default_factory=Counter)
    construct_sites: list[Location] = field(default_factory=list)
    kernels: list[Location] = field(default_factory=list)
    launches: list[Location] = field(default_factory=list)

    @property
    def is_cuda(self) -> bool:
        return bool(self.identifiers or self.kernels or self.launches or self.libraries)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _is_definition(text: str, start: int) -> bool:
    """Whether the name at ``start`` is being declared (``#define name``, ``Type name``), not used."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start].rstrip(" \t*&")
    if before.endswith("define") and before.lstrip().startswith("#"):
        return True
    word_start = len(before)
    while word_start > 0 and (before[word_start - 1].isalnum() or before[word_start - 1] == "_"):
        word_start -= 1
    previous = before[word_start:]
    return bool(previous) and not previous[0].isdigit() and previous not in _NOT_TYPES


def _collect_identifiers(refs: SourceRefs, text: str) -> None:
    for m in _IDENTIFIER.finditer(text):
        name = m.group(0)
        if _PRODUCT_NAME.fullmatch(name):
            continue
        if _is_definition(text, m.start()):
            refs.defined.add(name)
        else:
            refs.identifiers[name] += 1


def _skip_blanks_back(text: str, end: int) -> int:
    while end > 0 and text[end - 1].isspace():
        end -= 1
    return end


def _name_before(text: str, end: int) -> str:
    """The identifier just before ``end``, skipping blanks and one template argument list."""
    end = _skip_blanks_back(text, end)
    if end and text[end - 1] == ">":
        opening = text.rfind("<", max(0, end - 200), end)
        if opening < 0 or any(c in text[opening:end] for c in ";()"):
            return ""
        end = _skip_blanks_back(text, opening)
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return text[start:end]


def _launches(rel: str, text: str) -> list[Location]:
    """Kernel launches: ``name<<<`` (the name is read backwards from each chevron) and launch API calls."""
    found: list[tuple[int, str]] = []
    if "<<<" in text:
        for m in _CHEVRON.finditer(text):
            name = _name_before(text, m.start())
            if name:
                found.append((m.start(), name))
    if "Launch" in text:
        found += [(m.start(), m.group(1)) for m in _LAUNCH_CALL.finditer(text)]
    return [Location(name, rel, _line_of(text, offset)) for offset, name in sorted(found)]


def scan_source(rel: str, text: str) -> SourceRefs:
    refs = SourceRefs()
    if not any(hint in text for hint in _SOURCE_HINTS):
        return refs
    _collect_identifiers(refs, text)
    refs.kernels = [Location(m.group(1), rel, _line_of(text, m.start())) for m in _KERNEL.finditer(text)]
    refs.launches = _launches(rel, text)
    for m in _INCLUDE.finditer(text):
        header = m.group(1)
        library = next((lib for key, lib in HEADER_LIBRARIES.items() if header.startswith(key)), None)
        if library:
            refs.libraries[library] += 1
        elif header.startswith("cuda") or header in ("device_launch_parameters.h", "nvml.h"):
            refs.libraries["CUDA runtime"] += 1
    if any(hint in text for hint in _NAMESPACE_HINTS):
        refs.libraries.update(_NAMESPACE_LIBRARY[m.group(1)] for m in _NAMESPACES.finditer(text))
    for name, pattern in _CONSTRUCTS.items():
        if not any(hint in text for hint in _CONSTRUCT_HINTS[name]):
            continue
        for m in pattern.finditer(text):
            refs.constructs[name] += 1
            refs.construct_sites.append(Location(name, rel, _line_of(text, m.start())))
    for kind, line, _ in handwork.sites(text):
        refs.constructs[kind] += 1
        refs.construct_sites.append(Location(kind, rel, line))
    return refs
