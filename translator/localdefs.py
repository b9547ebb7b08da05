"""Find CUDA-looking names a project defines itself (its own copy of an enum, a compat macro).

Translating them would turn the project's definition into a clashing redefinition of
a HIP name, so they are left alone everywhere in the tree and reported as kept.
"""
from __future__ import annotations

import re
from collections.abc import Container

ENUMERATOR = re.compile(r"(?:^|,)\s*(\w+)")
# ``#define __CUDACC__`` pretends to be nvcc; it is translated (to ``__HIPCC__``), never kept.
COMPILER_MACROS = frozenset({"__CUDACC__", "__NVCC__", "__CUDA_ARCH__", "__CUDACC_RTC__"})


# Any defined name; only those in ``interesting`` are kept. (Embedding the 3,000-character candidate
# pattern here made these slower to compile, at every start, than to run.)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.MULTILINE)
RECORD = re.compile(r"\b(?:struct|class|union)[ \t]+(\w+)\s*(?::[^{;]*)?\{")
TYPEDEF = re.compile(r"\btypedef\b[^;{}]*?\b(\w+)\s*;")
TYPEDEF_TAIL = re.compile(r"\}\s*(\w+)\s*;")


ENUM = re.compile(r"\benum\s+(?:class\s+|struct\s+)?(\w*)\s*(?::[^{;]*)?\{([^}]*)\}\s*(\w*)")


def defined_names(text: str, interesting: Container[str]) -> set[str]:
    """Names in ``interesting`` that ``text`` defines."""
    found: set[str] = set(DEFINE.findall(text))
    if "struct" in text or "class" in text or "union" in text:
        found.update(RECORD.findall(text))
    if "typedef" in text:
        found.update(TYPEDEF.findall(text))
        found.update(TYPEDEF_TAIL.findall(text))
    if "enum" in text:
        for match in ENUM.finditer(text):
            found.update((match.group(1), match.group(3)))
            found.update(ENUMERATOR.findall(match.group(2)))
    return {name for name in found if name and name in interesting and name not in COMPILER_MACROS}
