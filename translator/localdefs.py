"""Find CUDA-looking names a project defines itself (its own copy of an enum, a compat macro).

Translating them would turn the project's definition into a clashing redefinition of
a HIP name, so they are left alone everywhere in the tree and reported as kept.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Container

ENUMERATOR = re.compile(r"(?:^|,)\s*(\w+)")
# ``#define __CUDACC__`` pretends to be nvcc; it is translated (to ``__HIPCC__``), never kept.
COMPILER_MACROS = frozenset({"__CUDACC__", "__NVCC__", "__CUDA_ARCH__", "__CUDACC_RTC__"})


@functools.lru_cache(maxsize=8)
def _patterns(candidates: str) -> tuple[re.Pattern[str], ...]:
    """Regexes that only succeed on definitions of candidate names, so they fail fast elsewhere."""
    name = rf"(?:{candidates})\w*"
    return (
        re.compile(rf"^[ \t]*#[ \t]*define[ \t]+({name})", re.MULTILINE),
        re.compile(rf"\b(?:struct|class|union)[ \t]+({name})\s*(?::[^{{;]*)?\{{"),
        re.compile(rf"\btypedef\b[^;{{}}]*?\b({name})\s*;"),
        re.compile(rf"\}}\s*({name})\s*;"),
    )


ENUM = re.compile(r"\benum\s+(?:class\s+|struct\s+)?(\w*)\s*(?::[^{;]*)?\{([^}]*)\}\s*(\w*)")


def defined_names(text: str, interesting: Container[str], candidates: str) -> set[str]:
    """Names in ``interesting`` that ``text`` defines; ``candidates`` is a regex prefix they all match."""
    define, record, typedef, typedef_tail = _patterns(candidates)
    found: set[str] = set(define.findall(text))
    if "struct" in text or "class" in text or "union" in text:
        found.update(record.findall(text))
    if "typedef" in text:
        found.update(typedef.findall(text))
        found.update(typedef_tail.findall(text))
    if "enum" in text:
        for match in ENUM.finditer(text):
            found.update((match.group(1), match.group(3)))
            found.update(ENUMERATOR.findall(match.group(2)))
    return {name for name in found if name and name in interesting and name not in COMPILER_MACROS}
